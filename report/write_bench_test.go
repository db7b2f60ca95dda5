package report

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// bigResult is a result as a 10-million-arrival run over 7 algorithms
// writes it: 4000 bins (the most the sim engine writes), 10000 keys and a
// latency histogram of every arrival in each run.
func bigResult() *result.Result {
	rng := rand.New(rand.NewPCG(1, 2))
	const arrivals, bins, keys = 10_000_000, 4000, 10000
	r := &result.Result{
		Meta:     result.Meta{Mode: "live", Args: []string{"ratebench", "run", "-rate", "100000", "-duration", "100s"}},
		Policy:   result.PolicyJSON{Limit: 70000, WindowNS: int64(time.Second), Burst: 70000},
		Workload: map[string]any{"name": "poisson", "rate": 100000.0, "duration_ns": int64(100 * time.Second), "keys": keys},
	}
	for i, n := range []string{"token-bucket", "gcra", "leaky-bucket", "leaky-queue", "fixed-window", "sliding-log", "sliding-counter"} {
		run := result.Run{Algorithm: n, Backend: "memory", Replicas: 1, Offered: arrivals, TheoryMaxInWindow: 140000,
			MaxAdmittedInWindow: 70000 + int64(i)*5000, TheoryRatio: 2, JainFairness: 0.99, KeyCount: keys}
		run.BurstRatio = float64(run.MaxAdmittedInWindow) / 70000
		run.Series = result.Series{BinNS: int64(25 * time.Millisecond), Admitted: make([]int64, bins), Rejected: make([]int64, bins)}
		for b := range bins {
			a := int64(1650 + rng.IntN(200))
			run.Series.Admitted[b], run.Series.Rejected[b] = a, 2500-a
			run.Admitted += a
		}
		run.Rejected = arrivals - run.Admitted
		for k := range keys {
			run.Keys = append(run.Keys, result.KeyCount{Key: fmt.Sprintf("k%05d", k), Offered: arrivals / keys,
				Admitted: run.Admitted/keys + int64(rng.IntN(50))})
		}
		h := result.NewHistogram()
		for range arrivals / 100 {
			_ = h.RecordValues(int64(rng.ExpFloat64()*50e3*float64(i+1))+1, 100)
		}
		run.Latency, run.LatencyHDR = result.PercentilesOf(h), result.EncodeHistogram(h)
		r.Runs = append(r.Runs, run)
	}
	return r
}

// BenchmarkWrite renders the report of bigResult; the README quotes it.
func BenchmarkWrite(b *testing.B) {
	r := bigResult()
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(dir, r, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
