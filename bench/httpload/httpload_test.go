//go:build !race

package httpload_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/httpload"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// Every attack here is a few hundred milliseconds against an httptest
// server on 127.0.0.1.

// constant is a constant workload of rate per second for d.
func constant(rate float64, d time.Duration) workload.Spec {
	return workload.Spec{Name: "constant", Rate: rate, Duration: d}
}

// engines are the fast client's engines on this OS.
func engines() []string {
	if runtime.GOOS == "linux" {
		return []string{httpload.EngineGoroutines, httpload.EngineEpoll}
	}
	return []string{httpload.EngineGoroutines}
}

// forEngines runs f as a subtest for each engine.
func forEngines(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range engines() {
		t.Run(e, func(t *testing.T) { f(t, e) })
	}
}

// attack runs cfg and checks what every attack must hold: the workers'
// records reached the Recorder in order.
func attack(t *testing.T, cfg httpload.Config) httpload.Result {
	t.Helper()
	res, err := httpload.Attack(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Run.Live; l != nil && l.Reordered != 0 {
		t.Errorf("%d records reached the collector after a later one", l.Reordered)
	}
	return res
}

// TestOutcomes: each status goes where it belongs (2xx admitted, 429
// rejected, 5xx an error, others only counted), and Retry-After values
// are tallied.
func TestOutcomes(t *testing.T) {
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
	forEngines(t, func(t *testing.T, engine string) {
		n.Store(0)
		res := attack(t, httpload.Config{URL: srv.URL, Workload: constant(500, 200*time.Millisecond), Policy: algorithms.Policy{Limit: 10, Window: time.Second}, Engine: engine})
		outcomes(t, res)
	})
}

func outcomes(t *testing.T, res httpload.Result) {
	run := res.Run
	if run.Offered != 100 || run.Admitted != 40 || run.Rejected != 20 || run.Errors != 20 {
		t.Errorf("offered %d admitted %d rejected %d errors %d; want 100, 40, 20, 20", run.Offered, run.Admitted, run.Rejected, run.Errors)
	}
	want := map[string]int64{"200": 40, "404": 20, "429": 20, "503": 20}
	if fmt.Sprint(run.StatusCodes) != fmt.Sprint(want) || run.ErrorKinds[httpload.KindHTTP5xx] != 20 || len(run.ErrorKinds) != 1 {
		t.Errorf("statuses %v, errors %v", run.StatusCodes, run.ErrorKinds)
	}
	h := run.HTTP
	if h.RetryAfterS["2"] != 20 || h.RetryAfterS["7"] != 20 || h.TooManyPct != 20 || h.Responses != 100 || h.PolicySource != "config" {
		t.Errorf("http %+v", h)
	}
	// Keys count every request, those the series leave out included.
	if len(run.Keys) != 1 || run.Keys[0].Offered != 100 || run.Keys[0].Admitted != 40 {
		t.Errorf("keys %+v", run.Keys)
	}
	if run.Live.Scheduled != 100 || run.Live.Dropped != 0 || run.Latency.Count != 100 || run.Live.Service.Count != 100 {
		t.Errorf("live %+v, latency %+v", run.Live, run.Latency)
	}
}

// TestKeysInHeader: each arrival's key travels in the key header.
func TestKeysInHeader(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Key")]++
		mu.Unlock()
	}))
	defer srv.Close()
	forEngines(t, func(t *testing.T, engine string) {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		spec := constant(600, 200*time.Millisecond)
		spec.Keys = 3
		res := attack(t, httpload.Config{URL: srv.URL, Workload: spec, KeyHeader: "X-Key", Header: http.Header{"X-Extra": {"1"}}, Engine: engine})
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 3 || seen["k0"] != 40 || seen["k1"] != 40 || seen["k2"] != 40 {
			t.Errorf("keys seen %v: want 40 each of k0, k1, k2 (round robin)", seen)
		}
		if res.Run.KeyCount != 3 || res.Run.HTTP.KeyHeader != "X-Key" {
			t.Errorf("run: %d keys, key header %q", res.Run.KeyCount, res.Run.HTTP.KeyHeader)
		}
	})
}

// TestPolicyFromServer: the policy comes from RateLimit-Policy, or
// without one from the offered rate, with a warning.
func TestPolicyFromServer(t *testing.T) {
	with := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"api";q=42;w=10`)
	}))
	defer with.Close()
	res := attack(t, httpload.Config{URL: with.URL, Workload: constant(200, 100*time.Millisecond), Algorithm: "fixed-window"})
	if p := res.Policy; p.Limit != 42 || p.Window != 10*time.Second || res.Run.HTTP.PolicySource != "RateLimit-Policy" || res.Run.TheoryMaxInWindow != 84 {
		t.Errorf("policy %+v from %q, theory %d", p, res.Run.HTTP.PolicySource, res.Run.TheoryMaxInWindow)
	}
	without := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer without.Close()
	res = attack(t, httpload.Config{URL: without.URL, Workload: constant(200, 100*time.Millisecond)})
	if p := res.Policy; p.Limit != 200 || p.Window != time.Second || res.Run.HTTP.PolicySource != "none" || res.Run.TheoryMaxInWindow != 0 {
		t.Errorf("policy %+v from %q", p, res.Run.HTTP.PolicySource)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "no RateLimit-Policy") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// TestConnectionsReused: keep-alive connections carry the requests, and a
// server that closes them (Connection: close, or idle connections) costs
// no error: the client reconnects.
func TestConnectionsReused(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%10 == 0 {
			w.Header().Set("Connection", "close")
		}
	}))
	srv.Config.IdleTimeout = 5 * time.Millisecond // closes connections idle between arrivals
	srv.Start()
	defer srv.Close()
	quiet := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer quiet.Close()
	for _, client := range append(engines(), httpload.ClientStd) {
		cfg := httpload.Config{URL: srv.URL, Workload: constant(500, 300*time.Millisecond), Client: httpload.ClientFast, Engine: client}
		if client == httpload.ClientStd {
			cfg.Client, cfg.Engine = client, ""
		}
		res := attack(t, cfg)
		run := res.Run
		wantEngine := cfg.Engine
		if wantEngine == "" {
			wantEngine = httpload.EngineGoroutines // net/http's
		}
		if run.Admitted != 150 || run.Errors != 0 || run.HTTP.Client != cfg.Client || run.HTTP.Engine != wantEngine {
			t.Errorf("%s: admitted %d of %d, errors %v, client %q engine %q", client, run.Admitted, run.Offered, run.ErrorKinds,
				run.HTTP.Client, run.HTTP.Engine)
		}
		if c := run.HTTP.Connections; c < 15 || c > 150 {
			t.Errorf("%s: %d connections for 150 requests, a tenth of them told to close", client, c)
		}
		// Connections kept alive, no closing: most requests reuse one.
		// (A handful carry them all on a quiet machine; under -race on a
		// busy one, arrivals that find every connection busy open more:
		// 28 seen.)
		cfg.URL, cfg.Workload = quiet.URL, constant(1000, 200*time.Millisecond)
		res = attack(t, cfg)
		if c := res.Run.HTTP.Connections; res.Run.Admitted != 200 || c > 64 {
			t.Errorf("%s: admitted %d over %d connections", client, res.Run.Admitted, c)
		}
	}
}

// TestChunked: a streamed (chunked) response is read to its end.
func TestChunked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range 3 {
			fmt.Fprint(w, strings.Repeat("x", 5000))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	forEngines(t, func(t *testing.T, engine string) {
		res := attack(t, httpload.Config{URL: srv.URL, Workload: constant(200, 100*time.Millisecond), Engine: engine})
		if res.Run.Admitted != 20 || res.Run.Errors != 0 {
			t.Errorf("admitted %d, errors %v", res.Run.Admitted, res.Run.ErrorKinds)
		}
	})
}

// TestTimeoutsAndDrops: requests slower than the timeout fail as
// timeouts; arrivals due while MaxInFlight are unanswered are dropped.
func TestTimeoutsAndDrops(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	forEngines(t, func(t *testing.T, engine string) {
		start := time.Now()
		res := attack(t, httpload.Config{URL: srv.URL, Workload: constant(200, 100*time.Millisecond), Timeout: 150 * time.Millisecond,
			MaxInFlight: 5, Connections: 5, Policy: algorithms.Policy{Limit: 1, Window: time.Second}, Engine: engine})
		run := res.Run
		if run.Offered != 5 || run.ErrorKinds[httpload.KindTimeout] != 5 || run.Live.Dropped != 15 {
			t.Errorf("offered %d, errors %v, dropped %d; want 5 timeouts and 15 dropped", run.Offered, run.ErrorKinds, run.Live.Dropped)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("took %v", took)
		}
		if ws := strings.Join(res.Warnings, "\n"); !strings.Contains(ws, "15 of 20 arrivals (75.00%) dropped") || !strings.Contains(ws, "5 of 5 requests failed (timeout 5)") {
			t.Errorf("warnings %q: want the drops and the errors", res.Warnings)
		}
		if s := run.Live.Service; s.P50 < int64(130*time.Millisecond) || s.Max > int64(300*time.Millisecond) { // 0.9 to 1.05 Timeout
			t.Errorf("timed out after %v (p50) to %v; want about 150ms", time.Duration(s.P50), time.Duration(s.Max))
		}
	})
}

// TestServerGone: nothing listens: every request is a refused connection.
func TestServerGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	cfg := httpload.Config{URL: url, Workload: constant(200, 100*time.Millisecond)}
	if err := httpload.Check(context.Background(), cfg); !errors.Is(err, httpload.ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Check: %v", err)
	}
	forEngines(t, func(t *testing.T, engine string) {
		cfg.Engine = engine
		res := attack(t, cfg)
		if res.Run.Errors != 20 || res.Run.ErrorKinds[httpload.KindRefused] != 20 {
			t.Errorf("errors %v", res.Run.ErrorKinds)
		}
	})
}

// TestInterrupt: cancelling the context stops the attack within a second,
// the requests in flight counted as canceled.
func TestInterrupt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") == "k1" { // every other request hangs
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	for _, client := range append(engines(), httpload.ClientStd) {
		cfg := httpload.Config{URL: srv.URL, KeyHeader: "X-Key", Client: httpload.ClientFast, Engine: client}
		if client == httpload.ClientStd {
			cfg.Client, cfg.Engine = client, ""
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cfg.Workload = constant(200, time.Hour)
		cfg.Workload.Keys = 2
		start := time.Now()
		res, err := httpload.Attack(ctx, cfg)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the context's error", client, err)
		}
		if took := time.Since(start); took > 1200*time.Millisecond {
			t.Errorf("%s: stopped after %v", client, took)
		}
		run := res.Run
		if run.Admitted < 15 || run.ErrorKinds[httpload.KindCanceled] < 15 || run.Errors != run.ErrorKinds[httpload.KindCanceled] {
			t.Errorf("%s: admitted %d, errors %v", client, run.Admitted, run.ErrorKinds)
		}
		if run.Latency.Count != run.Admitted { // an aborted request has no latency
			t.Errorf("%s: %d latencies for %d answers", client, run.Latency.Count, run.Admitted)
		}
	}
}

// TestClosedLoop: no schedule; each connection sends when answered.
func TestClosedLoop(t *testing.T) {
	var inflight, most atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
	}))
	defer srv.Close()
	forEngines(t, func(t *testing.T, engine string) {
		most.Store(0)
		res := attack(t, httpload.Config{URL: srv.URL, Workload: workload.Spec{Name: "zipf", Keys: 10, Duration: 200 * time.Millisecond},
			Closed: true, Connections: 3, KeyHeader: "X-Key", Engine: engine})
		run := res.Run
		if run.Admitted < 60 || run.Live.Workers != 3 || most.Load() != 3 || run.KeyCount < 3 {
			t.Errorf("admitted %d over %d workers, at most %d at once, %d keys", run.Admitted, run.Live.Workers, most.Load(), run.KeyCount)
		}
		if run.Live.Lateness.Max != 1 || run.Latency.P50 != run.Live.Service.P50 { // recorded at the 1ns floor: no lateness
			t.Errorf("lateness %+v, latency p50 %d, service p50 %d", run.Live.Lateness, run.Latency.P50, run.Live.Service.P50)
		}
	})
	if _, err := httpload.Attack(context.Background(), httpload.Config{URL: srv.URL, Closed: true,
		Workload: workload.Spec{Name: "burst", Duration: time.Second}}); err == nil {
		t.Error("a closed loop took the burst workload")
	}
}

// TestHTTPS: https goes through net/http.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	res := attack(t, httpload.Config{URL: srv.URL, Workload: constant(200, 100*time.Millisecond), Insecure: true})
	if res.Run.Admitted != 20 || res.Run.HTTP.Client != httpload.ClientStd {
		t.Errorf("admitted %d with %s", res.Run.Admitted, res.Run.HTTP.Client)
	}
	if _, err := httpload.Attack(context.Background(), httpload.Config{URL: srv.URL, Workload: constant(1, time.Second), Client: httpload.ClientFast}); !errors.Is(err, httpload.ErrBadRequest) {
		t.Errorf("fast client on https: %v", err)
	}
}

func TestErrorKind(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{refused, httpload.KindRefused},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, httpload.KindReset},
		{fmt.Errorf("write: %w", syscall.EPIPE), httpload.KindReset},
		{os.ErrDeadlineExceeded, httpload.KindTimeout},
		{context.DeadlineExceeded, httpload.KindTimeout},
		{fmt.Errorf("read: %w", errors.New("unexpected EOF")), httpload.KindOther},
		{fmt.Errorf("wrapped: %w", context.Canceled), httpload.KindCanceled},
		{&net.DNSError{Err: "no such host", Name: "nope.invalid"}, httpload.KindOther},
	} {
		if got := httpload.ErrorKind(tc.err); got != tc.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestResultJSON: an attack's result reads back as a result.json.
func TestResultJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	res := attack(t, httpload.Config{URL: srv.URL, Workload: constant(100, 100*time.Millisecond)})
	r := &result.Result{Meta: result.NewMeta("http", 1, nil), Policy: result.PolicyOf(res.Policy),
		Workload: map[string]any{"name": "constant"}, Runs: []result.Run{res.Run}}
	path := t.TempDir() + "/result.json"
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Runs[0]; got.StatusCodes["200"] != 10 || got.HTTP == nil || got.HTTP.URL != srv.URL || got.Live == nil {
		t.Errorf("read back %+v", got)
	}
}
