//go:build !race

package httpload

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// want is what reading one response should give.
type want struct {
	status     int
	keepAlive  bool
	retryAfter int32
	policy     string
	err        error // errors.Is; nil for none
}

// next follows a kept-alive response on the wire in responseCases: it
// must still be readable after the first.
const next = "HTTP/1.1 204 No Content\r\n\r\n"

// responseCases are responses on the wire, for both parsers.
var responseCases = []struct {
	name   string
	wire   string
	noBody bool // HEAD
	want   want
}{
	// The framing the middleware and net/http servers use.
	{"content length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n" + next, false,
		want{status: 200, keepAlive: true, retryAfter: noRetryAfter}},
	// Header names in any case; the policy is kept when asked for.
	{"429 with fields", "HTTP/1.1 429 Too Many Requests\r\nretry-after: 30\r\nRATELIMIT-POLICY: \"default\";q=2;w=60\r\ncontent-length: 0\r\n\r\n" + next, false,
		want{status: 429, keepAlive: true, retryAfter: 30, policy: `"default";q=2;w=60`}},
	// Chunks, an extension and a trailer.
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\n" + next, false,
		want{status: 200, keepAlive: true, retryAfter: noRetryAfter}},
	// A HEAD response announces a length it does not send.
	{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + next, true,
		want{status: 200, keepAlive: true, retryAfter: noRetryAfter}},
	// 204 and 304 have no body whatever their fields say.
	{"304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n" + next, false,
		want{status: 304, keepAlive: true, retryAfter: noRetryAfter}},
	// An interim 100 Continue, then the response.
	{"interim", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi" + next, false,
		want{status: 201, keepAlive: true, retryAfter: noRetryAfter}},
	// The server says it closes.
	{"connection close", "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false,
		want{status: 503, retryAfter: noRetryAfter}},
	// HTTP/1.0 closes unless it says keep-alive.
	{"1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false, want{status: 200, retryAfter: noRetryAfter}},
	{"1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n" + next, false,
		want{status: 200, keepAlive: true, retryAfter: noRetryAfter}},
	// No length: the body runs to the end of the connection.
	{"to EOF", "HTTP/1.1 200 OK\r\n\r\nall of this", false, want{status: 200, retryAfter: noRetryAfter}},
	// A status line without a reason phrase.
	{"no reason", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n" + next, false, want{status: 404, keepAlive: true, retryAfter: noRetryAfter}},
	// Retry-After that is not a number of seconds nor a date.
	{"bad Retry-After", "HTTP/1.1 429 x\r\nRetry-After: soon\r\nContent-Length: 0\r\n\r\n" + next, false,
		want{status: 429, keepAlive: true, retryAfter: badRetryAfter}},
	// Broken responses.
	{"not HTTP", "SSH-2.0-OpenSSH_9.6\r\n", false, want{err: errMalformed}},
	{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", false, want{err: errMalformed}},
	{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", false, want{err: errMalformed}},
	{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, want{err: io.ErrUnexpectedEOF}},
	{"cut in the header", "HTTP/1.1 200 OK\r\nContent-Len", false, want{err: io.ErrUnexpectedEOF}},
	{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, want{err: errMalformed}},
	{"header line too long", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", readBufSize) + "\r\n\r\n", false, want{err: errMalformed}},
	{"nothing", "", false, want{err: io.EOF}},
}

func TestReadResponse(t *testing.T) {
	for _, tc := range responseCases {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tc.wire), readBufSize)
			resp, keepAlive, _, err := readResponse(br, tc.noBody, true)
			if tc.want.err != nil {
				if !errors.Is(err, tc.want.err) {
					t.Fatalf("err %v, want %v", err, tc.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{status: resp.status, keepAlive: keepAlive, retryAfter: resp.retryAfter, policy: resp.policy}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if keepAlive { // the framing ended exactly at the next response
				if resp, _, _, err := readResponse(br, false, false); err != nil || resp.status != 204 {
					t.Errorf("the next response: %d, %v", resp.status, err)
				}
			}
		})
	}
}

// TestReadResponseStarted: a failure before any byte of a response is
// what lets a request be retried on a new connection.
func TestReadResponseStarted(t *testing.T) {
	_, _, started, err := readResponse(bufio.NewReader(strings.NewReader("")), false, false)
	if started || !errors.Is(err, io.EOF) {
		t.Errorf("empty: started %v, %v", started, err)
	}
	_, _, started, _ = readResponse(bufio.NewReader(strings.NewReader("HTTP/1.1 200")), false, false)
	if !started {
		t.Error("a partial status line: not started")
	}
}

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in     string
		limit  int64
		window time.Duration
		ok     bool
	}{
		{`"default";q=100;w=60`, 100, time.Minute, true},            // what httplimit sends
		{`burst;q=5;w=1, day;q=1000;w=86400`, 5, time.Second, true}, // the first of a list, a token name
		{`"a\"b";w=2;q=7`, 7, 2 * time.Second, true},                // escaped quote, parameters in any order
		{`"x";q=10;w=1;qu="requests"`, 10, time.Second, true},       // other parameters ignored
		{`"x";q=10`, 0, 0, false},                                   // no window
		{`"x";q=0;w=1`, 0, 0, false},                                // a zero quota
		{`"x";q=-1;w=1`, 0, 0, false},
		{`"x";q=1.5;w=1`, 0, 0, false},
		{`"unterminated;q=1;w=1`, 0, 0, false},
		{``, 0, 0, false},
	} {
		p, ok := ParsePolicy(tc.in)
		if ok != tc.ok || p.Limit != tc.limit || p.Window != tc.window || ok && p.Burst != p.Limit {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %d per %v, %v", tc.in, p, ok, tc.limit, tc.window, tc.ok)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{"0", 0},
		{"30", 30},
		{"999999999999", 86400}, // capped at a day
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0}, // past: now
		{"-1", badRetryAfter},
		{"1.5", badRetryAfter},
		{"", badRetryAfter},
	} {
		if got := parseRetryAfter([]byte(tc.in), now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in, name, value string
		ok              bool
	}{
		{"X-API-Key: secret", "X-Api-Key", "secret", true},
		{"authorization:Bearer a:b", "Authorization", "Bearer a:b", true}, // the first colon splits
		{"X-Empty:", "X-Empty", "", true},
		{"no colon", "", "", false},
		{": value", "", "", false},
		{"Bad Name: 1", "", "", false},
		{"X-Inject: a\r\nHost: evil", "", "", false},
	} {
		name, value, err := ParseHeader(tc.in)
		if (err == nil) != tc.ok || name != tc.name || value != tc.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v", tc.in, name, value, err)
		}
		if err != nil && !errors.Is(err, ErrBadRequest) {
			t.Errorf("ParseHeader(%q): %v does not wrap ErrBadRequest", tc.in, err)
		}
	}
}

// TestWire: the bytes the fast client sends.
func TestWire(t *testing.T) {
	cfg := Config{
		URL: "http://127.0.0.1:8080/api/v1?x=1&y=2", Method: "POST", Body: []byte(`{"a":1}`), KeyHeader: "x-api-key",
		Header: http.Header{"Host": {"api.example"}, "Accept": {"application/json"}, "X-Api-Key": {"ignored"}},
	}
	tg, err := newTarget(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	fc := newFastClient(tg, time.Second)
	got := string(fc.build(nil, "k7"))
	want := "POST /api/v1?x=1&y=2 HTTP/1.1\r\nHost: api.example\r\nAccept: application/json\r\nUser-Agent: " + UserAgent + "\r\n" +
		"X-Api-Key: k7\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
	if got != want {
		t.Errorf("request:\n%q\nwant\n%q", got, want)
	}
	if tg.addr != "127.0.0.1:8080" {
		t.Errorf("dials %q", tg.addr)
	}
	get, _ := newTarget(&Config{URL: "http://[::1]/"})
	if got := string(newFastClient(get, time.Second).build(nil, "k0")); got != "GET / HTTP/1.1\r\nHost: [::1]\r\nUser-Agent: "+UserAgent+"\r\n\r\n" || get.addr != "[::1]:80" {
		t.Errorf("GET: %q to %q", got, get.addr)
	}
	for _, bad := range []Config{
		{URL: "http://user:pw@host/"},
		{URL: "http:///path"},
		{URL: "http://h/", Method: "GET /"},
		{URL: "http://h/", Header: http.Header{"Content-Length": {"3"}}},
		{URL: "http://h/", Header: http.Header{"X": {"a\nb"}}},
		{URL: "http://h/", KeyHeader: "X Key"},
	} {
		if _, err := newTarget(&bad); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: %v, want ErrBadRequest", bad, err)
		}
	}
}
