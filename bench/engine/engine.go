// Package engine puts the two engines a run can drive its targets with,
// bench.Simulate (virtual time) and live.Run (real time), behind one
// value, so that a command chooses one once and runs it the same way.
package engine

import (
	"context"
	"time"

	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
)

// Engine is the sim or the live engine; the zero value is Sim.
type Engine struct {
	live *live.Config // nil: sim
}

// Sim is the engine of virtual time, deterministic (bench.Simulate).
var Sim = Engine{}

// Live is the engine of real goroutines and clock (live.Run) with
// workers senders and at most maxInFlight arrivals in flight; its first
// pass starts at start when that is not zero, and every later pass in
// its slot after it.
func Live(workers, maxInFlight int, start time.Time) Engine {
	return Engine{live: &live.Config{Workers: workers, MaxInFlight: maxInFlight, StartAt: start}}
}

// Mode is "sim" or "live", as result.json's meta names the engine.
func (e Engine) Mode() string {
	if e.live == nil {
		return "sim"
	}
	return "live"
}

// Run runs targets under cfg, one pass each.
func (e Engine) Run(ctx context.Context, cfg bench.Config, targets []call.Target) ([]result.Run, error) {
	if e.live == nil {
		return bench.Simulate(ctx, cfg, targets)
	}
	lc := *e.live
	lc.Config = cfg
	return live.Run(ctx, lc, targets)
}

// WallTime is how long a live run of targets under cfg is expected to
// take (live.WallTime); 0 for sim, which takes what the machine
// takes.
func (e Engine) WallTime(cfg bench.Config, targets []call.Target) time.Duration {
	if e.live == nil {
		return 0
	}
	lc := *e.live
	lc.Config = cfg
	return live.WallTime(lc, targets)
}
