package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// LeakyQueue is the leaky bucket as a queue, a shaper: requests are served
// one after another at the drain rate L/W, a request of cost n taking n*T
// of service (T = W/L). A request arriving at now starts service at
// s = max(next, now), where next is the instant the server becomes free,
// and is admitted iff (s-now)+n*T <= B*T, that is iff at most B units are
// then in the system; it is served after Decision.Delay = s-now. Otherwise
// it is rejected, with no delay, and consumes nothing. Remaining is the
// number of units that could still be queued at now. Served instants (of
// each unit) are spaced by T, so at most L+1 are served in any closed span
// W and L in any half-open one. A clock that goes backwards finds the
// server busy for longer (s-now grows), never less.
//
// The zero value is not usable; use NewLeakyQueue. Safe for concurrent use:
// a mutex makes each decision one step; no allocation.
type LeakyQueue struct {
	interval int64 // T, ns of service per unit
	capacity int64 // B*T, ns
	burst    int64

	mu   sync.Mutex
	next int64 // instant the server becomes free; math.MinInt64 at first
}

// NewLeakyQueue returns an empty queue for p, or an error wrapping
// ErrInvalidPolicy.
func NewLeakyQueue(p Policy) (*LeakyQueue, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("leaky-queue: %w", err)
	}
	q := &LeakyQueue{interval: int64(p.Interval()), burst: p.Burst, next: math.MinInt64}
	q.capacity = q.burst * q.interval
	return q, nil
}

// Allow implements Limiter; key is ignored.
func (q *LeakyQueue) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("leaky-queue: %w: %d", ErrInvalidCost, cost)
	}
	t := int64(now)
	q.mu.Lock()
	defer q.mu.Unlock()
	start := max(q.next, t)
	wait := start - t // ns of service queued ahead of this request
	if cost > q.burst {
		return Decision{
			Remaining:  max(q.capacity-wait, 0) / q.interval,
			RetryAfter: Never,
			ResetAfter: time.Duration(wait),
		}, nil
	}
	busy := wait + cost*q.interval
	if busy > q.capacity {
		return Decision{
			Remaining:  max(q.capacity-wait, 0) / q.interval,
			RetryAfter: time.Duration(busy - q.capacity),
			ResetAfter: time.Duration(wait),
		}, nil
	}
	q.next = t + busy
	return Decision{
		Allowed:    true,
		Delay:      time.Duration(wait),
		Remaining:  (q.capacity - busy) / q.interval,
		ResetAfter: time.Duration(busy),
	}, nil
}
