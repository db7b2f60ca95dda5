//go:build !race

package live_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// fakeServer is an Executor that answers each request from a goroutine of
// its own after delay, as a server behind a connection would: key "k0"
// gets 429 with Retry-After 1, "k1" a 503, "k2" a 404, the others 200
// with 7 remaining for a second, and every answer advertises 100 per
// second. hang makes it never answer
// until Abort.
type fakeServer struct {
	delay   time.Duration
	hang    bool
	started atomic.Int64
	aborted chan struct{}
	once    sync.Once
}

func newFakeServer(delay time.Duration) *fakeServer {
	return &fakeServer{delay: delay, aborted: make(chan struct{})}
}

func (f *fakeServer) Start(r call.Request, done chan<- call.Outcome) {
	f.started.Add(1)
	go func() {
		o := call.Outcome{Seq: r.Seq, Sent: time.Now(), Attempts: 1, RetryAfter: call.NoRetryAfter, Remaining: -1, ResetAfter: -1}
		if f.hang {
			<-f.aborted
		} else if f.delay > 0 {
			select {
			case <-time.After(f.delay):
			case <-f.aborted:
			}
		}
		o.Done = time.Now()
		select {
		case <-f.aborted:
			o.Class, o.Kind, o.Err = call.Failed, call.KindCanceled, errors.New("aborted")
			done <- o
			return
		default:
		}
		if r.Policy {
			o.Policy = algorithms.Policy{Limit: 100, Window: time.Second}
		}
		switch r.Key {
		case "k0":
			o.Class, o.Status, o.RetryAfter = call.Rejected, 429, 1
		case "k1":
			o.Class, o.Status, o.Kind = call.Failed, 503, "http_5xx"
		case "k2":
			o.Class, o.Status, o.Kind = call.Failed, 404, "http_4xx"
		default:
			o.Class, o.Status, o.Remaining, o.ResetAfter = call.Admitted, 200, 7, time.Second
		}
		done <- o
	}()
}

func (f *fakeServer) Abort() { f.once.Do(func() { close(f.aborted) }) }

func execConfig(rate float64, d time.Duration, keys int) live.Config {
	return live.Config{
		Config:  bench.Config{Workload: &workload.Constant{Rate: rate, Duration: d, Keys: keys, Cost: 1}},
		Workers: 4, MaxInFlight: 10000,
	}
}

// TestExecutorCounts: every answer lands in exactly one count, the policy
// the answers advertise is learnt, and what only an executor's answers say
// (statuses, Retry-After, requests sent) is in Run.HTTP.
func TestExecutorCounts(t *testing.T) {
	srv := newFakeServer(2 * time.Millisecond)
	cfg := execConfig(1000, time.Second, 5) // k0..k4 round-robin: 200 of each
	run, pol, err := live.RunExecutor(context.Background(), cfg, call.Target{Name: "http", Backend: "fake"}, srv)
	if err != nil {
		t.Fatal(err)
	}
	if pol.Limit != 100 || pol.Window != time.Second || run.HTTP.PolicySource != result.PolicyFromServer {
		t.Errorf("policy %v from %q, want 100/1s from the answers", pol, run.HTTP.PolicySource)
	}
	if run.Offered != 1000 || run.Admitted != 400 || run.Rejected != 200 || run.Errors != 400 {
		t.Errorf("offered %d admitted %d rejected %d errors %d; want 1000, 400, 200, 400",
			run.Offered, run.Admitted, run.Rejected, run.Errors)
	}
	if run.StatusCodes["200"] != 400 || run.StatusCodes["429"] != 200 || run.StatusCodes["503"] != 200 || run.StatusCodes["404"] != 200 {
		t.Errorf("status codes %v", run.StatusCodes)
	}
	if run.ErrorKinds["http_5xx"] != 200 || run.ErrorKinds["http_4xx"] != 200 {
		t.Errorf("error kinds %v", run.ErrorKinds)
	}
	h := run.HTTP
	if h.Responses != 1000 || h.Sent != 1000 || h.RetryAfterS["1"] != 200 || h.TooManyPct != 20 {
		t.Errorf("responses %d sent %d retry-after %v 429s %.1f%%", h.Responses, h.Sent, h.RetryAfterS, h.TooManyPct)
	}
	if l := run.Live; l.Scheduled != 1000 || run.Latency.P50 < int64(2*time.Millisecond) || l.Service.P50 < int64(2*time.Millisecond) {
		t.Errorf("scheduled %d, latency p50 %v, service p50 %v: want 1000 and at least the server's 2ms",
			l.Scheduled, time.Duration(run.Latency.P50), time.Duration(l.Service.P50))
	}
	if run.Live.Reordered != 0 {
		t.Errorf("%d answers reached the collector out of order", run.Live.Reordered)
	}
	// The decisions count at send instants; the server decided up to an
	// answer later.
	if u := run.TimingUncertaintyNS; u != run.Live.Service.P99 || u < int64(2*time.Millisecond) {
		t.Errorf("timing uncertainty %v, service p99 %v: want the one the other, at least the server's 2ms", time.Duration(u), time.Duration(run.Live.Service.P99))
	}
}

// TestExecutorTrace: the trace of an executor pass holds every request
// sent, in send order though answers come back out of it over four
// workers, each row with its answer.
func TestExecutorTrace(t *testing.T) {
	srv := newFakeServer(2 * time.Millisecond)
	var tr rowsTracer
	cfg := execConfig(2000, 500*time.Millisecond, 5)
	cfg.Trace = &tr
	run, _, err := live.RunExecutor(context.Background(), cfg, call.Target{Name: "http"}, srv)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(tr.rows)) != run.Offered || run.Offered == 0 {
		t.Fatalf("%d rows for %d requests", len(tr.rows), run.Offered)
	}
	want := map[string]struct {
		status    int
		outcome   call.Class
		remaining int64
	}{"k0": {429, call.Rejected, -1}, "k1": {503, call.Failed, -1}, "k2": {404, call.Failed, -1}, "k3": {200, call.Admitted, 7}, "k4": {200, call.Admitted, 7}}
	for i, r := range tr.rows {
		w := want[r.Key]
		switch {
		case r.Seq != int64(i) || r.Algorithm != "http":
			t.Fatalf("row %d: seq %d of %q", i, r.Seq, r.Algorithm)
		case i > 0 && r.Intended < tr.rows[i-1].Intended:
			t.Fatalf("row %d intended at %v, before row %d's %v", i, r.Intended, i-1, tr.rows[i-1].Intended)
		case r.Sent < r.Intended || r.Done < r.Sent+2*time.Millisecond:
			t.Fatalf("row %d: intended %v sent %v done %v; the server takes 2ms", i, r.Intended, r.Sent, r.Done)
		case r.Status != w.status || r.Outcome != w.outcome || r.Remaining != w.remaining || r.Attempts != 1:
			t.Fatalf("row %d of %s: %+v", i, r.Key, r)
		case r.Outcome == call.Rejected && r.RetryAfter != time.Second, r.Outcome == call.Failed && r.ErrorKind == "":
			t.Fatalf("row %d: %+v", i, r)
		}
	}
}

// TestExecutorHonorRetryAfter: after a 429 with Retry-After 1 for k0, the
// arrivals of k0 in the next second are held back, not sent.
func TestExecutorHonorRetryAfter(t *testing.T) {
	srv := newFakeServer(0)
	cfg := execConfig(1000, time.Second, 5)
	cfg.HonorRetryAfter = true
	cfg.Policy = algorithms.Policy{Limit: 100, Window: time.Second}
	run, _, err := live.RunExecutor(context.Background(), cfg, call.Target{Name: "http"}, srv)
	if err != nil {
		t.Fatal(err)
	}
	// k0 is sent once, then held for a second: its other 199 arrivals.
	if h := run.HTTP.HeldBack; h < 190 || h > 199 || run.StatusCodes["429"] > 10 {
		t.Errorf("held back %d, 429s %d: want k0 held after its first 429", h, run.StatusCodes["429"])
	}
	if got := run.Offered + run.HTTP.HeldBack + run.Live.Dropped; got != run.Live.Scheduled {
		t.Errorf("offered %d + held %d + dropped %d != scheduled %d", run.Offered, run.HTTP.HeldBack, run.Live.Dropped, run.Live.Scheduled)
	}
}

// TestExecutorClosedLoop: a closed loop keeps Connections requests in
// flight for the span, each sent when one ends.
func TestExecutorClosedLoop(t *testing.T) {
	srv := newFakeServer(5 * time.Millisecond)
	cfg := execConfig(1e9, 500*time.Millisecond, 1)
	cfg.Closed, cfg.Connections = true, 8
	cfg.Policy = algorithms.Policy{Limit: 100, Window: time.Second}
	run, _, err := live.RunExecutor(context.Background(), cfg, call.Target{Name: "http"}, srv)
	if err != nil {
		t.Fatal(err)
	}
	// 8 in flight, 5ms each, for 0.5s: about 800, fewer when the host is
	// busy; never more, since a request waits for one to end.
	if run.Offered < 200 || run.Offered > 8*100+8 {
		t.Errorf("offered %d in 0.5s over 8 connections of 5ms", run.Offered)
	}
	if late := run.Live.Lateness.P50; late > int64(time.Millisecond) {
		t.Errorf("lateness p50 %v: a closed loop sends when it intends", time.Duration(late))
	}
}

// TestExecutorInterrupt: a server that never answers holds every request
// until the interrupt, which aborts them: counted as canceled, and the
// pass returns within a second.
func TestExecutorInterrupt(t *testing.T) {
	srv := newFakeServer(0)
	srv.hang = true
	cfg := execConfig(1000, time.Hour, 1)
	cfg.Policy = algorithms.Policy{Limit: 100, Window: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	run, _, err := live.RunExecutor(ctx, cfg, call.Target{Name: "http"}, srv)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 1300*time.Millisecond {
		t.Errorf("returned %v after the start, 300ms after which it was interrupted", took)
	}
	if run.Offered < 100 || run.ErrorKinds[call.KindCanceled] != run.Offered || run.Offered != srv.started.Load() {
		t.Errorf("offered %d, canceled %d, started %d: want every request sent counted once, as canceled",
			run.Offered, run.ErrorKinds[call.KindCanceled], srv.started.Load())
	}
}
