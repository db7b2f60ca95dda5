package fit_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/workload"
)

// BenchmarkFitLarge fits a trace the size of a probe of a limit of
// thousands per window: fixed-window 5000 per 1s under Poisson at twice
// the rate for 10s, about 100,000 requests, with answers taking up to a
// millisecond.
func BenchmarkFitLarge(b *testing.B) {
	reqs := simTrace(b, "fixed-window", algorithms.Policy{Limit: 5000, Window: time.Second},
		&workload.Poisson{Rate: 10000, Duration: 10 * time.Second, Keys: 1, Cost: 1, Seed: 5})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range reqs {
		reqs[i].Done = reqs[i].Sent + time.Duration(rng.Int64N(int64(time.Millisecond)))
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := fit.Run(reqs, fit.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Best.AgreementPct, "agree%")
	}
}
