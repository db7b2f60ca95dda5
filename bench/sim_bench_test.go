package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// BenchmarkSim compares, per arrival, the sim engine with all its measures
// (engine=sim) against a bare loop calling the same limiter on the same
// arrivals taken from a slice (engine=bare-loop). Both on one goroutine;
// the target is engine=sim at most 3x engine=bare-loop and at least 10M
// arrivals/s.
func BenchmarkSim(b *testing.B) {
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	spec := func(n int) *workload.Poisson {
		return &workload.Poisson{Rate: 1500, Duration: time.Duration(float64(n) / 1500 * 1e9), Keys: 1, Seed: 1, Cost: 1}
	}
	newGCRA := func() (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }
	b.Run("algo=gcra/engine=sim", func(b *testing.B) {
		b.ReportAllocs()
		target := call.Target{Name: "gcra", Theory: 2 * p.Limit, New: newGCRA}
		runs, err := bench.Simulate(context.Background(), bench.Config{Policy: p, Workload: spec(b.N)}, []call.Target{target})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(runs[0].Offered)/float64(b.N), "arrivals/op")
	})
	b.Run("algo=gcra/engine=bare-loop", func(b *testing.B) {
		stream, err := spec(b.N).Open(workload.Shard{})
		if err != nil {
			b.Fatal(err)
		}
		arrivals := make([]workload.Arrival, 0, b.N+b.N/10)
		for a, ok := stream.Next(); ok; a, ok = stream.Next() {
			arrivals = append(arrivals, a)
		}
		l, _ := newGCRA()
		b.ReportAllocs()
		b.ResetTimer()
		var admitted int
		for _, a := range arrivals {
			if d, _ := l.Allow(a.At, a.Key, a.Cost); d.Allowed {
				admitted++
			}
		}
		b.ReportMetric(float64(len(arrivals))/float64(b.N), "arrivals/op")
	})
}
