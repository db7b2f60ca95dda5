package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/httplimit"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// t0 is an instant since the Unix epoch, as the real clock gives, on a
// minute boundary.
const t0 = 1_750_000_020 * time.Second

// clock is a fake Config.Now that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Duration
}

func (c *clock) Now() time.Duration    { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(now time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = now }

// fakeLimiter answers a fixed decision or error and records what it was
// asked.
type fakeLimiter struct {
	mu    sync.Mutex
	d     algorithms.Decision
	err   error
	keys  []string
	costs []int64
	nows  []time.Duration
}

func (l *fakeLimiter) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	l.costs = append(l.costs, cost)
	l.nows = append(l.nows, now)
	return l.d, l.err
}

// hello is the protected handler; it counts its calls.
type hello struct {
	mu    sync.Mutex
	calls int
}

func (h *hello) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	fmt.Fprint(w, "hello\n")
}

func mustNew(t testing.TB, cfg httplimit.Config) *httplimit.Middleware {
	t.Helper()
	m, err := httplimit.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// do serves one request and returns the recorder.
func do(h http.Handler, method, target, remoteAddr string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if remoteAddr != "" {
		r.RemoteAddr = remoteAddr
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// checkResponse compares status, body and headers; a header wanted as ""
// must be absent.
func checkResponse(t *testing.T, w *httptest.ResponseRecorder, status int, body string, headers map[string]string) {
	t.Helper()
	if w.Code != status {
		t.Errorf("status = %d, want %d", w.Code, status)
	}
	if got := w.Body.String(); got != body {
		t.Errorf("body =\n%s\nwant\n%s", got, body)
	}
	for k, want := range headers {
		vs := w.Header().Values(k)
		switch {
		case want == "" && len(vs) != 0:
			t.Errorf("%s = %q, want none", k, vs)
		case want != "" && (len(vs) != 1 || vs[0] != want):
			t.Errorf("%s = %q, want %q", k, vs, want)
		}
	}
}

// TestAdmitReject runs a per-IP GCRA of 2 per minute (the default limiter)
// through a sequence of requests at fixed instants, checking every header
// and body exactly.
func TestAdmitReject(t *testing.T) {
	clk := &clock{}
	next := &hello{}
	m := mustNew(t, httplimit.Config{
		Policy:        algorithms.Policy{Limit: 2, Window: time.Minute},
		Now:           clk.Now,
		LegacyHeaders: true,
	})
	h := m.Wrap(next)
	const policy = `"default";q=2;w=60`
	for i, step := range []struct {
		at      time.Duration
		peer    string
		status  int
		body    string
		headers map[string]string
	}{
		// First request: one unit used, refilled 30s later (T = W/L).
		{at: t0, peer: "192.0.2.1:1000", status: 200, body: "hello\n", headers: map[string]string{
			"RateLimit-Policy": policy, "RateLimit": `"default";r=1;t=30`, "Retry-After": "",
			"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "30"}},
		// Second, 0.5s later: burst used up; full again 59.5s later, t rounded up.
		{at: t0 + 500*time.Millisecond, peer: "192.0.2.1:1001", status: 200, body: "hello\n", headers: map[string]string{
			"RateLimit-Policy": policy, "RateLimit": `"default";r=0;t=60`,
			"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"}},
		// Third, at 1s: rejected; one unit is back at 30s, 29s later, and t
		// names the same instant as Retry-After, as the draft asks.
		{at: t0 + time.Second, peer: "192.0.2.1:1002", status: 429,
			body: `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request quota exceeded","status":429,` +
				`"detail":"quota of policy \"default\" (2 per 1m0s) exceeded; retry after 29 s","retry_after":29,"violated-policies":["default"]}` + "\n",
			headers: map[string]string{
				"RateLimit-Policy": policy, "RateLimit": `"default";r=0;t=29`, "Retry-After": "29",
				"Content-Type": "application/problem+json", "X-RateLimit-Reset": "29"}},
		// Another client has its own quota.
		{at: t0 + time.Second, peer: "192.0.2.2:1000", status: 200, body: "hello\n", headers: map[string]string{
			"RateLimit": `"default";r=1;t=30`}},
		// The first client, 30s after its first request: one unit is back.
		{at: t0 + 30*time.Second, peer: "192.0.2.1:1003", status: 200, body: "hello\n", headers: map[string]string{
			"RateLimit": `"default";r=0;t=60`}},
	} {
		t.Run(fmt.Sprint("step", i), func(t *testing.T) {
			clk.Set(step.at)
			w := do(h, "GET", "/", step.peer, nil)
			checkResponse(t, w, step.status, step.body, step.headers)
		})
	}
	if next.calls != 4 {
		t.Errorf("handler called %d times, want 4", next.calls)
	}
	if got, want := m.Stats(), (httplimit.Stats{Admitted: 4, Rejected: 1}); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

// TestRetryAfter checks the rounding of Retry-After and t on rejections:
// whole seconds, rounded up, never earlier than the real instant.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		resetAfter time.Duration
		want       string // Retry-After; "" for none
		wantT      string // RateLimit t
	}{
		{name: "999ms rounds up to 1", retryAfter: 999 * time.Millisecond, resetAfter: time.Minute, want: "1", wantT: "1"},
		{name: "exactly 1s is 1", retryAfter: time.Second, resetAfter: time.Minute, want: "1", wantT: "1"},
		{name: "1s and 1ns is 2", retryAfter: time.Second + 1, resetAfter: time.Minute, want: "2", wantT: "2"},
		{name: "1ns is 1", retryAfter: 1, resetAfter: 1, want: "1", wantT: "1"},
		{name: "zero from an imprecise limiter is still 1: never retry now", retryAfter: 0, resetAfter: 0, want: "1", wantT: "1"},
		{name: "a day", retryAfter: 24 * time.Hour, resetAfter: 24 * time.Hour, want: "86400", wantT: "86400"},
		{name: "Never: no Retry-After, t from ResetAfter", retryAfter: algorithms.Never, resetAfter: 2500 * time.Millisecond, want: "", wantT: "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := &fakeLimiter{d: algorithms.Decision{RetryAfter: tc.retryAfter, ResetAfter: tc.resetAfter}}
			m := mustNew(t, httplimit.Config{Policy: algorithms.Policy{Limit: 3, Window: time.Minute}, Limiter: lim,
				Now: func() time.Duration { return t0 }})
			w := do(m.Wrap(&hello{}), "GET", "/", "", nil)
			if w.Code != 429 {
				t.Fatalf("status %d, want 429", w.Code)
			}
			if got := w.Header().Get("Retry-After"); got != tc.want {
				t.Errorf("Retry-After = %q, want %q", got, tc.want)
			}
			if got, want := w.Header().Get("RateLimit"), `"default";r=0;t=`+tc.wantT; got != want {
				t.Errorf("RateLimit = %q, want %q", got, want)
			}
			if tc.want != "" && !strings.Contains(w.Body.String(), `"retry_after":`+tc.want+",") {
				t.Errorf("body %s lacks retry_after %s", w.Body, tc.want)
			}
		})
	}
}

// TestNever: a cost no wait can admit is answered 429 without Retry-After,
// and the problem says so.
func TestNever(t *testing.T) {
	m := mustNew(t, httplimit.Config{
		Policy: algorithms.Policy{Limit: 3, Window: time.Minute},
		Now:    func() time.Duration { return t0 },
		Cost:   func(*http.Request) int64 { return 5 },
	})
	w := do(m.Wrap(&hello{}), "POST", "/upload", "", nil)
	checkResponse(t, w, 429,
		`{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request quota exceeded","status":429,`+
			`"detail":"request cost 5 is more than the quota of policy \"default\" (3 per 1m0s) admits at once: it can never be admitted, do not retry",`+
			`"violated-policies":["default"]}`+"\n",
		map[string]string{"Retry-After": "", "RateLimit": `"default";r=3;t=0`, "RateLimit-Policy": `"default";q=3;w=60`})
}

// TestKeys checks which key the limiter is asked for, through the whole
// middleware: spoofing from an untrusted peer changes nothing, a trusted
// proxy selects the client, and KeyHeader keys by the header or answers 400.
func TestKeys(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, tc := range []struct {
		name    string
		cfg     httplimit.Config // Policy and Limiter are filled in
		peer    string
		header  map[string]string
		wantKey string // "" when the limiter must not be asked
		status  int
	}{
		{name: "default key is the peer's IP, port stripped", peer: "203.0.113.9:5000", wantKey: "203.0.113.9", status: 200},
		{name: "IPv6 peer with zone: zone dropped", peer: "[fe80::1%eth0]:80", wantKey: "fe80::1", status: 200},
		{name: "IPv4-mapped peer is unmapped", peer: "[::ffff:203.0.113.9]:80", wantKey: "203.0.113.9", status: 200},
		{name: "Unix socket peer shares the key unknown", peer: "@", wantKey: "unknown", status: 200},
		{name: "spoofed X-Forwarded-For without trusted proxies changes nothing", peer: "203.0.113.9:5000",
			header: map[string]string{"X-Forwarded-For": "198.51.100.7"}, wantKey: "203.0.113.9", status: 200},
		{name: "spoofed X-Forwarded-For from an untrusted peer changes nothing", cfg: httplimit.Config{TrustedProxies: trusted},
			peer: "203.0.113.9:5000", header: map[string]string{"X-Forwarded-For": "198.51.100.7"}, wantKey: "203.0.113.9", status: 200},
		{name: "spoofed Forwarded from an untrusted peer changes nothing", cfg: httplimit.Config{TrustedProxies: trusted, ProxyHeader: "forwarded"},
			peer: "203.0.113.9:5000", header: map[string]string{"Forwarded": "for=198.51.100.7"}, wantKey: "203.0.113.9", status: 200},
		{name: "trusted proxy selects the client", cfg: httplimit.Config{TrustedProxies: trusted},
			peer: "10.0.0.1:443", header: map[string]string{"X-Forwarded-For": "6.6.6.6, 198.51.100.7"}, wantKey: "198.51.100.7", status: 200},
		{name: "trusted IPv6 proxy chain", cfg: httplimit.Config{TrustedProxies: trusted},
			peer: "[2001:db8:ffff::1]:443", header: map[string]string{"X-Forwarded-For": "198.51.100.7, 10.1.1.1, 2001:db8:ffff::2"}, wantKey: "198.51.100.7", status: 200},
		{name: "Forwarded is ignored when X-Forwarded-For is the proxy header", cfg: httplimit.Config{TrustedProxies: trusted},
			peer: "10.0.0.1:443", header: map[string]string{"Forwarded": "for=6.6.6.6"}, wantKey: "10.0.0.1", status: 200},
		{name: "X-Forwarded-For is ignored when Forwarded is the proxy header", cfg: httplimit.Config{TrustedProxies: trusted, ProxyHeader: httplimit.HeaderForwarded},
			peer: "10.0.0.1:443", header: map[string]string{"X-Forwarded-For": "6.6.6.6", "Forwarded": `for="[2001:db8:cafe::17]:4711"`}, wantKey: "2001:db8:cafe::17", status: 200},
		{name: "malformed header from a trusted proxy: keyed by the proxy", cfg: httplimit.Config{TrustedProxies: trusted},
			peer: "10.0.0.1:443", header: map[string]string{"X-Forwarded-For": "6.6.6.6, <script>"}, wantKey: "10.0.0.1", status: 200},
		{name: "KeyHeader keys by the header", cfg: httplimit.Config{Key: httplimit.KeyHeader("x-api-key")},
			peer: "203.0.113.9:5000", header: map[string]string{"X-API-Key": "k-123"}, wantKey: "k-123", status: 200},
		{name: "KeyHeader without the header: 400, not the IP", cfg: httplimit.Config{Key: httplimit.KeyHeader("X-API-Key")},
			peer: "203.0.113.9:5000", status: 400},
		{name: "KeyHeader with an oversized value: 400", cfg: httplimit.Config{Key: httplimit.KeyHeader("X-API-Key")},
			peer: "203.0.113.9:5000", header: map[string]string{"X-API-Key": strings.Repeat("k", httplimit.MaxKeyLen+1)}, status: 400},
		{name: "a key function sees the resolved client", cfg: httplimit.Config{TrustedProxies: trusted,
			Key: func(r *http.Request, c netip.Addr) (string, error) { return "user:" + c.String(), nil }},
			peer: "10.0.0.1:443", header: map[string]string{"X-Forwarded-For": "198.51.100.7"}, wantKey: "user:198.51.100.7", status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := &fakeLimiter{d: algorithms.Decision{Allowed: true}}
			cfg := tc.cfg
			cfg.Policy, cfg.Limiter, cfg.Now = algorithms.Policy{Limit: 1, Window: time.Second}, lim, func() time.Duration { return t0 }
			w := do(mustNew(t, cfg).Wrap(&hello{}), "GET", "/", tc.peer, tc.header)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, tc.status, w.Body)
			}
			var want []string
			if tc.wantKey != "" {
				want = []string{tc.wantKey}
			}
			if fmt.Sprint(lim.keys) != fmt.Sprint(want) {
				t.Fatalf("limiter keys %q, want %q", lim.keys, want)
			}
		})
	}
}

// TestKeyHeaderAmbiguous: KeyHeader keys by one value sent once; a header
// repeated on several field lines, or one value holding a list, names no
// single client and is answered 400 (counted in BadKeys) without asking
// the limiter.
func TestKeyHeaderAmbiguous(t *testing.T) {
	const (
		once    = `{"type":"about:blank","title":"Bad Request","status":400,"detail":"httplimit: no rate-limit key: header X-API-Key must be sent once, with one value (not a list)"}` + "\n"
		missing = `{"type":"about:blank","title":"Bad Request","status":400,"detail":"httplimit: no rate-limit key: header X-API-Key must be present, non-empty and at most 256 bytes"}` + "\n"
	)
	for _, tc := range []struct {
		name    string
		lines   []string // X-API-Key field lines, in order
		wantKey string   // "" when the limiter must not be asked
		body    string   // the 400's body; "" for a served request
	}{
		{name: "one value", lines: []string{"k-123"}, wantKey: "k-123"},                                                                          // the ordinary case
		{name: "inner spaces are part of the key", lines: []string{"k 123"}, wantKey: "k 123"},                                                   // no list separator in it
		{name: "two lines, different values", lines: []string{"alice", "bob"}, body: once},                                                       // which one is the client?
		{name: "two lines, same value", lines: []string{"alice", "alice"}, body: once},                                                           // still sent twice: refused, not guessed
		{name: "empty line then a value", lines: []string{"", "alice"}, body: once},                                                              // an empty first line must not hide the second
		{name: "comma-separated list", lines: []string{"alice, bob"}, body: once},                                                                // HTTP's form of repeated lines
		{name: "comma without spaces", lines: []string{"alice,bob"}, body: once},                                                                 // the same list
		{name: "trailing comma", lines: []string{"alice,"}, body: once},                                                                          // a list with an empty element
		{name: "lone comma", lines: []string{","}, body: once},                                                                                   // a list of empty elements
		{name: "a list on one of two lines", lines: []string{"alice", "bob, carol"}, body: once},                                                 // both faults at once
		{name: "absent", body: missing},                                                                                                          // the existing rule: no key
		{name: "one empty line", lines: []string{""}, body: missing},                                                                             // present but empty
		{name: "too long", lines: []string{strings.Repeat("k", httplimit.MaxKeyLen+1)}, body: missing},                                           // beyond MaxKeyLen
		{name: "longest accepted", lines: []string{strings.Repeat("k", httplimit.MaxKeyLen)}, wantKey: strings.Repeat("k", httplimit.MaxKeyLen)}, // at MaxKeyLen
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := &fakeLimiter{d: algorithms.Decision{Allowed: true, Remaining: 1}}
			var errs []error
			m := mustNew(t, httplimit.Config{
				Policy:  algorithms.Policy{Limit: 2, Window: time.Second},
				Limiter: lim,
				Key:     httplimit.KeyHeader("X-API-Key"),
				Now:     func() time.Duration { return t0 },
				OnError: func(_ *http.Request, err error) { errs = append(errs, err) },
			})
			r := httptest.NewRequest("GET", "/", nil)
			for _, v := range tc.lines {
				r.Header.Add("X-API-Key", v)
			}
			w := httptest.NewRecorder()
			m.Wrap(&hello{}).ServeHTTP(w, r)
			var wantKeys []string
			if tc.body == "" {
				checkResponse(t, w, 200, "hello\n", nil)
				wantKeys = []string{tc.wantKey}
				if got := m.Stats(); got != (httplimit.Stats{Admitted: 1}) {
					t.Errorf("Stats() = %+v, want one admitted", got)
				}
			} else {
				checkResponse(t, w, 400, tc.body, map[string]string{"Content-Type": "application/problem+json", "RateLimit": ""})
				if got := m.Stats(); got != (httplimit.Stats{BadKeys: 1}) {
					t.Errorf("Stats() = %+v, want one bad key", got)
				}
				if len(errs) != 1 || !errors.Is(errs[0], httplimit.ErrNoKey) {
					t.Errorf("OnError got %v, want one ErrNoKey", errs)
				}
			}
			if fmt.Sprint(lim.keys) != fmt.Sprint(wantKeys) {
				t.Errorf("limiter keys %q, want %q", lim.keys, wantKeys)
			}
		})
	}
}

// TestSpoofedHeaderSharesQuota: an untrusted client that changes its
// X-Forwarded-For on every request still spends one quota.
func TestSpoofedHeaderSharesQuota(t *testing.T) {
	m := mustNew(t, httplimit.Config{
		Policy:         algorithms.Policy{Limit: 1, Window: time.Minute},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Now:            func() time.Duration { return t0 },
	})
	h := m.Wrap(&hello{})
	for i, want := range []int{200, 429, 429} {
		w := do(h, "GET", "/", "203.0.113.9:5000", map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i)})
		if w.Code != want {
			t.Fatalf("request %d: status %d, want %d", i, w.Code, want)
		}
	}
}

func TestBadKeyBody(t *testing.T) {
	var errs []error
	m := mustNew(t, httplimit.Config{
		Policy:  algorithms.Policy{Limit: 1, Window: time.Second},
		Key:     httplimit.KeyHeader("X-API-Key"),
		OnError: func(_ *http.Request, err error) { errs = append(errs, err) },
	})
	w := do(m.Wrap(&hello{}), "GET", "/", "", nil)
	checkResponse(t, w, 400,
		`{"type":"about:blank","title":"Bad Request","status":400,"detail":"httplimit: no rate-limit key: header X-API-Key must be present, non-empty and at most 256 bytes"}`+"\n",
		map[string]string{"Content-Type": "application/problem+json", "RateLimit": "", "RateLimit-Policy": ""})
	if len(errs) != 1 || !errors.Is(errs[0], httplimit.ErrNoKey) {
		t.Errorf("OnError got %v, want one ErrNoKey", errs)
	}
	if got := m.Stats(); got != (httplimit.Stats{BadKeys: 1}) {
		t.Errorf("Stats() = %+v", got)
	}
}

// TestRoutes: per-route policies, matched with ServeMux precedence.
func TestRoutes(t *testing.T) {
	m := mustNew(t, httplimit.Config{
		Policy: algorithms.Policy{Limit: 100, Window: time.Minute},
		Now:    func() time.Duration { return t0 },
		Routes: map[string]httplimit.Route{
			"POST /login":        {Policy: algorithms.Policy{Limit: 1, Window: time.Minute}},
			"GET /api/":          {Policy: algorithms.Policy{Limit: 10, Window: time.Second}, Name: "api"},
			"GET /api/reports/":  {Policy: algorithms.Policy{Limit: 5, Window: time.Hour}, Name: "reports"},
			"example.com/admin/": {Policy: algorithms.Policy{Limit: 2, Window: 1500 * time.Millisecond}, Name: "admin"},
		},
	})
	h := m.Wrap(&hello{})
	for _, tc := range []struct {
		name, method, target string
		policy               string // RateLimit-Policy wanted
		status               int
	}{
		{name: "unmatched route uses the default", method: "GET", target: "/", policy: `"default";q=100;w=60`, status: 200},
		{name: "route named after its pattern", method: "POST", target: "/login", policy: `"POST /login";q=1;w=60`, status: 200},
		{name: "its own quota: the second login is rejected", method: "POST", target: "/login", policy: `"POST /login";q=1;w=60`, status: 429},
		{name: "unclean path counts on the route it cleans to", method: "POST", target: "/x/../login", policy: `"POST /login";q=1;w=60`, status: 429},
		{name: "method mismatch uses the default", method: "GET", target: "/login", policy: `"default";q=100;w=60`, status: 200},
		{name: "prefix pattern", method: "GET", target: "/api/users", policy: `"api";q=10;w=1`, status: 200},
		{name: "HEAD matches GET patterns", method: "HEAD", target: "/api/users", policy: `"api";q=10;w=1`, status: 200},
		{name: "longer pattern wins", method: "GET", target: "/api/reports/7", policy: `"reports";q=5;w=3600`, status: 200},
		{name: "trailing-slash redirect counts on the route", method: "GET", target: "/api", policy: `"api";q=10;w=1`, status: 200},
		{name: "host pattern; window 1.5s advertised as 2", method: "GET", target: "http://example.com/admin/x", policy: `"admin";q=2;w=2`, status: 200},
		{name: "host pattern does not match another host", method: "GET", target: "http://other.example/admin/x", policy: `"default";q=100;w=60`, status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.method, tc.target, "", nil)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Header().Get("RateLimit-Policy"); got != tc.policy {
				t.Errorf("RateLimit-Policy = %q, want %q", got, tc.policy)
			}
		})
	}
}

// TestFailure: a backend error fails open (served, no rate-limit headers)
// or closed (503), and is counted either way.
func TestFailure(t *testing.T) {
	backendErr := fmt.Errorf("redis: %w: connection refused", algorithms.ErrBackend)
	for _, tc := range []struct {
		name     string
		failOpen bool
		status   int
		body     string
		calls    int // handler calls
	}{
		{name: "fail open serves without headers", failOpen: true, status: 200, body: "hello\n", calls: 1},
		{name: "fail closed answers 503", failOpen: false, status: 503, calls: 0,
			body: `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the rate limiter is unavailable; try again later"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs []error
			next := &hello{}
			m := mustNew(t, httplimit.Config{
				Policy:   algorithms.Policy{Limit: 1, Window: time.Second},
				Limiter:  &fakeLimiter{err: backendErr},
				FailOpen: tc.failOpen,
				OnError:  func(_ *http.Request, err error) { errs = append(errs, err) },
			})
			w := do(m.Wrap(next), "GET", "/", "", nil)
			checkResponse(t, w, tc.status, tc.body, map[string]string{"RateLimit": "", "RateLimit-Policy": "", "Retry-After": ""})
			if next.calls != tc.calls {
				t.Errorf("handler called %d times, want %d", next.calls, tc.calls)
			}
			if len(errs) != 1 || !errors.Is(errs[0], algorithms.ErrBackend) {
				t.Errorf("OnError got %v, want one ErrBackend", errs)
			}
			if got := m.Stats(); got != (httplimit.Stats{Errors: 1}) {
				t.Errorf("Stats() = %+v", got)
			}
		})
	}
}

// TestCost: the cost function's units reach the limiter; a cost below one
// is a server bug (500), whatever the failure policy.
func TestCost(t *testing.T) {
	lim := &fakeLimiter{d: algorithms.Decision{Allowed: true}}
	var errs []error
	m := mustNew(t, httplimit.Config{
		Policy:   algorithms.Policy{Limit: 10, Window: time.Second},
		Limiter:  lim,
		FailOpen: true,
		Cost: func(r *http.Request) int64 {
			if r.URL.Path == "/free" {
				return 0
			}
			return 3
		},
		OnError: func(_ *http.Request, err error) { errs = append(errs, err) },
	})
	h := m.Wrap(&hello{})
	if w := do(h, "GET", "/bulk", "", nil); w.Code != 200 || fmt.Sprint(lim.costs) != "[3]" {
		t.Fatalf("status %d, costs %v; want 200 and [3]", w.Code, lim.costs)
	}
	w := do(h, "GET", "/free", "", nil)
	if w.Code != 500 || len(lim.costs) != 1 {
		t.Fatalf("cost 0: status %d, limiter calls %d; want 500 and no call", w.Code, len(lim.costs))
	}
	if len(errs) != 1 || !errors.Is(errs[0], algorithms.ErrInvalidCost) {
		t.Errorf("OnError got %v, want one ErrInvalidCost", errs)
	}
	if got := m.Stats(); got != (httplimit.Stats{Admitted: 1, Errors: 1}) {
		t.Errorf("Stats() = %+v", got)
	}
}

// TestShaperDelay: a leaky queue (shaper) delays admitted requests; the
// middleware waits through the injected sleeper before serving, and a
// request whose context ends while queued is not served.
func TestShaperDelay(t *testing.T) {
	q, err := algorithms.NewLeakyQueue(algorithms.Policy{Limit: 10, Window: time.Second, Burst: 3})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	sleepErr := error(nil)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		events = append(events, "serve")
		mu.Unlock()
	})
	m := mustNew(t, httplimit.Config{
		Policy:  algorithms.Policy{Limit: 10, Window: time.Second, Burst: 3},
		Limiter: q,
		Now:     func() time.Duration { return t0 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			events = append(events, fmt.Sprint("sleep ", d))
			mu.Unlock()
			return sleepErr
		},
	})
	h := m.Wrap(next)
	for i, tc := range []struct {
		sleepErr error
		status   int
		events   string
		limit    string // RateLimit
	}{
		{status: 200, events: "[serve]", limit: `"default";r=2;t=1`},                                   // served at once: no sleep
		{status: 200, events: "[sleep 100ms serve]", limit: `"default";r=1;t=1`},                       // one request ahead: 100ms
		{sleepErr: context.Canceled, status: 503, events: "[sleep 200ms]", limit: `"default";r=0;t=1`}, // cancelled while queued: not served
		{status: 429, events: "[]", limit: `"default";r=0;t=1`},                                        // the queue is full
	} {
		events, sleepErr = nil, tc.sleepErr
		w := do(h, "GET", "/", "", nil)
		if w.Code != tc.status || fmt.Sprint(events) != tc.events || w.Header().Get("RateLimit") != tc.limit {
			t.Errorf("request %d: status %d, events %v, RateLimit %q; want %d, %s, %q",
				i, w.Code, events, w.Header().Get("RateLimit"), tc.status, tc.events, tc.limit)
		}
	}
}

// deadlineWriter is a ResponseWriter with a write deadline, as net/http's
// is: it records when SetWriteDeadline is called among the other events
// of a request.
type deadlineWriter struct {
	*httptest.ResponseRecorder
	events    *[]string
	deadlines []time.Time
}

func (d *deadlineWriter) SetWriteDeadline(t time.Time) error {
	*d.events = append(*d.events, "deadline")
	d.deadlines = append(d.deadlines, t)
	return nil
}

// TestWriteDeadline: with WriteTimeout, the write deadline is set to
// WriteTimeout from the moment the middleware answers, whatever the
// answer, and after a shaper's delay, never before it.
func TestWriteDeadline(t *testing.T) {
	const timeout = 7 * time.Second
	backendErr := fmt.Errorf("redis: %w: connection refused", algorithms.ErrBackend)
	for _, tc := range []struct {
		name     string
		decision algorithms.Decision
		err      error            // from the limiter
		sleepErr error            // from Sleep
		cfg      httplimit.Config // Policy, Limiter, Now, Sleep and WriteTimeout filled in
		timeout  time.Duration    // WriteTimeout
		header   string           // X-API-Key, with cfg.Key
		status   int
		events   string
	}{
		{name: "admitted at once: deadline, then served", decision: algorithms.Decision{Allowed: true}, timeout: timeout,
			status: 200, events: "[deadline serve]"},
		{name: "delayed by a shaper: the deadline comes after the wait", decision: algorithms.Decision{Allowed: true, Delay: time.Hour}, timeout: timeout,
			status: 200, events: "[sleep 1h0m0s deadline serve]"},
		{name: "cancelled while queued: the 503 has a deadline too", decision: algorithms.Decision{Allowed: true, Delay: time.Hour}, sleepErr: context.Canceled,
			timeout: timeout, status: 503, events: "[sleep 1h0m0s deadline]"},
		{name: "rejected: the 429 has a deadline", decision: algorithms.Decision{RetryAfter: time.Second}, timeout: timeout,
			status: 429, events: "[deadline]"},
		{name: "key table full: the 429 has a deadline", decision: algorithms.Decision{RetryAfter: time.Second, TableFull: true}, timeout: timeout,
			status: 429, events: "[deadline]"},
		{name: "bad key: the 400 has a deadline", cfg: httplimit.Config{Key: httplimit.KeyHeader("X-API-Key")}, header: "a, b", timeout: timeout,
			status: 400, events: "[deadline]"},
		{name: "bad cost: the 500 has a deadline", cfg: httplimit.Config{Cost: func(*http.Request) int64 { return 0 }}, timeout: timeout,
			status: 500, events: "[deadline]"},
		{name: "limiter error, fail closed: the 503 has a deadline", err: backendErr, timeout: timeout,
			status: 503, events: "[deadline]"},
		{name: "limiter error, fail open: deadline, then served", err: backendErr, cfg: httplimit.Config{FailOpen: true}, timeout: timeout,
			status: 200, events: "[deadline serve]"},
		{name: "no WriteTimeout: deadlines left alone", decision: algorithms.Decision{Allowed: true, Delay: time.Hour},
			status: 200, events: "[sleep 1h0m0s serve]"},
		{name: "negative WriteTimeout is none, as in http.Server", decision: algorithms.Decision{Allowed: true}, timeout: -time.Second,
			status: 200, events: "[serve]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []string
			var awake time.Time // when the fake sleep returned
			cfg := tc.cfg
			cfg.Policy = algorithms.Policy{Limit: 10, Window: time.Second}
			cfg.Limiter = &fakeLimiter{d: tc.decision, err: tc.err}
			cfg.Now = func() time.Duration { return t0 }
			cfg.WriteTimeout = tc.timeout
			cfg.Sleep = func(_ context.Context, d time.Duration) error {
				events = append(events, fmt.Sprint("sleep ", d))
				awake = time.Now()
				return tc.sleepErr
			}
			next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				events = append(events, "serve")
			})
			r := httptest.NewRequest("GET", "/", nil)
			if tc.header != "" {
				r.Header.Set("X-API-Key", tc.header)
			}
			w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder(), events: &events}
			before := time.Now()
			mustNew(t, cfg).Wrap(next).ServeHTTP(w, r)
			after := time.Now()
			if w.Code != tc.status || fmt.Sprint(events) != tc.events {
				t.Fatalf("status %d, events %v; want %d, %s", w.Code, events, tc.status, tc.events)
			}
			if !awake.IsZero() {
				before = awake
			}
			for _, d := range w.deadlines {
				if d.Before(before.Add(tc.timeout)) || d.After(after.Add(tc.timeout)) {
					t.Errorf("deadline %v, want WriteTimeout %v after the answer began, within [%v, %v]",
						d, tc.timeout, before.Add(tc.timeout), after.Add(tc.timeout))
				}
			}
		})
	}
}

// TestWriteDeadlineRecorder: a ResponseWriter without deadlines is served
// as it is.
func TestWriteDeadlineRecorder(t *testing.T) {
	m := mustNew(t, httplimit.Config{Policy: algorithms.Policy{Limit: 1, Window: time.Second},
		Limiter: &fakeLimiter{d: algorithms.Decision{Allowed: true}}, WriteTimeout: time.Second})
	w := do(m.Wrap(&hello{}), "GET", "/", "", nil)
	checkResponse(t, w, 200, "hello\n", nil)
}

// TestTableFull: a key refused by a full key table is a 429 with
// Retry-After, RateLimit r=0 and a problem naming the table; it is counted
// in Rejected and TableFull, reported to no OnError, and FailOpen does not
// admit it (a decision, not an error).
func TestTableFull(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		failOpen   bool
		status     int
		headers    map[string]string
		body       string
	}{
		{name: "retry after rounds up to whole seconds", retryAfter: 599*time.Second + 1, status: 429,
			headers: map[string]string{"Retry-After": "600", "RateLimit": `"default";r=0;t=600`, "RateLimit-Policy": `"default";q=5;w=600`,
				"Content-Type": "application/problem+json"},
			body: `{"type":"about:blank","title":"Too Many Requests","status":429,` +
				`"detail":"the server's rate-limit key table is full: no new key is taken in until a slot frees; retry after 600 s","retry_after":600}` + "\n"},
		{name: "FailOpen does not admit it", retryAfter: 1500 * time.Millisecond, failOpen: true, status: 429,
			headers: map[string]string{"Retry-After": "2", "RateLimit": `"default";r=0;t=2`},
			body: `{"type":"about:blank","title":"Too Many Requests","status":429,` +
				`"detail":"the server's rate-limit key table is full: no new key is taken in until a slot frees; retry after 2 s","retry_after":2}` + "\n"},
		{name: "a zero wait is still 1 s: never retry now", retryAfter: 0, status: 429,
			headers: map[string]string{"Retry-After": "1", "RateLimit": `"default";r=0;t=1`},
			body: `{"type":"about:blank","title":"Too Many Requests","status":429,` +
				`"detail":"the server's rate-limit key table is full: no new key is taken in until a slot frees; retry after 1 s","retry_after":1}` + "\n"},
		{name: "no slot will free: no Retry-After", retryAfter: algorithms.Never, status: 429,
			headers: map[string]string{"Retry-After": "", "RateLimit": `"default";r=0;t=60`},
			body: `{"type":"about:blank","title":"Too Many Requests","status":429,` +
				`"detail":"the server's rate-limit key table is full: no new key is taken in until a slot frees"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Remaining as a fresh key would have it: the middleware must
			// not advertise it, since nothing is admitted until a slot frees.
			lim := &fakeLimiter{d: algorithms.Decision{TableFull: true, RetryAfter: tc.retryAfter, Remaining: 5, ResetAfter: time.Minute}}
			var errs []error
			next := &hello{}
			m := mustNew(t, httplimit.Config{
				Policy:   algorithms.Policy{Limit: 5, Window: 10 * time.Minute},
				Limiter:  lim,
				FailOpen: tc.failOpen,
				Now:      func() time.Duration { return t0 },
				OnError:  func(_ *http.Request, err error) { errs = append(errs, err) },
			})
			w := do(m.Wrap(next), "GET", "/", "192.0.2.1:1", nil)
			checkResponse(t, w, tc.status, tc.body, tc.headers)
			if next.calls != 0 || len(errs) != 0 {
				t.Errorf("handler called %d times, OnError got %v; want neither", next.calls, errs)
			}
			if got, want := m.Stats(), (httplimit.Stats{Rejected: 1, TableFull: 1}); got != want {
				t.Errorf("Stats() = %+v, want %+v", got, want)
			}
		})
	}
}

func TestNameEscaping(t *testing.T) {
	m := mustNew(t, httplimit.Config{
		Policy: algorithms.Policy{Limit: 1, Window: 500 * time.Millisecond},
		Name:   `per "user" \ tier`,
		Now:    func() time.Duration { return t0 },
	})
	w := do(m.Wrap(&hello{}), "GET", "/", "", nil)
	if got, want := w.Header().Get("RateLimit-Policy"), `"per \"user\" \\ tier";q=1;w=1`; got != want {
		t.Errorf("RateLimit-Policy = %s, want %s", got, want)
	}
}

func TestNewErrors(t *testing.T) {
	good := algorithms.Policy{Limit: 1, Window: time.Second}
	for _, tc := range []struct {
		name string
		cfg  httplimit.Config
		want string // in the error
	}{
		{name: "zero policy", cfg: httplimit.Config{}, want: "invalid policy"},
		{name: "negative window", cfg: httplimit.Config{Policy: algorithms.Policy{Limit: 1, Window: -time.Second}}, want: "window"},
		{name: "limit beyond a header Integer", cfg: httplimit.Config{Policy: algorithms.Policy{Limit: 1e15, Window: 1e16}}, want: "15 digits"},
		{name: "non-ASCII name", cfg: httplimit.Config{Policy: good, Name: "défaut"}, want: "not printable ASCII"},
		{name: "control character in name", cfg: httplimit.Config{Policy: good, Name: "a\nb"}, want: "not printable ASCII"},
		{name: "unknown proxy header", cfg: httplimit.Config{Policy: good, ProxyHeader: "X-Real-IP"}, want: "ProxyHeader"},
		{name: "invalid trusted prefix", cfg: httplimit.Config{Policy: good, TrustedProxies: []netip.Prefix{{}}}, want: "trusted proxy"},
		{name: "bad route pattern", cfg: httplimit.Config{Policy: good, Routes: map[string]httplimit.Route{"GET": {Policy: good}}}, want: `route "GET"`},
		{name: "conflicting route patterns", cfg: httplimit.Config{Policy: good, Routes: map[string]httplimit.Route{
			"/a/{x}/b": {Policy: good}, "/a/b/{y}": {Policy: good}}}, want: "conflicts"},
		{name: "invalid route policy", cfg: httplimit.Config{Policy: good, Routes: map[string]httplimit.Route{"/x": {}}}, want: `route "/x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httplimit.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "httplimit: ") {
				t.Fatalf("New: %v, want an httplimit error containing %q", err, tc.want)
			}
		})
	}
}

// TestConcurrent: many goroutines through one middleware and a keyed
// limiter; every request is counted once and the quota is never exceeded.
func TestConcurrent(t *testing.T) {
	const clients, each, limit = 8, 50, 20
	lim, err := keyed.New(algorithms.Policy{Limit: limit, Window: time.Hour},
		func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewFixedWindow(p) }, keyed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := mustNew(t, httplimit.Config{Policy: algorithms.Policy{Limit: limit, Window: time.Hour}, Limiter: lim,
		Now: func() time.Duration { return t0 }})
	h := m.Wrap(&hello{})
	var wg sync.WaitGroup
	for c := range clients {
		for range each {
			wg.Go(func() { do(h, "GET", "/", fmt.Sprintf("192.0.2.%d:1", c), nil) })
		}
	}
	wg.Wait()
	if got, want := m.Stats(), (httplimit.Stats{Admitted: clients * limit, Rejected: clients * (each - limit)}); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

// BenchmarkMiddleware measures the middleware around an admitting per-IP
// GCRA, without the network: key resolution, decision and headers.
func BenchmarkMiddleware(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  httplimit.Config
		xff  string
	}{
		{name: "peer"},
		{name: "xff=3hops", cfg: httplimit.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
			xff: "6.6.6.6, 198.51.100.7, 10.0.0.3, 10.0.0.2"},
		{name: "routes=2", cfg: httplimit.Config{Routes: map[string]httplimit.Route{
			"GET /api/": {Policy: algorithms.Policy{Limit: 1e9, Window: time.Second}},
			"/login":    {Policy: algorithms.Policy{Limit: 1e9, Window: time.Second}}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := bc.cfg
			cfg.Policy = algorithms.Policy{Limit: 1e9, Window: time.Second}
			m := mustNew(b, cfg)
			h := m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest("GET", "/api/x", nil)
			r.RemoteAddr = "10.0.0.1:443"
			if bc.xff != "" {
				r.Header.Set("X-Forwarded-For", bc.xff)
			}
			w := discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, r)
			}
		})
	}
}

// discard is a ResponseWriter that keeps only its header map.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}
