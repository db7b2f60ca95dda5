//go:build !race

// Built without -race only, as deployed_test.go and nginxrate_test.go:
// these replay many simulated traces, which the race detector slows
// some twentyfold, through the same concurrent Fit that TestFitVerdicts
// and TestFitOutsider run under it. make test runs them in its second
// step.

package fit_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// TestFitSimTraces: a simulated trace of each model is fitted by that
// model (or its exact equivalent) at 100% agreement, with its policy,
// under Poisson traffic and, for a bucket, under traffic that comes and
// goes (on for a second at three times the rate, off for one), where
// neither the mean over the trace nor the admissions per overloaded
// second is its rate.
func TestFitSimTraces(t *testing.T) {
	// Poisson at twice the rate: random gaps tell the models apart,
	// overload shows the rate, and window edges the phase.
	spec := func(rate float64) workload.Source {
		return &workload.Poisson{Rate: rate, Duration: 30 * time.Second, Keys: 1, Cost: 1, Seed: 5}
	}
	for _, tc := range []struct {
		algo string
		p    algorithms.Policy
		src  workload.Source // nil: Poisson at twice the rate
		want string          // the fitted model
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
		{algo: "gcra", p: algorithms.Policy{Limit: 50, Window: time.Second, Burst: 20}, want: "gcra",
			src: &workload.OnOff{Rate: 150, On: time.Second, Off: time.Second, Duration: 30 * time.Second, Keys: 1, Cost: 1}},
	} {
		name := tc.algo + "/" + tc.p.String()
		if tc.src != nil {
			name += "/on-off"
		}
		t.Run(name, func(t *testing.T) {
			src := tc.src
			if src == nil {
				src = spec(2 * tc.p.Rate())
			}
			reqs := simTrace(t, tc.algo, tc.p, src)
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

// TestFitFindsWindowEdgesOffTheStart: a trace whose fixed windows do not
// start at its own zero (a requests.csv read without its run's start) is
// fitted with the windows' phase found from the data, even when a burst's
// answers, coming back in another order than they were decided, put
// admissions among its rejections.
func TestFitFindsWindowEdgesOffTheStart(t *testing.T) {
	p := algorithms.Policy{Limit: 30, Window: time.Second}
	e, _ := all.Lookup("fixed-window")
	lim, err := e.New(p)
	if err != nil {
		t.Fatal(err)
	}
	const shift = 370 * time.Millisecond // windows start 370ms into each second of the trace
	rng := rand.New(rand.NewPCG(3, 4))
	var reqs []fit.Request
	decide := func(at time.Duration) {
		d, err := lim.Allow(at, "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		// Sent and answered around the decision, up to 4ms apart: the
		// fit's estimate of the decision instant is off by up to 3ms.
		lat := time.Duration(rng.Int64N(int64(4 * time.Millisecond)))
		sent := at - time.Duration(rng.Float64()*float64(lat))
		reqs = append(reqs, fit.Request{Sent: sent + shift, Done: sent + lat + shift, Key: "k", Admitted: d.Allowed})
	}
	for range 100 { // a burst, 30 admitted
		decide(200 * time.Millisecond)
	}
	at := 300 * time.Millisecond
	for at < 20*time.Second {
		at += time.Duration(rng.ExpFloat64() / 60 * 1e9)
		decide(at)
	}
	slices.SortStableFunc(reqs, func(a, b fit.Request) int { return cmp.Compare(a.Sent, b.Sent) })
	res, err := fit.Run(reqs, fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Best
	if b.Algorithm != "fixed-window" || b.Limit != 30 || b.WindowNS != int64(time.Second) || b.AgreementPct < 99 ||
		b.PhaseNS < int64(shift-5*time.Millisecond) || b.PhaseNS > int64(shift+10*time.Millisecond) {
		t.Errorf("best %s at %.2f%%, phase %v: want fixed-window of 30 per 1s starting 370ms in, at >= 99%%",
			b, b.AgreementPct, time.Duration(b.PhaseNS))
	}
}

// TestFitTimingMisses: a model's misses that timing explains (the
// service's decision up to 2ms off the span the client saw, against answers
// of 0.5ms to 2ms) leave it a verdict, not "explained by no model".
func TestFitTimingMisses(t *testing.T) {
	for _, algo := range []string{"sliding-log", "gcra", "httprate"} {
		t.Run(algo, func(t *testing.T) {
			reqs := simTrace(t, algo, algorithms.Policy{Limit: 25, Window: 1500 * time.Millisecond, Burst: 25},
				&workload.Poisson{Rate: 120, Duration: 20 * time.Second, Keys: 1, Cost: 1, Seed: 3})
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range reqs {
				reqs[i].Sent += time.Duration(rng.Int64N(int64(4*time.Millisecond))) - 2*time.Millisecond
				reqs[i].Done = reqs[i].Sent + 500*time.Microsecond + time.Duration(rng.Int64N(int64(1500*time.Microsecond)))
			}
			res, err := fit.Run(reqs, fit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", res.Sentence())
			if res.Best.AgreementPct == 100 {
				t.Fatalf("no misses: the jitter tests nothing")
			}
			if res.Confidence == result.Unexplained {
				t.Errorf("timing misses taken for a limiter no model explains: %s", res.Sentence())
			}
		})
	}
}
