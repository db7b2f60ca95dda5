//go:build !race

package httpload_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/httpload"
)

// TestServerDies: the server goes away in the middle of an attack: what
// it answered counts, every later request is an error (not canceled, not
// lost), and the attack ends on time.
func TestServerDies(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		var n atomic.Int64
		enough := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			if n.Add(1) == 20 {
				close(enough)
			}
		}))
		defer srv.Close()
		type result struct {
			res httpload.Result
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := httpload.Attack(context.Background(), httpload.Config{URL: srv.URL, Workload: constant(500, 300*time.Millisecond),
				Engine: engine, Policy: algorithms.Policy{Limit: 10, Window: time.Second}})
			done <- result{res, err}
		}()
		<-enough
		srv.Listener.Close()
		srv.CloseClientConnections()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		run := r.res.Run
		// The 20th handler signals before its response is written, and
		// others may still be flushing theirs (or a 21st starting) when
		// the connections close: about 20 are answered, not exactly.
		if run.Offered != 150 || run.Admitted == 0 || run.Admitted > 100 || run.Errors != run.Offered-run.Admitted {
			t.Errorf("offered %d, admitted %d, errors %d %v", run.Offered, run.Admitted, run.Errors, run.ErrorKinds)
		}
		if run.ErrorKinds[httpload.KindCanceled] != 0 || run.ErrorKinds[httpload.KindTimeout] != 0 {
			t.Errorf("error kinds %v: want the server's going, not cancels or timeouts", run.ErrorKinds)
		}
	})
}

// TestBigBodies: a request body larger than a socket buffer takes more
// than one write, a response body larger than a read buffer more than one
// read.
func TestBigBodies(t *testing.T) {
	body := bytes.Repeat([]byte("b"), 4<<20)
	answer := strings.Repeat("a", 300<<10)
	var whole atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got, _ := io.Copy(io.Discard, r.Body); got == int64(len(body)) {
			whole.Add(1)
		}
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	forEngines(t, func(t *testing.T, engine string) {
		whole.Store(0)
		res := attack(t, httpload.Config{URL: srv.URL, Method: http.MethodPost, Body: body, Workload: constant(100, 100*time.Millisecond), Engine: engine})
		if run := res.Run; run.Admitted != 10 || run.Errors != 0 || whole.Load() != 10 {
			t.Errorf("admitted %d, errors %v, %d whole bodies received", run.Admitted, run.ErrorKinds, whole.Load())
		}
	})
}

// serveRaw answers every request on every connection with reply, then
// closes the connection when closeAfter. It returns the URL and how many
// connections it accepted.
func serveRaw(t *testing.T, reply string, closeAfter bool) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if _, err := io.WriteString(c, reply); err != nil || closeAfter {
						return
					}
				}
			})
		}
	})
	return "http://" + ln.Addr().String() + "/", &accepted
}

// TestRawResponses: framings net/http servers do not send: a body that
// runs to the end of the connection, HTTP/1.0 keep-alive, and garbage.
func TestRawResponses(t *testing.T) {
	toEOF, toEOFConns := serveRaw(t, "HTTP/1.1 200 OK\r\n\r\nthe body runs to the end", true)
	keep, keepConns := serveRaw(t, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", false)
	garbage, _ := serveRaw(t, "SSH-2.0-OpenSSH_9.6\r\n", false)
	forEngines(t, func(t *testing.T, engine string) {
		toEOFConns.Store(0)
		res := attack(t, httpload.Config{URL: toEOF, Workload: constant(200, 100*time.Millisecond), Engine: engine})
		if run := res.Run; run.Admitted != 20 || run.Errors != 0 || toEOFConns.Load() != 20 {
			t.Errorf("to EOF: admitted %d, errors %v over %d connections", run.Admitted, run.ErrorKinds, toEOFConns.Load())
		}
		keepConns.Store(0)
		res = attack(t, httpload.Config{URL: keep, Workload: constant(200, 100*time.Millisecond), Engine: engine})
		if run := res.Run; run.Admitted != 20 || run.Errors != 0 || keepConns.Load() > 5 {
			t.Errorf("1.0 keep-alive: admitted %d, errors %v over %d connections", run.Admitted, run.ErrorKinds, keepConns.Load())
		}
		res = attack(t, httpload.Config{URL: garbage, Workload: constant(200, 50*time.Millisecond), Engine: engine})
		if run := res.Run; run.Errors != 10 || run.ErrorKinds[httpload.KindOther] != 10 {
			t.Errorf("garbage: errors %v", run.ErrorKinds)
		}
	})
}

// TestEngineConfig: the engine is checked and reported.
func TestEngineConfig(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, cfg := range []httpload.Config{
		{URL: "http://127.0.0.1:1/", Engine: "threads"},
		{URL: srv.URL, Engine: httpload.EngineEpoll, Insecure: true},
		{URL: "http://127.0.0.1:1/", Engine: httpload.EngineEpoll, Client: httpload.ClientStd},
	} {
		cfg.Workload = constant(1, time.Second)
		if _, err := httpload.Attack(context.Background(), cfg); err == nil || errors.Is(err, context.Canceled) {
			t.Errorf("%s with %q to %s: %v, want an error", cfg.Engine, cfg.Client, cfg.URL, err)
		}
	}
}
