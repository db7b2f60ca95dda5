//go:build !race

package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/probe/corpus"
)

// Every test here runs `ratebench serve` through env.main, on 127.0.0.1
// and a port the kernel picks, and talks to it over loopback.

// server is a `ratebench serve` running in the test.
type server struct {
	url            string // http://127.0.0.1:PORT
	stdout, stderr *corpus.SyncBuffer
	cancel         context.CancelFunc
	code           chan int
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// startServe runs `ratebench serve -addr 127.0.0.1:0 args...` and waits
// for its first log line, which names the port. The server is stopped at
// the end of the test if the test has not stopped it.
func startServe(t *testing.T, args ...string) *server {
	t.Helper()
	return startServeWrapped(t, nil, args...)
}

// startServeWrapped is startServe with the server's limiter wrapped by
// wrap (nil: not wrapped).
func startServeWrapped(t *testing.T, wrap func(algorithms.Limiter) algorithms.Limiter, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &corpus.SyncBuffer{}, stderr: &corpus.SyncBuffer{}, cancel: cancel, code: make(chan int, 1)}
	argv := append([]string{"serve", "-addr", "127.0.0.1:0"}, args...)
	e := &env{stdout: s.stdout, stderr: s.stderr, args: append([]string{"ratebench"}, argv...), wrapLimiter: wrap}
	go func() { s.code <- e.main(ctx, argv) }()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if m := listening.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			break
		}
		select {
		case code := <-s.code:
			t.Fatalf("serve exited %d before listening: %s", code, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not say where it listens: %q", s.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop cancels the server's context (what main makes of SIGINT) and
// returns its exit status and its totals line; only the first call stops.
func (s *server) stop(t *testing.T) (int, string) {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.code:
		s.code <- code // for a later call
		return code, s.stdout.String()
	case <-time.After(6 * time.Second):
		t.Fatal("serve still running 6s after its context was cancelled")
	}
	return 0, ""
}

// totals parses the totals line: admitted and rejected.
func totals(t *testing.T, out string) (admitted, rejected int64) {
	t.Helper()
	m := regexp.MustCompile(`totals: admitted (\d+) rejected (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no totals line in %q", out)
	}
	a, _ := strconv.ParseInt(m[1], 10, 64)
	r, _ := strconv.ParseInt(m[2], 10, 64)
	return a, r
}

// get sends one GET with the given headers ("Name: value").
func get(t *testing.T, url string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestServeHeadersAndBodies: what the demo service answers, byte for
// byte, under 2 per minute (a window long enough that the quota does not
// refill during the test).
func TestServeHeadersAndBodies(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "2", "-window", "1m", "-legacy-headers")
	for i, want := range []struct {
		status                     int
		ratelimit, retryAfter      string
		legacyRemaining, legacyRst string
		contentType, body          string
	}{
		// A full bucket: one unit left, full again in W/L = 30s.
		{200, `"default";r=1;t=30`, "", "1", "30", "text/plain; charset=utf-8", "ok\n"},
		// The second unit: empty, full again in 60s.
		{200, `"default";r=0;t=60`, "", "0", "60", "text/plain; charset=utf-8", "ok\n"},
		// Rejected: one unit comes back in 30s, and t names that instant.
		{429, `"default";r=0;t=30`, "30", "0", "30", "application/problem+json",
			`{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request quota exceeded","status":429,` +
				`"detail":"quota of policy \"default\" (2 per 1m0s) exceeded; retry after 30 s","retry_after":30,"violated-policies":["default"]}` + "\n"},
	} {
		resp, body := get(t, s.url+"/any/path")
		h := resp.Header
		got := []string{strconv.Itoa(resp.StatusCode), h.Get("RateLimit-Policy"), h.Get("RateLimit"), h.Get("Retry-After"),
			h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), h.Get("Content-Type"), body}
		exp := []string{strconv.Itoa(want.status), `"default";q=2;w=60`, want.ratelimit, want.retryAfter,
			"2", want.legacyRemaining, want.legacyRst, want.contentType, want.body}
		for k := range got {
			if got[k] != exp[k] {
				t.Errorf("request %d: got %q, want %q (all: %q)", i+1, got[k], exp[k], got)
			}
		}
	}
	code, out := s.stop(t)
	if code != 0 {
		t.Errorf("serve exited %d: %s", code, s.stderr.String())
	}
	if a, r := totals(t, out); a != 2 || r != 1 {
		t.Errorf("totals: admitted %d rejected %d, want 2 and 1", a, r)
	}
}

// TestServeForwardedFor: a client that is not a trusted proxy cannot
// pick its key with X-Forwarded-For; a trusted proxy's header selects the
// client.
func TestServeForwardedFor(t *testing.T) {
	t.Run("untrusted peer", func(t *testing.T) {
		s := startServe(t, "-limit", "1", "-window", "1m")
		if resp, _ := get(t, s.url, "X-Forwarded-For: 192.0.2.1"); resp.StatusCode != 200 {
			t.Fatalf("first request: %d", resp.StatusCode)
		}
		// Another claimed client, the same peer: the same (spent) quota.
		for _, xff := range []string{"192.0.2.2", "198.51.100.7, 192.0.2.3", ""} {
			if resp, _ := get(t, s.url, "X-Forwarded-For: "+xff); resp.StatusCode != 429 {
				t.Errorf("X-Forwarded-For %q from an untrusted peer: %d, want 429", xff, resp.StatusCode)
			}
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		s := startServe(t, "-limit", "1", "-window", "1m", "-trust-proxy", "127.0.0.1/32")
		for _, c := range []struct {
			xff  string
			want int
		}{
			{"192.0.2.1", 200},              // a client
			{"192.0.2.2", 200},              // another one, its own quota
			{"192.0.2.1", 429},              // the first again: spent
			{"203.0.113.9, 192.0.2.2", 429}, // read from the right: 192.0.2.2, spent
			{"192.0.2.1, 127.0.0.1", 429},   // a trusted hop skipped: 192.0.2.1
		} {
			if resp, _ := get(t, s.url, "X-Forwarded-For: "+c.xff); resp.StatusCode != c.want {
				t.Errorf("X-Forwarded-For %q via a trusted proxy: %d, want %d", c.xff, resp.StatusCode, c.want)
			}
		}
	})
}

// TestServeKeyHeader: -key header:NAME limits by that header and answers
// 400 without it.
func TestServeKeyHeader(t *testing.T) {
	s := startServe(t, "-limit", "1", "-window", "1m", "-key", "header:X-API-Key")
	for _, c := range []struct {
		key  string
		want int
	}{{"alice", 200}, {"bob", 200}, {"alice", 429}, {"", 400}} {
		var hs []string
		if c.key != "" {
			hs = append(hs, "X-API-Key: "+c.key)
		}
		if resp, _ := get(t, s.url, hs...); resp.StatusCode != c.want {
			t.Errorf("key %q: %d, want %d", c.key, resp.StatusCode, c.want)
		}
	}
	_, out := s.stop(t)
	if !strings.Contains(out, "bad_keys 1") {
		t.Errorf("totals %q: want bad_keys 1", out)
	}
}

// TestServeLogsEverySecond: a second with requests gets its line.
func TestServeLogsEverySecond(t *testing.T) {
	s := startServe(t, "-limit", "1", "-window", "1m")
	get(t, s.url)
	get(t, s.url)
	deadline := time.Now().Add(2500 * time.Millisecond)
	re := regexp.MustCompile(`\d\d:\d\d:\d\d admitted 1 rejected 1\n`)
	for !re.MatchString(s.stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no per-second line in %q", s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeBadFlags: one line, exit 2, nothing served.
func TestServeBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown algorithm", []string{"-algo", "nope"}, "unknown algorithm"},
		{"malformed CIDR", []string{"-trust-proxy", "10.0.0.0/99"}, "-trust-proxy"},
		{"not an address", []string{"-trust-proxy", "10.0.0.1,proxy.local"}, "proxy.local"},
		{"bad key form", []string{"-key", "cookie:session"}, "-key"},
		{"bad header name", []string{"-key", "header:X Key"}, "-key"},
		{"negative limit", []string{"-limit", "-5"}, "limit"},
		{"zero window", []string{"-window", "0s"}, "window"},
		{"negative burst", []string{"-burst", "-1"}, "-burst"},
		{"bad address", []string{"-addr", "localhost"}, "-addr"},
		{"port out of range", []string{"-addr", "127.0.0.1:99999"}, "-addr"},
		{"negative port", []string{"-addr", "127.0.0.1:-1"}, "-addr"},
		{"unparsable window", []string{"-window", "soon"}, "-window"},
		{"unknown proxy header", []string{"-proxy-header", "X-Real-IP"}, "ProxyHeader"},
		{"zero max keys", []string{"-max-keys", "0"}, "-max-keys"},
		{"negative max keys", []string{"-max-keys", "-64"}, "-max-keys"},
		{"non-numeric max keys", []string{"-max-keys", "lots"}, "-max-keys"},
		{"max keys beyond the table", []string{"-max-keys", "1099511627776"}, "-max-keys"},
		{"unknown on-full", []string{"-on-full", "evict"}, "-on-full"},
		{"on-full in another case", []string{"-on-full", "Reject"}, "-on-full"},
		{"max keys with a shared backend", []string{"-backend", "sqlite://" + os.DevNull, "-max-keys", "64"}, "-max-keys"},
		{"on-full with a shared backend", []string{"-backend", "redis://127.0.0.1:1", "-on-full", "reject"}, "-on-full"},
		{"unknown backend", []string{"-backend", "mongodb://x"}, "mongodb"},
		{"stray argument", []string{"extra"}, "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"serve", "-addr", "127.0.0.1:0"}, tc.args...)
			code, stdout, stderr := runCLI(t, dir, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
			if stdout != "" || strings.Contains(stderr, "listening") {
				t.Errorf("bad flags served: stdout %q", stdout)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("bad flags created %v", entries)
			}
		})
	}
}
