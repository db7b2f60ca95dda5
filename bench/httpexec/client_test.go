package httpexec_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// clients are the clients every test runs, by Config.Client.
var clients = []string{httpexec.ClientFast, httpexec.ClientStd}

// got is one request as a test server read it.
type got struct {
	req  *http.Request
	body string
	raw  string // the bytes on the wire
}

// recordingServer answers every request 200 and sends what it read on
// the returned channel.
func recordingServer(t *testing.T) (string, <-chan got) {
	ch := make(chan got, 16)
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		var raw bytes.Buffer
		br := teeReader(c, &raw)
		for {
			req, body, err := readRequest(br)
			if err != nil {
				return
			}
			// The reader may hold bytes of a next request; none come
			// before this one is answered.
			ch <- got{req: req, body: string(body), raw: raw.String()}
			raw.Reset()
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	return url, ch
}

// TestRequest: what each client sends for a Config.
func TestRequest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		method    string // Config.Method
		path      string // after the host in Config.URL
		header    http.Header
		body      string
		keyHeader string
		wantURI   string            // the request target
		wantHost  string            // "" for the URL's host
		wantField map[string]string // header fields as the server parsed them; "" for absent
		wantRaw   []string          // on the wire, %s for the key
		wantNot   []string          // never on the wire
	}{
		// The defaults: GET, our User-Agent, no body.
		{name: "defaults", path: "/p?q=1", wantURI: "/p?q=1",
			wantField: map[string]string{"User-Agent": httpexec.UserAgent, "Content-Length": ""},
			wantRaw:   []string{"GET /p?q=1 HTTP/1.1\r\n"}},
		// The path and query go as the URL has them, not cleaned up.
		{name: "path as given", path: "/a//b/../c?x=1&y=%20z", wantURI: "/a//b/../c?x=1&y=%20z"},
		// A POST with a body, a Host of its own, header names as given
		// (two values of one), and a key header that replaces a Header
		// entry of its name whatever its case.
		{name: "post", method: "POST", path: "/api", body: `{"a":1}`, keyHeader: "x-api-key",
			header:  http.Header{"Host": {"api.example"}, "x-lower": {"v1", "v2"}, "X-Api-Key": {"dropped"}, "Accept": {"application/json"}},
			wantURI: "/api", wantHost: "api.example",
			wantField: map[string]string{"Content-Length": "7", "Accept": "application/json", "Content-Type": ""},
			wantRaw:   []string{"POST /api HTTP/1.1\r\n", "\r\nx-lower: v1\r\n", "\r\nx-lower: v2\r\n", "\r\nx-api-key: %s\r\n"},
			wantNot:   []string{"dropped"}},
		// A POST without a body says so.
		{name: "empty post", method: "POST", path: "/", wantURI: "/", wantField: map[string]string{"Content-Length": "0"}},
		// A User-Agent of the caller's replaces ours.
		{name: "user agent", path: "/", header: http.Header{"User-Agent": {"probe/1"}}, wantURI: "/",
			wantField: map[string]string{"User-Agent": "probe/1"}},
		// An empty one sends none.
		{name: "no user agent", path: "/", header: http.Header{"User-Agent": {""}}, wantURI: "/",
			wantField: map[string]string{"User-Agent": ""}, wantNot: []string{"User-Agent", "fasthttp", "Go-http-client"}},
		// HEAD, whose response has no body.
		{name: "head", method: "HEAD", path: "/h", wantURI: "/h"},
	} {
		for _, client := range clients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				url, reqs := recordingServer(t)
				c, err := httpexec.New(httpexec.Config{URL: url + tc.path, Method: tc.method, Header: tc.header,
					Body: []byte(tc.body), KeyHeader: tc.keyHeader, Client: client, Timeout: wait})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				for _, key := range []string{"k1", "k22"} {
					if r := c.Do(key, false); r.Status != 200 || r.Attempts != 1 {
						t.Fatalf("%+v", r)
					}
					g := recv(t, reqs)
					method := tc.method
					if method == "" {
						method = "GET"
					}
					host := tc.wantHost
					if host == "" {
						host = strings.TrimPrefix(url, "http://")
					}
					if g.req.Method != method || g.req.RequestURI != tc.wantURI || g.req.Host != host || g.body != tc.body {
						t.Errorf("%s %s, Host %s, body %q; want %s %s, %s, %q", g.req.Method, g.req.RequestURI, g.req.Host, g.body,
							method, tc.wantURI, host, tc.body)
					}
					if tc.keyHeader != "" {
						if v := g.req.Header.Values(tc.keyHeader); len(v) != 1 || v[0] != key {
							t.Errorf("key header %q, want [%s]", v, key)
						}
					}
					for name, want := range tc.wantField {
						if v := g.req.Header.Get(name); v != want {
							t.Errorf("%s: %q, want %q", name, v, want)
						}
					}
					for _, s := range tc.wantRaw {
						if s = strings.ReplaceAll(s, "%s", key); !strings.Contains(g.raw, s) {
							t.Errorf("%q is not in %q", s, g.raw)
						}
					}
					for _, s := range tc.wantNot {
						if strings.Contains(g.raw, s) {
							t.Errorf("%q is in %q", s, g.raw)
						}
					}
				}
				if got := c.Dials(); got != 1 {
					t.Errorf("%d dials for 2 requests, want 1", got)
				}
			})
		}
	}
}

// TestResponse: what each client reads of responses on the wire, and
// that it reads them whole: the next request on a kept connection gets
// the next response.
func TestResponse(t *testing.T) {
	const next = "HTTP/1.1 204 No Content\r\n\r\n"
	for _, tc := range []struct {
		name   string
		method string // Config.Method; "" for GET
		wire   string // the first response
		close  bool   // the server closes after wire
		// wantKept: the second request goes on the same connection.
		wantKept       bool
		wantStatus     int
		wantRetryAfter int32
		wantPolicy     string
		wantQuota      httpexec.Quota // the zero Quota stands for NoQuota
	}{
		// The framing most servers use.
		{name: "content length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n",
			wantKept: true, wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		// Field names in any case.
		{name: "429 with fields", wire: "HTTP/1.1 429 Too Many Requests\r\nretry-after: 30\r\nRATELIMIT-POLICY: \"default\";q=2;w=60\r\n" +
			"ratelimit: \"default\";r=0\r\nX-RateLimit-Remaining: 5\r\nx-ratelimit-reset: 29\r\ncontent-length: 0\r\n\r\n",
			wantKept: true, wantStatus: 429, wantRetryAfter: 30, wantPolicy: `"default";q=2;w=60`, wantQuota: httpexec.Quota{Remaining: 0, ResetAfter: 29 * time.Second}},
		// Chunks, an extension and a trailer.
		{name: "chunked", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\n",
			wantKept: true, wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		// A body larger than the read buffer.
		{name: "large body", wire: "HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n" + strings.Repeat("x", 300000),
			wantKept: true, wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		// A HEAD response announces a length it does not send.
		{name: "HEAD", method: "HEAD", wire: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
			wantKept: true, wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		// 304 has no body whatever its fields say.
		{name: "304", wire: "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
			wantKept: true, wantStatus: 304, wantRetryAfter: httpexec.NoRetryAfter},
		// An interim 100 Continue, then the response.
		{name: "interim", wire: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi",
			wantKept: true, wantStatus: 201, wantRetryAfter: httpexec.NoRetryAfter},
		// The server says it closes.
		{name: "connection close", wire: "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", close: true,
			wantStatus: 503, wantRetryAfter: httpexec.NoRetryAfter},
		// HTTP/1.0 closes unless it says keep-alive.
		{name: "1.0", wire: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", close: true,
			wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		{name: "1.0 keep-alive", wire: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		// No length: the body runs to the end of the connection.
		{name: "to EOF", wire: "HTTP/1.1 200 OK\r\n\r\nall of this", close: true,
			wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
		// A status line without a reason phrase.
		{name: "no reason", wire: "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 404, wantRetryAfter: httpexec.NoRetryAfter},
		// Retry-After as an HTTP-date in the past: now.
		{name: "past date", wire: "HTTP/1.1 503 x\r\nRetry-After: Mon, 01 Jan 2001 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 503, wantRetryAfter: 0},
		// A date far ahead is capped at a day.
		{name: "far date", wire: "HTTP/1.1 503 x\r\nRetry-After: Fri, 31 Dec 9999 23:59:59 GMT\r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 503, wantRetryAfter: 86400},
		// Neither seconds nor a date.
		{name: "bad Retry-After", wire: "HTTP/1.1 429 x\r\nRetry-After: soon\r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 429, wantRetryAfter: httpexec.BadRetryAfter},
		// Present but empty: malformed, not absent.
		{name: "empty Retry-After", wire: "HTTP/1.1 429 x\r\nRetry-After: \r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 429, wantRetryAfter: httpexec.BadRetryAfter},
		// 40 KB of Set-Cookie and a Content-Security-Policy fit the read
		// buffer.
		{name: "big header", wire: "HTTP/1.1 200 OK\r\n" + strings.Repeat("Set-Cookie: c="+strings.Repeat("v", 4000)+"\r\n", 10) +
			"Content-Security-Policy: " + strings.Repeat("default-src 'self'; ", 200) + "\r\nContent-Length: 0\r\n\r\n",
			wantKept: true, wantStatus: 200, wantRetryAfter: httpexec.NoRetryAfter},
	} {
		for _, client := range clients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				var n atomic.Int64
				url := rawServer(t, func(c net.Conn) {
					defer c.Close()
					br := bufio.NewReader(c)
					for {
						if _, _, err := readRequest(br); err != nil {
							return
						}
						if n.Add(1) > 1 {
							fmt.Fprint(c, next)
							continue
						}
						fmt.Fprint(c, tc.wire)
						if tc.close {
							return
						}
					}
				})
				c, err := httpexec.New(httpexec.Config{URL: url, Method: tc.method, Client: client, Timeout: wait})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				r := c.Do("", true)
				if r.Status != tc.wantStatus || r.RetryAfter != tc.wantRetryAfter || r.Policy != tc.wantPolicy || r.Kind != httpexec.None || r.Err != nil {
					t.Errorf("%+v; want status %d, Retry-After %d, policy %q", r, tc.wantStatus, tc.wantRetryAfter, tc.wantPolicy)
				}
				wantQuota := tc.wantQuota
				if wantQuota == (httpexec.Quota{}) {
					wantQuota = httpexec.NoQuota
				}
				if r.Quota != wantQuota {
					t.Errorf("quota %+v, want %+v", r.Quota, wantQuota)
				}
				if r := c.Do("", false); r.Status != 204 || r.Kind != httpexec.None {
					t.Errorf("the next request: %+v", r)
				}
				wantDials := int64(2)
				if tc.wantKept {
					wantDials = 1
				}
				if got := c.Dials(); got != wantDials {
					t.Errorf("%d dials, want %d", got, wantDials)
				}
			})
		}
	}
}

// TestPolicyOnlyWhenAsked: Response.Policy is empty unless Do asks.
func TestPolicyOnlyWhenAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=5;w=1`)
	}))
	defer srv.Close()
	for _, client := range clients {
		c, err := httpexec.New(httpexec.Config{URL: srv.URL, Client: client, Timeout: wait})
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Do("", false); r.Status != 200 || r.Policy != "" {
			t.Errorf("%s, not asked: %+v", client, r)
		}
		if r := c.Do("", true); r.Status != 200 || r.Policy != `"default";q=5;w=1` {
			t.Errorf("%s, asked: %+v", client, r)
		}
		c.Close()
	}
}

// TestKeepAlive: bodies are read whole, so that one connection carries
// every request of a sequence, whatever the bodies' size and framing.
func TestKeepAlive(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.WriteHeader(http.StatusTooManyRequests) // no body
		case 1:
			fmt.Fprint(w, "ok") // with a length
		case 2:
			for range 20 { // chunked: flushed in parts
				fmt.Fprint(w, strings.Repeat("x", 5000))
				w.(http.Flusher).Flush()
			}
		case 3:
			w.Header().Set("Content-Length", "70000")
			fmt.Fprint(w, strings.Repeat("y", 70000))
		}
	}))
	defer srv.Close()
	for _, client := range clients {
		c, err := httpexec.New(httpexec.Config{URL: srv.URL, Client: client, Timeout: wait})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			if r := c.Do("", false); r.Kind != httpexec.None || r.Status != 200 && r.Status != 429 || r.Attempts != 1 {
				t.Fatalf("%s, request %d: %+v", client, i, r)
			}
		}
		if got := c.Dials(); got != 1 {
			t.Errorf("%s: %d dials for 40 requests in a row, want 1", client, got)
		}
		c.Close()
		if r := c.Do("", false); r.Kind != httpexec.None || c.Dials() != 2 {
			t.Errorf("%s: after Close, %+v and %d dials; want a new connection", client, r, c.Dials())
		}
		c.Close()
	}
}

// TestFailures: how requests fail, by Kind, and whether they were sent.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		// serve plays the server on each connection; nil: nothing listens.
		serve        func(c net.Conn)
		wantKind     httpexec.Kind
		wantAttempts int
	}{
		// A closed port.
		{name: "refused", wantKind: httpexec.Refused},
		// The server reads the request and closes.
		{name: "closed", serve: func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			c.Close()
		}, wantKind: httpexec.Closed, wantAttempts: 1},
		// The server reads the request and resets the connection.
		{name: "reset", serve: func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}, wantKind: httpexec.Reset, wantAttempts: 1},
		// A body cut short by the close.
		{name: "short body", serve: func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			c.Close()
		}, wantKind: httpexec.Closed, wantAttempts: 1},
		// Not HTTP.
		{name: "malformed", serve: func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			fmt.Fprint(c, "SSH-2.0-OpenSSH_9.6\r\n\r\n")
			c.Close()
		}, wantKind: httpexec.Other, wantAttempts: 1},
	} {
		for _, client := range clients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				var url string
				if tc.serve != nil {
					url = rawServer(t, tc.serve)
				} else {
					url = closedPort(t)
				}
				c, err := httpexec.New(httpexec.Config{URL: url, Client: client, Timeout: wait})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				r := c.Do("", false)
				if r.Kind != tc.wantKind || r.Attempts != tc.wantAttempts || r.Status != 0 || r.Err == nil {
					t.Errorf("%+v; want %v, %d attempts", r, tc.wantKind, tc.wantAttempts)
				}
				if got := httpexec.Classify(r.Err); got != r.Kind {
					t.Errorf("Classify(%v) = %v, Kind %v", r.Err, got, r.Kind)
				}
			})
		}
	}
}

// TestHeaderTooBig: a header block larger than fasthttp's read buffer
// fails the request; net/http takes up to 10 MB.
func TestHeaderTooBig(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\n"+strings.Repeat("X-Filler: "+strings.Repeat("v", 1000)+"\r\n", 100)+"Content-Length: 0\r\n\r\n")
		}
	})
	for _, tc := range []struct {
		client     string
		wantStatus int
		wantKind   httpexec.Kind
	}{
		// Over the 64 KB buffer.
		{client: httpexec.ClientFast, wantKind: httpexec.Other},
		// Within net/http's limit.
		{client: httpexec.ClientStd, wantStatus: 200},
	} {
		c, err := httpexec.New(httpexec.Config{URL: url, Client: tc.client, Timeout: wait})
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Do("", false); r.Status != tc.wantStatus || r.Kind != tc.wantKind {
			t.Errorf("%s: %+v, want %d %v", tc.client, r, tc.wantStatus, tc.wantKind)
		}
		c.Close()
	}
}

// closedPort returns the http URL of a port of 127.0.0.1 that nothing
// listens on (it did a moment ago).
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// TestBadKey: a key that would break the header is not sent.
func TestBadKey(t *testing.T) {
	url, reqs := recordingServer(t)
	for _, client := range clients {
		c, err := httpexec.New(httpexec.Config{URL: url, Client: client, KeyHeader: "X-Key", Timeout: wait})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"k\r\nX-Admin: 1", "k\n", "k\x00"} {
			if r := c.Do(key, false); r.Kind != httpexec.Other || !errors.Is(r.Err, httpexec.ErrBadRequest) || r.Attempts != 0 {
				t.Errorf("%s, key %q: %+v", client, key, r)
			}
		}
		if c.Dials() != 0 {
			t.Errorf("%s: dialed for a key not sent", client)
		}
		c.Close()
	}
	select {
	case g := <-reqs:
		t.Errorf("sent %q", g.raw)
	default:
	}
}
