package algorithms

import (
	"fmt"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/internal/wide"
	"github.com/ratebench/ratebench/algorithms/rule"
)

// SlidingCounterAll is the sliding window counter of SlidingCounter (the
// cost of the previous and of the current aligned window [k*W, (k+1)*W),
// and the estimate prev*(W-e)/W + curr of the trailing window, e being now
// minus the current window's start), with counters that count every
// request, admitted or rejected, as the Redis limiters that INCR before
// they compare do. A request of cost n is admitted iff estimate+n <= L,
// and is counted in the current window either way; Burst is ignored. The
// comparison, RetryAfter and ResetAfter are exact, in 128-bit integers.
//
// Denied requests count, so a client that keeps sending more than L per W
// is starved: its own rejected requests fill the current window and weigh
// on the next one, and nothing is admitted until it slows down (one that
// stops for 2W starts afresh). SlidingCounter, which counts admits only,
// admits about L per W of the same traffic.
//
// Its counts are never below those of admits alone, so every admit also
// satisfies SlidingCounter's condition on its admits, and its worst case in
// a half-open span W is SlidingCounter's: 2L - ceil(2L/W) (W in ns; L if
// W is 1ns), reached without a single rejection.
//
// A request above L is rejected with RetryAfter Never and counted too. A
// counter stops at min(L*W, 2^63-1): from L*W on, the previous window's
// weight alone rejects every request until it has left, so stopping there
// changes no decision and no field; only a window that holds more than
// 2^63-1 units, under a policy whose L*W is larger, is decided as if it
// held 2^63-1. RetryAfter is, from the counts after the rejection (which
// is counted), the time until the weight of the previous window has fallen
// enough, or until the next window when the current one is too full;
// ResetAfter is the time until both counts have left the estimate. A
// request at an instant earlier than the latest one seen (a clock that
// went backwards) is decided and counted as if at that latest instant.
//
// The zero value is not usable; use NewSlidingCounterAll. Safe for
// concurrent use: a mutex makes each decision one step; no allocation.
type SlidingCounterAll struct {
	limit int64 // L
	most  int64 // min(L*W, math.MaxInt64): where a counter stops

	mu         sync.Mutex
	windowPair // prev and curr count cost requested, <= most
}

// NewSlidingCounterAll returns an empty SlidingCounterAll for p, or an
// error wrapping ErrInvalidPolicy.
func NewSlidingCounterAll(p Policy) (*SlidingCounterAll, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("sliding-counter-all: %w", err)
	}
	most := rule.CounterMost(p.Limit, int64(p.Window))
	return &SlidingCounterAll{limit: p.Limit, most: most, windowPair: newWindowPair(p.Window)}, nil
}

// Allow implements Limiter; key is ignored.
func (c *SlidingCounterAll) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("sliding-counter-all: %w: %d", ErrInvalidCost, cost)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	weight := c.advance(now)
	allowed := rule.CounterFits(c.prev, c.curr, weight, cost, c.limit, c.window)
	c.curr = rule.CounterCount(c.curr, cost, c.most)
	d := Decision{
		Allowed:    allowed,
		Remaining:  c.remaining(weight),
		ResetAfter: time.Duration(c.start + 2*c.window - int64(now)),
	}
	if !allowed {
		d.RetryAfter = Never
		if cost <= c.limit {
			d.RetryAfter = time.Duration(c.admitsAt(cost, weight) - int64(now))
		}
	}
	return d, nil
}

// remaining is L - curr - ceil(prev*weight/W), the largest cost admitted
// at an instant weight before the end of the current window, or zero.
func (c *SlidingCounterAll) remaining(weight int64) int64 {
	if c.curr >= c.limit {
		return 0
	}
	return max(c.limit-c.curr-wide.MulDivCeil(c.prev, weight, c.window), 0)
}

// admitsAt returns the first instant at which a rejected cost <= L is
// admitted if nothing else happens, with the rejection counted. While
// curr+cost <= L, it is the instant at which prev's weight has fallen to
// floor((L-curr-cost)*W/prev), possibly the next window's start; otherwise
// it is in the next window, where the current count becomes prev and must
// weigh at most floor((L-cost)*W/curr). Both quotients are below the
// weight now, at most W, because the request was rejected with less
// counted, so they fit 64 bits; curr >= cost >= 1 once counted.
func (c *SlidingCounterAll) admitsAt(cost, weight int64) int64 {
	if room := c.limit - cost - c.curr; room >= 0 {
		return c.start + c.window - wide.MulDiv(room, c.window, c.prev)
	}
	return c.start + 2*c.window - wide.MulDiv(c.limit-cost, c.window, c.curr)
}
