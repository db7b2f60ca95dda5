package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// FixedWindowFirst is a fixed window that opens at a request instead of at
// a multiple of W: the pattern of the many Redis limiters that INCR a
// counter and set it to EXPIRE after W when the INCR created it. The first
// admitted request after the previous window has expired (or the very
// first) opens the window [s, s+W) at its own instant s; the window counts
// cost up to L, and a request of cost n is admitted iff the count plus n
// is at most L. Burst is ignored. A rejected request consumes nothing and
// opens no window (the only requests a fresh or expired state rejects are
// those above L). When the window is full, RetryAfter is the time until it
// expires, when the same request opens the next one; ResetAfter is that
// too while a window is open, else zero.
//
// Its worst case in a half-open span W is 2L-1, one less than an aligned
// fixed window's: the request that opened a window, at its start s, is
// never in a span W with the next window, which opens at s+W or later; so
// the worst is the opener at s, L-1 at s+W-1ns and L at s+W, 2L-1 within
// 1ns. Its edges follow the client's first request, not the clock: an
// attack timed on the multiples of W (the aligned fixed window's edges)
// usually falls inside one window and gets only L through, while a client
// that knows when its window opened gets 2L-1.
//
// A request at an instant earlier than the latest one seen (a clock that
// went backwards) is decided as if at that latest instant: it counts
// against the window open then and never reopens one. The zero value is
// not usable; use NewFixedWindowFirst. Safe for concurrent use: a mutex
// makes each decision one step; no allocation.
type FixedWindowFirst struct {
	window int64 // W, ns
	limit  int64 // L

	mu     sync.Mutex
	start  int64 // instant the current window opened; math.MinInt64 before any
	count  int64 // cost admitted in the current window, 0 when none is open
	latest int64 // latest instant seen; math.MinInt64 at first
}

// NewFixedWindowFirst returns a FixedWindowFirst with no window open, or
// an error wrapping ErrInvalidPolicy.
func NewFixedWindowFirst(p Policy) (*FixedWindowFirst, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("fixed-window-first: %w", err)
	}
	return &FixedWindowFirst{window: int64(p.Window), limit: p.Limit, start: math.MinInt64, latest: math.MinInt64}, nil
}

// Allow implements Limiter; key is ignored.
func (w *FixedWindowFirst) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("fixed-window-first: %w: %d", ErrInvalidCost, cost)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.latest = max(w.latest, int64(now))
	t := w.latest
	w.count = rule.FirstRoll(w.start, w.count, t, w.window)
	if !rule.FixedFits(w.count, cost, w.limit) {
		retry := Never
		if cost <= w.limit { // then a window is open and full enough
			retry = time.Duration(w.start + w.window - int64(now))
		}
		return Decision{
			Remaining:  w.limit - w.count,
			RetryAfter: retry,
			ResetAfter: w.resetAfter(now),
		}, nil
	}
	w.start, w.count = rule.FirstTake(w.start, w.count, t, cost)
	return Decision{
		Allowed:    true,
		Remaining:  w.limit - w.count,
		ResetAfter: time.Duration(w.start + w.window - int64(now)),
	}, nil
}

// resetAfter is the time until the open window expires, or zero when none
// is open.
func (w *FixedWindowFirst) resetAfter(now time.Duration) time.Duration {
	if w.count == 0 {
		return 0
	}
	return time.Duration(w.start + w.window - int64(now))
}
