// Package benchtest runs a limiter through a ratebench workload from a
// user's own `go test -bench`, so that its figures sit beside its peers';
// it is apart from bench so that programs that drive limiters do not link
// package testing.
package benchtest

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// Benchmark drives target with cfg's workload from a user's own
// `go test -bench`: a workload.Spec is stretched to about b.N arrivals
// (its Duration is set from its Rate; other sources are played as they
// are), the time per arrival is what go test
// reports, and the measures are reported as metrics: admitted/op (the share
// admitted), burst-ratio (most admitted in any span W over L) and
// theory-ratio.
func Benchmark(b *testing.B, cfg bench.Config, target call.Target) {
	b.Helper()
	b.ReportAllocs()
	if s, ok := cfg.Workload.(workload.Spec); ok {
		if s.Rate > 0 {
			s.Duration = time.Duration(float64(b.N) / s.Rate * 1e9)
		}
		s.Duration = max(s.Duration, cfg.Policy.Window)
		cfg.Workload = s
	}
	b.ResetTimer()
	runs, err := bench.Simulate(context.Background(), cfg, []call.Target{target})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	r := runs[0]
	if r.Offered > 0 {
		b.ReportMetric(float64(r.Admitted)/float64(r.Offered), "admitted/op")
	}
	b.ReportMetric(r.BurstRatio, "burst-ratio")
	b.ReportMetric(r.TheoryRatio, "theory-ratio")
}
