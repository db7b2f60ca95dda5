package algorithms

import (
	"math"
	"sync/atomic"
	"time"
)

// Never is the RetryAfter of a request that no wait can admit: its cost is
// above the burst (or, for window algorithms, above the limit).
const Never = time.Duration(math.MaxInt64)

// Decision is the answer to one request. It is a plain value.
type Decision struct {
	// Allowed reports whether the request was admitted. A rejected request
	// consumes nothing.
	Allowed bool
	// TableFull reports a rejection of a key the limiter could not take
	// in: a per-key table (keyed) full of keys it cannot forget without
	// losing their state. RetryAfter is then the time until a slot frees.
	// Such a rejection is not an error: a fail-open policy never turns it
	// into an admit.
	TableFull bool
	// Delay is, for shapers (leaky-queue, uber), how long after now the
	// admitted request is served; zero for meters.
	Delay time.Duration
	// Remaining is how many cost units a request at the same instant could
	// still take after this decision (>= 0, <= burst).
	Remaining int64
	// RetryAfter is, when rejected, the time until the same request would be
	// admitted if nothing else happened (exact to the nanosecond), or Never.
	// Zero when allowed.
	RetryAfter time.Duration
	// ResetAfter is the time until the quota is full again if nothing else
	// happens.
	ResetAfter time.Duration
}

// Limiter is the contract every algorithm, peer adapter and backend
// implements. Allow decides a request of cost units (>= 1) for key at the
// instant now (a duration since the clock's zero). Implementations are safe
// for concurrent use. In-memory algorithms hold one state and ignore key;
// keyed.Limiter gives each key its own. Errors: ErrInvalidCost, or for
// backends an error wrapping ErrBackend.
type Limiter interface {
	Allow(now time.Duration, key string, cost int64) (Decision, error)
}

// WordRule is implemented by limiters whose whole state is one int64 word
// updated with compare-and-swap, so that keyed can keep one word per key
// instead of one limiter per key. DecideWord is Allow on an outside state.
// FullAt returns the instant (a duration since the clock's zero, in ns)
// from which the state decides exactly as a fresh one (InitialWord) on
// every request at that instant or later, so that forgetting it then loses
// nothing; for a fresh state, an instant before any decided (near
// math.MinInt64). FullAt must never decrease as DecideWord moves the
// state: keyed relies on a full-at it read earlier being a lower bound of
// the current one. Safe for concurrent use.
type WordRule interface {
	Limiter
	InitialWord() int64
	DecideWord(state *atomic.Int64, now time.Duration, cost int64) (Decision, error)
	FullAt(state int64) time.Duration
}

// Idler is implemented by limiters whose state may still decide unlike a
// fresh one's once its quota is full again (at now+Decision.ResetAfter),
// such as HAProxyReqRate, whose windows open at a request. IdleAfter is
// how long after any of its decisions the state is sure to decide as a
// fresh one; keyed forgets a key no earlier. Safe for concurrent use.
type Idler interface {
	Limiter
	IdleAfter() time.Duration
}
