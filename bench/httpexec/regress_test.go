package httpexec_test

import (
	"bufio"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// TestNoSilentResend: a request written on a kept connection that the
// server reads and then drops, unanswered, is not written again behind the
// caller's back; and when net/http does write it again, Attempts says so.
// The server answers the first request on each connection, then reads the
// next and closes. However the client fails or retries, the requests the
// server read must equal the sum of Attempts; with fasthttp every dropped
// request is one error and nothing is written twice.
func TestNoSilentResend(t *testing.T) {
	for _, tc := range []struct {
		name, client, method string
		// resent: the client writes a dropped request again on a new
		// connection (net/http does for a replayable request).
		resent bool
	}{
		// fasthttp would retry a GET on its own; not here.
		{name: "fasthttp GET", client: httpexec.ClientFast, method: "GET"},
		// A POST with a body is never retried either.
		{name: "fasthttp POST", client: httpexec.ClientFast, method: "POST"},
		// net/http writes a GET again: counted in Attempts.
		{name: "net/http GET", client: httpexec.ClientStd, method: "GET", resent: true},
		// net/http does not write a POST with a body again.
		{name: "net/http POST", client: httpexec.ClientStd, method: "POST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int64 // requests the server read
			url := rawServer(t, func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					if _, _, err := readRequest(br); err != nil {
						return
					}
					read.Add(1)
					if n > 0 {
						return // the second request on a connection: dropped
					}
					fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			})
			c, err := httpexec.New(httpexec.Config{URL: url, Method: tc.method, Body: []byte("payload"), Client: tc.client, Timeout: wait})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const requests = 7
			attempts, errs, answered := 0, 0, 0
			for i := range requests {
				r := c.Do("", false)
				attempts += r.Attempts
				switch {
				case r.Kind == httpexec.None && r.Status == 200:
					answered++
				case r.Kind == httpexec.Closed && r.Status == 0:
					errs++
				default:
					t.Errorf("request %d: %+v", i, r)
				}
				if r.Attempts < 1 || r.Attempts > 1 && !tc.resent {
					t.Errorf("request %d: written %d times", i, r.Attempts)
				}
			}
			if got := read.Load(); got != int64(attempts) {
				t.Errorf("the server read %d requests, the client counts %d written", got, attempts)
			}
			if tc.resent {
				// Each request after the first was dropped once, then
				// answered on a new connection.
				if errs != 0 || attempts != 2*requests-1 {
					t.Errorf("%d errors, %d written; want 0 and %d", errs, attempts, 2*requests-1)
				}
				return
			}
			// Answered on a new connection, dropped on it when kept: one
			// error each, and no request written twice.
			if answered != (requests+1)/2 || errs != requests/2 || attempts != requests {
				t.Errorf("%d answered, %d errors, %d written; want %d, %d, %d", answered, errs, attempts, (requests+1)/2, requests/2, requests)
			}
		})
	}
}

// TestUnsolicitedResponse: a response the server sends on an idle kept
// connection (nginx and others send "408 Request Timeout" before closing
// one) is never taken for the answer to the next request. The server
// answers the first request on its first connection, then writes a 408
// on it; the client's next request must be answered by a new connection,
// and nothing may be written on the old one.
func TestUnsolicitedResponse(t *testing.T) {
	const unsolicited = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	for _, tc := range []struct {
		name, client string
		// late: the 408 comes once the client has its response, on the
		// idle connection; else in the same write as the response, so
		// that the client reads both at once.
		late bool
		// then is what the server does after the 408: "close", "shut"
		// (shut its writing side but read on) or "keep" (leave it open
		// and read on).
		then string
		// waitDrop: wait for the client to close the connection before
		// sending the next request. net/http reads an idle connection in
		// the background and drops it on a 408; a request written in the
		// microseconds before it notices gets the 408, a race no test can
		// win, so this one waits for the drop it checks.
		waitDrop bool
	}{
		// What nginx does at its idle timeout: a 408, then close.
		{name: "fasthttp late close", client: httpexec.ClientFast, late: true, then: "close"},
		// The server reads on after the 408: a request written on the
		// connection would be read, and answered by the 408.
		{name: "fasthttp late shut", client: httpexec.ClientFast, late: true, then: "shut"},
		// A 408 on a connection left open is as stale.
		{name: "fasthttp late keep", client: httpexec.ClientFast, late: true, then: "keep"},
		// The 408 read with the response, left in the reader.
		{name: "fasthttp early keep", client: httpexec.ClientFast, then: "keep"},
		{name: "fasthttp early close", client: httpexec.ClientFast, then: "close"},
		// net/http drops the connection itself.
		{name: "net/http late shut", client: httpexec.ClientStd, late: true, then: "shut", waitDrop: true},
		{name: "net/http early keep", client: httpexec.ClientStd, then: "keep", waitDrop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answered := make(chan struct{}, 1)      // the client has the first response
			sent := make(chan struct{}, 1)          // the 408 was written
			dropped := make(chan int, 1)            // the client closed the connection of the 408: requests read on it after
			var read, readAfter, conns atomic.Int64 // requests read; read after a 408; connections
			const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
			url := rawServer(t, func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				if conns.Add(1) > 1 { // the next connections answer every request
					for {
						if _, _, err := readRequest(br); err != nil {
							return
						}
						read.Add(1)
						fmt.Fprint(c, ok)
					}
				}
				if _, _, err := readRequest(br); err != nil {
					return
				}
				read.Add(1)
				if tc.late {
					fmt.Fprint(c, ok)
					select {
					case <-answered:
					case <-time.After(wait):
						return
					}
					fmt.Fprint(c, unsolicited)
				} else {
					fmt.Fprint(c, ok+unsolicited)
				}
				switch tc.then {
				case "close":
					c.Close()
					sent <- struct{}{}
					return
				case "shut":
					c.(*net.TCPConn).CloseWrite()
				}
				sent <- struct{}{}
				n := 0
				for {
					if _, _, err := readRequest(br); err != nil {
						break
					}
					n++
					readAfter.Add(1)
				}
				dropped <- n
			})
			c, err := httpexec.New(httpexec.Config{URL: url, Client: tc.client, Timeout: wait})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if r := c.Do("", false); r.Status != 200 {
				t.Fatalf("first request: %+v", r)
			}
			answered <- struct{}{}
			recv(t, sent)
			if tc.waitDrop {
				if n := recv(t, dropped); n != 0 {
					t.Fatalf("%d requests read after the 408", n)
				}
			}
			r := c.Do("", false)
			if r.Status != 200 || r.Kind != httpexec.None || r.Attempts != 1 {
				t.Errorf("second request: %+v, want 200 from a new connection, written once", r)
			}
			if got := c.Dials(); got != 2 {
				t.Errorf("%d dials, want 2", got)
			}
			if got := read.Load(); got != 2 {
				t.Errorf("the server answered %d requests, want 2", got)
			}
			if got := readAfter.Load(); got != 0 {
				t.Errorf("%d requests were written after a 408", got)
			}
		})
	}
}
