package benchtest_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/benchtest"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// TestBenchmarkReports: a benchmark of a fixed window under a boundary
// workload reports the share admitted and the 2x burst ratio beside its
// theory, as metrics go test prints.
func TestBenchmarkReports(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := bench.Config{Policy: p}
	spec := workload.Spec{Name: "boundary", Limit: 100, Window: time.Second, Rate: 100, Keys: 1}
	target := call.Target{Name: "fixed-window", Theory: 2 * p.Limit, New: func() (algorithms.Limiter, error) {
		return algorithms.NewFixedWindow(p)
	}}
	r := testing.Benchmark(func(b *testing.B) { benchtest.BenchmarkSpec(b, cfg, spec, target) })
	if r.N == 0 {
		t.Fatal("the benchmark did not run")
	}
	if got := r.Extra["burst-ratio"]; got != 2 {
		t.Errorf("burst-ratio %v, want 2: the fixed window admits 2L around a window edge", got)
	}
	if got := r.Extra["theory-ratio"]; got != 2 {
		t.Errorf("theory-ratio %v, want 2", got)
	}
	if got := r.Extra["admitted/op"]; got <= 0 || got > 1 {
		t.Errorf("admitted/op %v, want a share", got)
	}
}
