package algorithms

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// TokenBucketDebt is a token bucket of capacity B refilled continuously at
// L/W, starting full, that goes into debt on a rejected request: a request
// of cost n is admitted iff the bucket holds at least n tokens, and n
// tokens are taken either way, so that the tokens may go negative. They
// never go below -B: a rejected request takes its cost down to -B and no
// further, which bounds the state and every wait (a request of cost n <= B
// is admitted at most (B+n)*T after any rejection at the latest instant
// seen, T = W/L). A request above B is rejected with RetryAfter Never and
// takes its cost too.
//
// Denied requests count, so a client that keeps sending faster than L/W is
// starved: its rejected requests drive the tokens down to -B and keep them
// there, and nothing is admitted until it waits (B+1)*T between two
// requests; TokenBucket, whose rejections take nothing, admits L per W of
// the same traffic. Debt only takes tokens away, so its worst case in any
// span W is TokenBucket's: B + L.
//
// Its state is one word, the instant at which the bucket held no token
// ("empty-at", as in TokenBucket), later than now while in debt: tokens(t)
// = min(B, (t-emptyAt)/T). The word only moves later, so a clock that goes
// backwards finds fewer tokens, never more. RetryAfter is, from the state
// after the rejection (which took its cost), the time until n tokens have
// accrued; ResetAfter the time until B have. The zero value is not usable;
// use NewTokenBucketDebt. Safe for concurrent use: one atomic
// compare-and-swap per decision, no lock; no allocation. It implements
// WordRule, so keyed keeps one word per key.
type TokenBucketDebt struct {
	interval int64 // T, ns per token
	capacity int64 // B*T, ns
	burst    int64
	perToken divider // by T, for Remaining
	emptyAt  atomic.Int64
}

// NewTokenBucketDebt returns a full bucket for p, or an error wrapping
// ErrInvalidPolicy.
func NewTokenBucketDebt(p Policy) (*TokenBucketDebt, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("token-bucket-debt: %w", err)
	}
	b := &TokenBucketDebt{interval: int64(p.Interval()), burst: p.Burst}
	b.capacity = b.burst * b.interval
	b.perToken = newDivider(b.interval)
	b.emptyAt.Store(math.MinInt64)
	return b, nil
}

// Allow implements Limiter; key is ignored.
func (b *TokenBucketDebt) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	return b.DecideWord(&b.emptyAt, now, cost)
}

// InitialWord implements WordRule.
func (b *TokenBucketDebt) InitialWord() int64 { return math.MinInt64 }

// FullAt implements WordRule: emptyAt + B*T, when B tokens have accrued,
// debt or not. From then on max(emptyAt, now-B*T) is now-B*T, as for a
// fresh state; emptyAt only moves later. No overflow: emptyAt is never
// later than B*T after the latest instant decided, and a fresh state's is
// math.MinInt64.
func (b *TokenBucketDebt) FullAt(emptyAt int64) time.Duration {
	return time.Duration(emptyAt + b.capacity)
}

// DecideWord implements WordRule on the empty-at word.
func (b *TokenBucketDebt) DecideWord(state *atomic.Int64, now time.Duration, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("token-bucket-debt: %w: %d", ErrInvalidCost, cost)
	}
	t := int64(now)
	// What the request takes, in ns: above 2B tokens it makes no
	// difference (the floor is reached from a full bucket), and cost*T
	// cannot overflow.
	take := min(cost, 2*b.burst) * b.interval
	for {
		old := state.Load()
		allowed := cost <= b.burst && rule.DebtFits(old, t, take, b.capacity)
		// Taken either way: down to -B tokens at t and no further, never
		// earlier than the word already is.
		next := rule.DebtTake(old, t, take, b.capacity)
		if next != old && !state.CompareAndSwap(old, next) {
			continue
		}
		left := t - next
		d := Decision{
			Allowed:    allowed,
			Remaining:  b.perToken.div(max(left, 0)),
			ResetAfter: time.Duration(b.capacity - left),
		}
		if !allowed {
			d.RetryAfter = Never
			if cost <= b.burst {
				d.RetryAfter = time.Duration(take - left)
			}
		}
		return d, nil
	}
}
