package httpexec_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// TestConcurrent: goroutines share a Client; each request gets its own
// answer, on at most Connections connections.
func TestConcurrent(t *testing.T) {
	var read atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read.Add(1)
		w.Header().Set("Retry-After", r.Header.Get("X-Key")) // the answer names its request
	}))
	defer srv.Close()
	for _, client := range clients {
		t.Run(client, func(t *testing.T) {
			read.Store(0)
			c, err := httpexec.New(httpexec.Config{URL: srv.URL, Client: client, KeyHeader: "X-Key", Connections: 3, Timeout: wait})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const goroutines, each = 8, 40
			var (
				wg       sync.WaitGroup
				attempts atomic.Int64
			)
			for g := range goroutines {
				wg.Go(func() {
					for i := range each {
						key := g*1000 + i
						r := c.Do(strconv.Itoa(key), false)
						attempts.Add(int64(r.Attempts))
						if r.Status != 200 || r.Kind != httpexec.None || r.RetryAfter != int32(key) {
							t.Errorf("request %d: %+v", key, r)
							return
						}
					}
				})
			}
			wg.Wait()
			if got := c.Dials(); got < 1 || got > 3 {
				t.Errorf("%d dials, want 1 to 3", got)
			}
			if attempts.Load() != goroutines*each || read.Load() != goroutines*each {
				t.Errorf("%d written, %d read; want %d", attempts.Load(), read.Load(), goroutines*each)
			}
		})
	}
}

// TestEveryIdleConnectionClosed: when the server closes every kept
// connection at once (a restart, an idle timeout after a burst), the next
// request goes through them, sending nothing on any, and on a new one.
func TestEveryIdleConnectionClosed(t *testing.T) {
	const n = 4
	var (
		mu       sync.Mutex
		conns    []net.Conn
		inFlight sync.WaitGroup
		read     atomic.Int64
	)
	inFlight.Add(n)
	url := rawServer(t, func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			if read.Add(1) <= n {
				inFlight.Done()
				inFlight.Wait() // the first n requests are answered together: n connections
			}
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	c, err := httpexec.New(httpexec.Config{URL: url, Connections: n, Timeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r := c.Do("", false); r.Status != 200 {
				t.Errorf("%+v", r)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	for _, conn := range conns {
		conn.Close()
	}
	mu.Unlock()
	if r := c.Do("", false); r.Status != 200 || r.Attempts != 1 {
		t.Errorf("after the server closed its connections: %+v", r)
	}
	if got := c.Dials(); got != n+1 {
		t.Errorf("%d dials, want %d", got, n+1)
	}
	if got := read.Load(); got != n+1 {
		t.Errorf("the server read %d requests, want %d", got, n+1)
	}
}

// TestHTTPS: https goes through net/http, HTTP/2 when the server offers
// it; the certificate is checked unless Insecure.
func TestHTTPS(t *testing.T) {
	proto := make(chan int, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto <- r.ProtoMajor
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{}
	srv.StartTLS()
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		insecure  bool
		wantKind  httpexec.Kind
		wantProto int // 0: no request reached the handler
	}{
		// The test server's certificate is self-signed.
		{name: "verified", wantKind: httpexec.Other},
		// Over HTTP/2.
		{name: "insecure", insecure: true, wantProto: 2},
	} {
		c, err := httpexec.New(httpexec.Config{URL: srv.URL, Insecure: tc.insecure, Timeout: wait})
		if err != nil {
			t.Fatal(err)
		}
		r := c.Do("", false)
		if r.Kind != tc.wantKind || tc.wantProto != 0 && (r.Status != 429 || r.Attempts != 1) {
			t.Errorf("%s: %+v", tc.name, r)
		}
		if tc.wantProto != 0 {
			if p := recv(t, proto); p != tc.wantProto {
				t.Errorf("%s: HTTP/%d, want HTTP/%d", tc.name, p, tc.wantProto)
			}
		}
		c.Close()
	}
}
