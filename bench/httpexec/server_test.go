package httpexec_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// wait bounds every wait on a channel in these tests.
const wait = 5 * time.Second

// rawServer listens on 127.0.0.1 and runs serve on each connection it
// accepts, in its own goroutine; serve may leave the connection open. It
// returns the http URL of the listener. The listener and the connections
// close at the end of the test, which waits for every serve to return.
func rawServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// readRequest reads one request from br with net/http's parser, body
// included, and what it came as on the wire (raw grows by the bytes
// read, through the tee that feeds br).
func readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, nil, err
	}
	return req, body, nil
}

// teeReader is a bufio.Reader over c that also keeps what it read in raw.
func teeReader(c net.Conn, raw *bytes.Buffer) *bufio.Reader {
	return bufio.NewReader(io.TeeReader(c, raw))
}

// recv takes one value from ch, failing the test after wait.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("nothing after %v", wait)
		panic("unreachable")
	}
}
