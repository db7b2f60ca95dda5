package fit_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/fit"
	"github.com/ratebench/ratebench/workload"
)

// requests collects a simulation's trace as a fit reads it.
type requests []fit.Request

func (r *requests) Row(row bench.TraceRow) {
	*r = append(*r, fit.Request{Sent: row.Sent, Done: row.Done, Key: row.Key, Admitted: row.Outcome == bench.Admitted})
}

// simTrace runs algo with p over spec in the simulator and returns its
// trace.
func simTrace(t *testing.T, algo string, p algorithms.Policy, spec workload.Spec) []fit.Request {
	t.Helper()
	e, err := all.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	var reqs requests
	cfg := bench.Config{Policy: p, Workload: spec, Trace: &reqs}
	target := bench.Target{Name: algo, New: func() (algorithms.Limiter, error) { return e.New(p) }}
	if _, err := bench.Simulate(context.Background(), cfg, []bench.Target{target}); err != nil {
		t.Fatal(err)
	}
	return reqs
}

// TestFitSimTraces: a simulated trace of each model is fitted by that
// model (or its exact equivalent) at 100% agreement, with its policy.
func TestFitSimTraces(t *testing.T) {
	// Poisson at twice the rate: random gaps tell the models apart,
	// overload shows the rate, and window edges the phase.
	spec := func(rate float64) workload.Spec {
		return workload.Spec{Name: "poisson", Rate: rate, Duration: 30 * time.Second, Keys: 1, Cost: 1, Seed: 5}
	}
	for _, tc := range []struct {
		algo string
		p    algorithms.Policy
		want string // the fitted model
	}{
		{algo: "gcra", p: algorithms.Policy{Limit: 50, Window: time.Second, Burst: 20}, want: "gcra"},
		{algo: "token-bucket", p: algorithms.Policy{Limit: 40, Window: time.Second, Burst: 10}, want: "gcra"},
		{algo: "fixed-window", p: algorithms.Policy{Limit: 30, Window: time.Second}, want: "fixed-window"},
		{algo: "sliding-log", p: algorithms.Policy{Limit: 20, Window: time.Second}, want: "sliding-log"},
		{algo: "sliding-counter", p: algorithms.Policy{Limit: 40, Window: time.Second}, want: "sliding-counter"},
		// Neither a whole rate per second nor a window of one.
		{algo: "gcra", p: algorithms.Policy{Limit: 100, Window: time.Minute, Burst: 5}, want: "gcra"},
		{algo: "gcra", p: algorithms.Policy{Limit: 25, Window: 2 * time.Second, Burst: 25}, want: "gcra"},
		{algo: "sliding-log", p: algorithms.Policy{Limit: 20, Window: 1500 * time.Millisecond}, want: "sliding-log"},
	} {
		t.Run(tc.algo+"/"+tc.p.String(), func(t *testing.T) {
			reqs := simTrace(t, tc.algo, tc.p, spec(2*tc.p.Rate()))
			res, err := fit.Run(reqs, fit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b := res.Best
			if b.Algorithm != tc.want || b.AgreementPct != 100 {
				for _, f := range res.Fits {
					t.Logf("%s: %.2f%% (%d misses, %d ambiguous)", f, f.AgreementPct, f.Misses, f.Ambiguous)
				}
				t.Fatalf("best %s at %.2f%%, want %s at 100%%", b, b.AgreementPct, tc.want)
			}
			rate := float64(b.Limit) / time.Duration(b.WindowNS).Seconds()
			if d := rate/tc.p.Rate() - 1; d > 0.01 || d < -0.01 {
				t.Errorf("rate %.3f/s, want %.3f/s within 1%%", rate, tc.p.Rate())
			}
			if want := tc.p.WithDefaults().Burst; tc.want == "gcra" && (b.Burst < want-1 || b.Burst > want+1) {
				t.Errorf("capacity %d, want %d within 1", b.Burst, want)
			}
			if tc.want != "gcra" && (b.Limit != tc.p.Limit || b.WindowNS != int64(tc.p.Window)) {
				t.Errorf("%d per %v, want %d per %v", b.Limit, time.Duration(b.WindowNS), tc.p.Limit, tc.p.Window)
			}
			if tc.want == "fixed-window" && b.PhaseNS != 0 {
				t.Errorf("phase %v, want windows at multiples of W", time.Duration(b.PhaseNS))
			}
		})
	}
}
