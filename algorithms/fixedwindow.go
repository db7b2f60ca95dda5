package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// FixedWindow counts cost per aligned window [k*W, (k+1)*W), k =
// floor(now/W) (also for a negative now), and admits a request of cost n
// iff the count of the current window plus n is at most L; Burst is
// ignored. A burst of L just before a window edge and L just after it are
// all admitted: 2L in a span of 1ns is its worst case. When the window is
// full, RetryAfter is the time to the next window start; ResetAfter is that
// too while the window holds any cost. The current window is that of the
// latest instant seen: a request in an earlier window (a clock that went
// backwards) counts against the current one and never resets it. The zero
// value is not usable; use NewFixedWindow. Safe for concurrent use: a mutex
// makes each decision one step; no allocation.
//
// A fixed window that also counts denied requests (INCR, then compare)
// needs no model of its own as long as every cost is 1: a request is
// denied only once the count has reached L, and from then on every
// request of the window is denied whatever the count, so both admit the
// same requests. With larger costs they differ: a denied request of cost n
// would also take n from the window and could deny a smaller one that
// still fits here.
type FixedWindow struct {
	window int64 // W, ns
	limit  int64 // L

	mu    sync.Mutex
	start int64 // start of the current window; math.MinInt64 at first
	count int64 // cost admitted in the current window
}

// NewFixedWindow returns a FixedWindow for p, or an error wrapping
// ErrInvalidPolicy.
func NewFixedWindow(p Policy) (*FixedWindow, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("fixed-window: %w", err)
	}
	return &FixedWindow{window: int64(p.Window), limit: p.Limit, start: math.MinInt64}, nil
}

// Allow implements Limiter; key is ignored.
func (w *FixedWindow) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("fixed-window: %w: %d", ErrInvalidCost, cost)
	}
	t := int64(now)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start, w.count = rule.FixedRoll(w.start, w.count, t, w.window, 0)
	end := w.start + w.window - t // time to the next window start
	if !rule.FixedFits(w.count, cost, w.limit) {
		retry := Never
		if cost <= w.limit {
			retry = time.Duration(end)
		}
		return Decision{
			Remaining:  w.limit - w.count,
			RetryAfter: retry,
			ResetAfter: w.resetAfter(end),
		}, nil
	}
	w.count = rule.FixedTake(w.count, cost)
	return Decision{
		Allowed:    true,
		Remaining:  w.limit - w.count,
		ResetAfter: time.Duration(end),
	}, nil
}

// resetAfter is end while the window holds any cost, else zero.
func (w *FixedWindow) resetAfter(end int64) time.Duration {
	if w.count == 0 {
		return 0
	}
	return time.Duration(end)
}
