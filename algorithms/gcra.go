package algorithms

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// GCRA is the generic cell rate algorithm (ITU-T I.371) in its virtual
// scheduling form: one theoretical arrival time (TAT), emission interval
// T = W/L, tolerance for a burst of B. A request of cost n at now is
// admitted iff max(TAT, now) + n*T - now <= B*T; it then moves TAT there.
// It admits exactly what a token bucket of capacity B and refill L/W
// admits. The zero value is not usable; use NewGCRA. Safe for concurrent
// use: one atomic compare-and-swap per decision, no lock.
type GCRA struct {
	interval int64 // T, ns per unit
	limit    int64 // B*T, ns
	burst    int64
	perUnit  divider // by T, for Remaining
	tat      atomic.Int64
}

// noTAT is the state of a GCRA or token bucket that has never admitted.
const noTAT = math.MinInt64

// NewGCRA returns a GCRA for p, or an error wrapping ErrInvalidPolicy.
func NewGCRA(p Policy) (*GCRA, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("gcra: %w", err)
	}
	g := &GCRA{interval: int64(p.Interval()), burst: p.Burst}
	g.limit = g.burst * g.interval
	g.perUnit = newDivider(g.interval)
	g.tat.Store(noTAT)
	return g, nil
}

// Allow implements Limiter; key is ignored.
func (g *GCRA) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	return g.DecideWord(&g.tat, now, cost)
}

// InitialWord implements WordRule.
func (g *GCRA) InitialWord() int64 { return noTAT }

// FullAt implements WordRule: the TAT. From then on max(TAT, now) is now,
// as for a fresh state; the TAT only moves later.
func (g *GCRA) FullAt(tat int64) time.Duration { return time.Duration(tat) }

// DecideWord implements WordRule on the TAT word.
func (g *GCRA) DecideWord(state *atomic.Int64, now time.Duration, cost int64) (Decision, error) {
	t := int64(now)
	if cost < 1 || cost > g.burst {
		return g.outOfRange(state, t, cost)
	}
	inc := cost * g.interval
	for {
		tat := state.Load()
		if !rule.GCRAFits(tat, t, inc, g.limit) {
			base := max(tat, t)
			return Decision{
				Remaining:  g.perUnit.div(max(g.limit-(base-t), 0)),
				RetryAfter: time.Duration(base + inc - t - g.limit),
				ResetAfter: time.Duration(base - t),
			}, nil
		}
		next := rule.GCRATake(tat, t, inc)
		if state.CompareAndSwap(tat, next) {
			return Decision{
				Allowed:    true,
				Remaining:  g.perUnit.div(g.limit - (next - t)),
				ResetAfter: time.Duration(next - t),
			}, nil
		}
	}
}

// outOfRange answers a cost below one (an error) or above the burst
// (rejected, never admissible), out of the hot path so that the decision
// keeps a small frame.
//
//go:noinline
func (g *GCRA) outOfRange(state *atomic.Int64, t, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("gcra: %w: %d", ErrInvalidCost, cost)
	}
	base := max(state.Load(), t)
	return Decision{
		Remaining:  g.perUnit.div(max(g.limit-(base-t), 0)),
		RetryAfter: Never,
		ResetAfter: time.Duration(base - t),
	}, nil
}
