//go:build !race

package httpexec_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// Every attack here is a few hundred milliseconds of the live engine
// against a server on 127.0.0.1, once with each client.

// eachClient runs f as a subtest with each client.
func eachClient(t *testing.T, f func(t *testing.T, client string)) {
	for _, c := range []string{httpexec.ClientFast, httpexec.ClientStd} {
		t.Run(strings.ReplaceAll(c, "/", "-"), func(t *testing.T) { f(t, c) })
	}
}

// attack runs the live engine through an Executor of cfg's client, with
// keys keys at rate per second for d, and checks what every attack must
// hold: every record reached the collector in order, and every arrival
// due is counted once.
func attack(t *testing.T, cfg httpexec.Config, lcfg live.Config, reject ...int) (result.Run, algorithms.Policy) {
	t.Helper()
	c, err := httpexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if lcfg.MaxInFlight == 0 {
		lcfg.MaxInFlight = 1000
	}
	exec := httpexec.NewExecutor(c, max(cfg.Connections, 1), lcfg.MaxInFlight, reject)
	defer exec.Close()
	run, pol, err := live.RunExecutor(context.Background(), lcfg, call.Target{Name: "http"}, exec)
	if err != nil {
		t.Fatal(err)
	}
	l := run.Live
	if l.Reordered != 0 {
		t.Errorf("%d records reached the collector after a later one", l.Reordered)
	}
	if l.Scheduled != run.Offered+l.Dropped+l.Unsent+run.HTTP.HeldBack {
		t.Errorf("scheduled %d != offered %d + dropped %d + unsent %d + held %d", l.Scheduled, run.Offered, l.Dropped, l.Unsent, run.HTTP.HeldBack)
	}
	if run.Offered != run.Admitted+run.Rejected+run.Errors {
		t.Errorf("offered %d != admitted %d + rejected %d + errors %d", run.Offered, run.Admitted, run.Rejected, run.Errors)
	}
	return run, pol
}

// constant is a live config of one constant workload.
func constant(rate float64, d time.Duration, keys int) live.Config {
	return live.Config{Config: bench.Config{Workload: &workload.Constant{Rate: rate, Duration: d, Keys: keys, Cost: 1}}}
}

// TestExecutorOutcomes: each status goes where it belongs (2xx admitted,
// a reject status rejected, any other an error of its class), Retry-After
// values are tallied, and keys count every request.
func TestExecutorOutcomes(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 5 {
		case 0:
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
		case 1:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(503)
		case 2:
			w.WriteHeader(404)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer srv.Close()
	eachClient(t, func(t *testing.T, client string) {
		n.Store(0)
		lcfg := constant(500, 200*time.Millisecond, 1)
		lcfg.Policy = algorithms.Policy{Limit: 10, Window: time.Second}
		run, _ := attack(t, httpexec.Config{URL: srv.URL, Client: client}, lcfg)
		if run.Offered != 100 || run.Admitted != 40 || run.Rejected != 20 || run.Errors != 40 {
			t.Errorf("offered %d admitted %d rejected %d errors %d; want 100, 40, 20, 40", run.Offered, run.Admitted, run.Rejected, run.Errors)
		}
		want := map[string]int64{"200": 40, "404": 20, "429": 20, "503": 20}
		wantKinds := map[string]int64{httpexec.KindHTTP4xx: 20, httpexec.KindHTTP5xx: 20}
		if fmt.Sprint(run.StatusCodes) != fmt.Sprint(want) || fmt.Sprint(run.ErrorKinds) != fmt.Sprint(wantKinds) {
			t.Errorf("statuses %v, errors %v", run.StatusCodes, run.ErrorKinds)
		}
		h := run.HTTP
		if h.RetryAfterS["2"] != 20 || h.RetryAfterS["7"] != 20 || h.TooManyPct != 20 || h.Responses != 100 || h.Sent != 100 || h.PolicySource != result.PolicyFromConfig {
			t.Errorf("http %+v", h)
		}
		if len(run.Keys) != 1 || run.Keys[0].Offered != 100 || run.Keys[0].Admitted != 40 {
			t.Errorf("keys %+v", run.Keys)
		}
		if run.Latency.Count != 100 || run.Live.Service.Count != 100 {
			t.Errorf("latency count %d, service count %d, want 100", run.Latency.Count, run.Live.Service.Count)
		}
		// A proxy that rejects with 503: told so, its 503s are rejections.
		n.Store(0)
		run, _ = attack(t, httpexec.Config{URL: srv.URL, Client: client}, lcfg, 429, 503)
		if run.Rejected != 40 || run.Errors != 20 || run.ErrorKinds[httpexec.KindHTTP4xx] != 20 {
			t.Errorf("with 503 rejecting: rejected %d, errors %v", run.Rejected, run.ErrorKinds)
		}
	})
}

// TestExecutorKeysInHeader: each arrival's key travels in the key header.
func TestExecutorKeysInHeader(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Key")+"/"+r.Header.Get("X-Extra")]++
		mu.Unlock()
	}))
	defer srv.Close()
	eachClient(t, func(t *testing.T, client string) {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		run, _ := attack(t, httpexec.Config{URL: srv.URL, Client: client, KeyHeader: "X-Key", Header: http.Header{"X-Extra": {"1"}}},
			constant(600, 200*time.Millisecond, 3))
		mu.Lock()
		defer mu.Unlock()
		if seen["k0/1"] != 40 || seen["k1/1"] != 40 || seen["k2/1"] != 40 || run.KeyCount != 3 {
			t.Errorf("server saw %v, client %d keys", seen, run.KeyCount)
		}
	})
}

// TestExecutorPolicyFromServer: the policy comes from RateLimit-Policy,
// with the theory of the algorithm named; without one, no limit is known
// (none is made up from the offered rate): no ratio, and a warning; a
// limit given without a window is per second.
func TestExecutorPolicyFromServer(t *testing.T) {
	with := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"api";q=42;w=10`)
	}))
	defer with.Close()
	without := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer without.Close()
	eachClient(t, func(t *testing.T, client string) {
		lcfg := constant(200, 100*time.Millisecond, 1)
		lcfg.Theory = func(p algorithms.Policy) int64 { return 2 * p.Limit } // a fixed window's
		run, pol := attack(t, httpexec.Config{URL: with.URL, Client: client}, lcfg)
		if pol.Limit != 42 || pol.Window != 10*time.Second || run.HTTP.PolicySource != result.PolicyFromServer || run.TheoryMaxInWindow != 84 {
			t.Errorf("policy %+v from %q, theory %d", pol, run.HTTP.PolicySource, run.TheoryMaxInWindow)
		}
		run, pol = attack(t, httpexec.Config{URL: without.URL, Client: client}, constant(200, 100*time.Millisecond, 1))
		if pol.Limit != 0 || pol.Window != time.Second || run.HTTP.PolicySource != result.PolicyNone || run.BurstRatio != 0 || run.MaxAdmittedInWindow == 0 {
			t.Errorf("policy %+v from %q, burst ratio %v, most in 1s %d", pol, run.HTTP.PolicySource, run.BurstRatio, run.MaxAdmittedInWindow)
		}
		if ws := result.Warnings([]result.Run{run}); !slices.ContainsFunc(ws, func(w result.Warning) bool { return w.Kind == result.WarnNoPolicy }) {
			t.Errorf("warnings %+v: want the missing policy", ws)
		}
		lcfg = constant(200, 100*time.Millisecond, 1)
		lcfg.Policy.Limit = 30
		run, pol = attack(t, httpexec.Config{URL: without.URL, Client: client}, lcfg)
		if pol.Limit != 30 || pol.Window != time.Second || run.HTTP.PolicySource != result.PolicyFromConfig {
			t.Errorf("-limit 30 alone: policy %+v from %q", pol, run.HTTP.PolicySource)
		}
	})
}

// TestExecutorConnections: keep-alive connections carry the requests, and
// a server that closes them (Connection: close, idle connections) costs
// next to nothing: the client reconnects. A request written in the
// instant the server closes an idle connection is lost, and counted once
// as an error (net/http writes a GET again instead, and counts both).
func TestExecutorConnections(t *testing.T) {
	var n atomic.Int64
	closing := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%10 == 0 {
			w.Header().Set("Connection", "close")
		}
	}))
	closing.Config.IdleTimeout = 5 * time.Millisecond // closes connections idle between arrivals
	closing.Start()
	defer closing.Close()
	quiet := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer quiet.Close()
	eachClient(t, func(t *testing.T, client string) {
		cfg := httpexec.Config{URL: closing.URL, Client: client, Connections: 64}
		run, _ := attack(t, cfg, constant(500, 300*time.Millisecond, 1))
		lost := run.ErrorKinds["connection_reset"] + run.ErrorKinds["connection_closed"]
		if run.Admitted+run.Errors != 150 || run.Errors != lost || lost > 8 || run.HTTP.Sent < run.Offered-lost {
			t.Errorf("admitted %d of %d, errors %v, sent %d: want every request answered but a few lost to a closing connection",
				run.Admitted, run.Offered, run.ErrorKinds, run.HTTP.Sent)
		}
		// Connections kept alive, none closed: nothing is lost.
		cfg.URL = quiet.URL
		run, _ = attack(t, cfg, constant(1000, 200*time.Millisecond, 1))
		if run.Admitted != 200 || run.Errors != 0 || run.HTTP.Sent != 200 {
			t.Errorf("quiet server: admitted %d of %d, errors %v, sent %d", run.Admitted, run.Offered, run.ErrorKinds, run.HTTP.Sent)
		}
	})
}

// TestExecutorTimeoutsAndDrops: requests slower than the timeout fail as
// timeouts; arrivals due while MaxInFlight are unanswered are dropped.
func TestExecutorTimeoutsAndDrops(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	eachClient(t, func(t *testing.T, client string) {
		lcfg := constant(200, 100*time.Millisecond, 1)
		lcfg.MaxInFlight, lcfg.Policy = 5, algorithms.Policy{Limit: 1, Window: time.Second}
		start := time.Now()
		run, _ := attack(t, httpexec.Config{URL: srv.URL, Client: client, Timeout: 150 * time.Millisecond, Connections: 5}, lcfg)
		if run.Offered != 5 || run.ErrorKinds["timeout"] != 5 || run.Live.Dropped != 15 {
			t.Errorf("offered %d, errors %v, dropped %d; want 5 timeouts and 15 dropped", run.Offered, run.ErrorKinds, run.Live.Dropped)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("took %v", took)
		}
		if s := run.Live.Service; s.P50 < int64(130*time.Millisecond) || s.Max > int64(400*time.Millisecond) {
			t.Errorf("timed out after %v (p50) to %v; want about 150ms", time.Duration(s.P50), time.Duration(s.Max))
		}
	})
}

// TestExecutorServerGone: nothing listens: every request is a refused
// connection, counted once, none sent.
func TestExecutorServerGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	eachClient(t, func(t *testing.T, client string) {
		run, _ := attack(t, httpexec.Config{URL: url, Client: client}, constant(200, 100*time.Millisecond, 1))
		if run.Offered != 20 || run.Errors != 20 || run.ErrorKinds["connection_refused"] != 20 || run.HTTP.Sent != 0 {
			t.Errorf("offered %d, errors %v, sent %d", run.Offered, run.ErrorKinds, run.HTTP.Sent)
		}
	})
}

// TestExecutorSentMatchesServer: a server that reads every other request
// and drops its connection without an answer sees as many requests as
// the client says it sent; each dropped one is one error.
func TestExecutorSentMatchesServer(t *testing.T) {
	var read atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go dropEveryOther(c, &read)
		}
	}()
	eachClient(t, func(t *testing.T, client string) {
		read.Store(0)
		run, _ := attack(t, httpexec.Config{URL: "http://" + ln.Addr().String(), Method: http.MethodPost, Body: []byte("x"), Client: client},
			constant(200, 200*time.Millisecond, 1))
		if got := read.Load(); got != run.HTTP.Sent || run.Admitted+run.Errors != run.Offered || run.Errors == 0 {
			t.Errorf("server read %d, client sent %d: admitted %d, errors %v of %d", got, run.HTTP.Sent, run.Admitted, run.ErrorKinds, run.Offered)
		}
	})
}

// dropEveryOther answers the first request on c, then reads the next and
// closes c without an answer.
func dropEveryOther(c net.Conn, read *atomic.Int64) {
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; ; i++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		read.Add(1)
		if i%2 == 1 {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	}
}
