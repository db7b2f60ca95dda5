package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/engine"
	"github.com/ratebench/ratebench/workload"
)

func TestEngines(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 10}
	cfg := bench.Config{Policy: p, Workload: &workload.Constant{Rate: 20, Duration: 2 * time.Second, Keys: 1, Cost: 1}, Span: 2 * time.Second}
	targets, err := backend.MemoryTargets([]string{"gcra"}, p, backend.Keys{N: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		eng      engine.Engine
		wantMode string
		wantWall bool // a wall time of at least the span
	}{
		{name: "zero value", eng: engine.Engine{}, wantMode: "sim"},
		{name: "sim", eng: engine.Sim, wantMode: "sim"},
		{name: "live", eng: engine.Live(2, 100, time.Time{}), wantMode: "live", wantWall: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.eng.Mode(); got != tc.wantMode {
				t.Errorf("Mode() = %q, want %q", got, tc.wantMode)
			}
			if wall := tc.eng.WallTime(cfg, targets); (wall >= cfg.Span) != tc.wantWall || !tc.wantWall && wall != 0 {
				t.Errorf("WallTime() = %v, want at least the span %v: %v", wall, cfg.Span, tc.wantWall)
			}
		})
	}
}

// TestSimRuns: Sim runs bench.Simulate: a constant 20/s against 10/s
// admits the burst, then the limit.
func TestSimRuns(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 10}
	cfg := bench.Config{Policy: p, Workload: &workload.Constant{Rate: 20, Duration: 2 * time.Second, Keys: 1, Cost: 1}, Span: 2 * time.Second}
	targets, err := backend.MemoryTargets([]string{"gcra"}, p, backend.Keys{N: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := engine.Sim.Run(context.Background(), cfg, targets)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Offered != 40 || runs[0].Admitted < 20 || runs[0].Admitted > 31 {
		t.Fatalf("runs %+v: want 1 run of 40 offered, about 30 admitted", runs)
	}
}
