package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// LeakyBucket is the leaky bucket as a meter: a bucket of capacity B that
// leaks continuously at L/W. Its state is the natural one, the level (in
// nanoseconds of drain left, level*T with T = W/L) and the instant of the
// last admit, not a theoretical arrival time, so that its equivalence with
// GCRA is a real check. The level at now is max(0, level-(now-last)), or,
// for now before last (a clock that went backwards: earlier means fuller),
// level+(last-now). A request of cost n is admitted iff level(now)+n*T <=
// B*T, and then pours n*T in; a rejected request leaves the state as it
// was (draining it to now would forget that it was fuller earlier). On
// every trace it admits exactly what GCRA admits (ITU-T I.371's
// continuous-state form), with the same Remaining, RetryAfter and
// ResetAfter. The zero value is not usable; use NewLeakyBucket. Safe for
// concurrent use: a mutex makes each decision one step; no allocation.
type LeakyBucket struct {
	interval int64 // T, ns per unit
	capacity int64 // B*T, ns
	burst    int64

	mu    sync.Mutex
	level int64 // ns of drain left at last, 0 <= level
	last  int64 // instant of the last admit; math.MinInt64 before any
}

// NewLeakyBucket returns an empty bucket for p, or an error wrapping
// ErrInvalidPolicy.
func NewLeakyBucket(p Policy) (*LeakyBucket, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("leaky-bucket: %w", err)
	}
	b := &LeakyBucket{interval: int64(p.Interval()), burst: p.Burst, last: math.MinInt64}
	b.capacity = b.burst * b.interval
	return b, nil
}

// Allow implements Limiter; key is ignored.
func (b *LeakyBucket) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("leaky-bucket: %w: %d", ErrInvalidCost, cost)
	}
	t := int64(now)
	b.mu.Lock()
	defer b.mu.Unlock()
	level := b.levelAt(t)
	if cost > b.burst {
		return Decision{
			Remaining:  max(b.capacity-level, 0) / b.interval,
			RetryAfter: Never,
			ResetAfter: time.Duration(level),
		}, nil
	}
	next := level + cost*b.interval
	if next > b.capacity {
		return Decision{
			Remaining:  max(b.capacity-level, 0) / b.interval,
			RetryAfter: time.Duration(next - b.capacity),
			ResetAfter: time.Duration(level),
		}, nil
	}
	b.level, b.last = next, t
	return Decision{
		Allowed:    true,
		Remaining:  (b.capacity - next) / b.interval,
		ResetAfter: time.Duration(next),
	}, nil
}

// levelAt is the level at t in ns of drain left. Before last it is higher
// by the time between them (the bucket was fuller then); after, it has
// drained by the time elapsed, down to empty.
func (b *LeakyBucket) levelAt(t int64) int64 {
	if t < b.last {
		return b.level + (b.last - t)
	}
	// t-last may not fit an int64 when last is still math.MinInt64; its
	// unsigned difference always does.
	if drained := uint64(t) - uint64(b.last); drained < uint64(b.level) {
		return b.level - int64(drained)
	}
	return 0
}
