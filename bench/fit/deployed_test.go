//go:build !race

// Built without -race only: see fit_test.go.

package fit_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/workload"
)

// TestFitDeployedSimTraces: a simulated trace of go-chi/httprate's and of
// HAProxy's limiter, made by the algorithm itself, is fitted back to its
// own model, best of all, at 99.9% or more, with its limit and window.
// HAProxy's is sent at its limit's rate: above it, every request counted,
// the first burst is all it ever admits, which a bucket explains as well.
func TestFitDeployedSimTraces(t *testing.T) {
	for _, tc := range []struct {
		algo     string
		p        algorithms.Policy
		rate     float64 // of the Poisson arrivals, times L/W
		duration time.Duration
	}{
		{algo: "httprate", p: algorithms.Policy{Limit: 50, Window: time.Second}, rate: 2, duration: 30 * time.Second},
		{algo: "httprate", p: algorithms.Policy{Limit: 100, Window: time.Minute}, rate: 2, duration: 5 * time.Minute},
		{algo: "haproxy-req-rate", p: algorithms.Policy{Limit: 50, Window: time.Second}, rate: 1, duration: 30 * time.Second},
		{algo: "haproxy-req-rate", p: algorithms.Policy{Limit: 100, Window: 10 * time.Second}, rate: 1, duration: 2 * time.Minute},
	} {
		t.Run(tc.algo+"/"+tc.p.String(), func(t *testing.T) {
			spec := &workload.Poisson{Rate: tc.rate * tc.p.Rate(), Duration: tc.duration, Keys: 1, Cost: 1, Seed: 5}
			res, err := fit.Run(simTrace(t, tc.algo, tc.p, spec), fit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var own *fit.Fit
			for i, f := range res.Fits {
				if f.Algorithm == tc.algo && f.Scope == fit.ScopeGlobal {
					own = &res.Fits[i]
				}
			}
			if own == nil || own.AgreementPct < 99.9 || own.Limit != tc.p.Limit || own.WindowNS != int64(tc.p.Window) || res.Best.Algorithm != tc.algo {
				for _, f := range res.Fits {
					t.Logf("%s: %.2f%% (%d misses, %d ambiguous)", f, f.AgreementPct, f.Misses, f.Ambiguous)
				}
				t.Fatalf("%s fitted as %v, best %s: want it best, %d per %v at >= 99.9%%", tc.algo, own, res.Best, tc.p.Limit, tc.p.Window)
			}
		})
	}
}

// TestFitHTTPRateWallWindows: httprate with a custom counter cuts its
// windows with time.Time.Truncate, on the wall clock: given the run's
// start, the fit finds them, 370ms into a run that started at .630 of a
// second. (An in-memory counter's windows start where its RateLimiter was
// made, anywhere: the search, as for sliding-counter, does not find a
// phase that no seed is near.)
func TestFitHTTPRateWallWindows(t *testing.T) {
	p := algorithms.Policy{Limit: 30, Window: time.Second}
	start := time.Date(2026, 3, 1, 12, 0, 0, 630_000_000, time.UTC).UnixNano()
	lim, err := algorithms.NewHTTPRateAt(p, algorithms.TruncateOrigin(p.Window))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	var reqs []fit.Request
	for at := time.Duration(0); at < 20*time.Second; at += time.Duration(rng.ExpFloat64() / 60 * 1e9) {
		d, err := lim.Allow(time.Duration(start)+at, "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, fit.Request{Sent: at, Done: at, Key: "k", Admitted: d.Allowed})
	}
	res, err := fit.Run(reqs, fit.Options{StartUnixNS: start})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Best
	if b.Algorithm != "httprate" || b.AgreementPct < 99.9 || b.Limit != 30 || b.WindowNS != int64(time.Second) ||
		b.PhaseNS != int64(370*time.Millisecond) || b.UnixPhaseNS == nil || *b.UnixPhaseNS != 0 {
		t.Errorf("best %s at %.2f%%, phase %v: want httprate of 30 per 1s on whole seconds, 370ms into the run, at >= 99.9%%",
			b, b.AgreementPct, time.Duration(b.PhaseNS))
	}
}
