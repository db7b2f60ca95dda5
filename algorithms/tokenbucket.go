package algorithms

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// TokenBucket is a token bucket of capacity B refilled continuously at L/W,
// starting full. Its state is one word: the instant at which the bucket
// would be empty ("empty-at"), so tokens(now) = min(B, (now-emptyAt)/T)
// with T = W/L; this avoids a division per decision and a float. A request
// of cost n is admitted iff tokens(now) >= n. The zero value is not usable;
// use NewTokenBucket. Safe for concurrent use: one atomic compare-and-swap
// per decision, no lock.
type TokenBucket struct {
	interval int64 // T, ns per token
	capacity int64 // B*T, ns
	burst    int64
	perToken divider // by T, for Remaining
	emptyAt  atomic.Int64
}

// NewTokenBucket returns a full bucket for p, or an error wrapping
// ErrInvalidPolicy.
func NewTokenBucket(p Policy) (*TokenBucket, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("token-bucket: %w", err)
	}
	b := &TokenBucket{interval: int64(p.Interval()), burst: p.Burst}
	b.capacity = b.burst * b.interval
	b.perToken = newDivider(b.interval)
	b.emptyAt.Store(math.MinInt64)
	return b, nil
}

// Allow implements Limiter; key is ignored.
func (b *TokenBucket) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	return b.DecideWord(&b.emptyAt, now, cost)
}

// InitialWord implements WordRule.
func (b *TokenBucket) InitialWord() int64 { return math.MinInt64 }

// FullAt implements WordRule: emptyAt + B*T, when B tokens have accrued.
// From then on max(emptyAt, now-B*T) is now-B*T, as for a fresh state;
// emptyAt only moves later. No overflow: emptyAt is never later than the
// latest instant decided, and a fresh state's is math.MinInt64.
func (b *TokenBucket) FullAt(emptyAt int64) time.Duration {
	return time.Duration(emptyAt + b.capacity)
}

// DecideWord implements WordRule on the empty-at word.
func (b *TokenBucket) DecideWord(state *atomic.Int64, now time.Duration, cost int64) (Decision, error) {
	t := int64(now)
	if cost < 1 || cost > b.burst { // before cost*T, which could overflow
		return b.outOfRange(state, t, cost)
	}
	need := cost * b.interval
	for {
		old := state.Load()
		// Tokens beyond capacity are not kept: the bucket is never emptier
		// in the past than B*T before now.
		base := max(old, t-b.capacity)
		have := t - base // tokens * T, may be negative after a backwards clock
		if have < need {
			return Decision{
				Remaining:  b.perToken.div(max(have, 0)),
				RetryAfter: time.Duration(need - have),
				ResetAfter: time.Duration(b.capacity - have),
			}, nil
		}
		next := base + need
		if state.CompareAndSwap(old, next) {
			left := t - next
			return Decision{
				Allowed:    true,
				Remaining:  b.perToken.div(left),
				ResetAfter: time.Duration(b.capacity - left),
			}, nil
		}
	}
}

// outOfRange answers a cost below one (an error) or above the burst
// (rejected, never admissible), out of the hot path so that the decision
// keeps a small frame.
//
//go:noinline
func (b *TokenBucket) outOfRange(state *atomic.Int64, t, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("token-bucket: %w: %d", ErrInvalidCost, cost)
	}
	have := t - max(state.Load(), t-b.capacity)
	return Decision{
		Remaining:  b.perToken.div(max(have, 0)),
		RetryAfter: Never,
		ResetAfter: time.Duration(b.capacity - have),
	}, nil
}
