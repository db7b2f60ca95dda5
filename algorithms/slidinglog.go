package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// SlidingLog is the exact reference: it keeps a log of the admitted
// (instant, cost) pairs and admits a request of cost n at now iff the cost
// logged in the trailing window (now-W, now] plus n is at most L, so that no
// half-open span W ever holds more than L; Burst is ignored. An entry at t
// counts while now < t+W. RetryAfter is the time until enough of the
// oldest entries have expired; ResetAfter until the newest has.
//
// The log is a ring preallocated to L entries (every cost is at least one,
// so at most L entries are ever live: 16*L bytes, L <= 2^24), and admits
// at one instant share an entry. A request at an instant earlier than the
// latest one seen (a clock that went backwards) is decided and logged as if
// at that latest instant: that keeps the ring sorted, and the entries
// already dropped as expired at the latest instant cannot come back as
// quota.
//
// The zero value is not usable; use NewSlidingLog. Safe for concurrent use:
// a mutex makes each decision one step; no allocation.
type SlidingLog struct {
	limit int64 // L

	mu      sync.Mutex
	logRing       // of L entries
	latest  int64 // latest instant seen; math.MinInt64 at first
}

// maxLogEntries bounds the log of a SlidingLog (256 MiB): a larger limit
// is an invalid policy for it rather than a huge allocation.
const maxLogEntries = 1 << 24

// NewSlidingLog returns an empty SlidingLog for p, or an error wrapping
// ErrInvalidPolicy.
func NewSlidingLog(p Policy) (*SlidingLog, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("sliding-log: %w", err)
	}
	if p.Limit > maxLogEntries {
		return nil, fmt.Errorf("sliding-log: %w: limit %d is above %d, the largest log it keeps", ErrInvalidPolicy, p.Limit, maxLogEntries)
	}
	return &SlidingLog{
		limit:   p.Limit,
		logRing: logRing{window: int64(p.Window), ring: make([]logEntry, p.Limit)},
		latest:  math.MinInt64,
	}, nil
}

// Allow implements Limiter; key is ignored.
func (s *SlidingLog) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("sliding-log: %w: %d", ErrInvalidCost, cost)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest = max(s.latest, int64(now))
	t := s.latest
	s.expire(t)
	if !rule.FixedFits(s.sum, cost, s.limit) {
		retry := Never
		if cost <= s.limit {
			retry = time.Duration(s.expiresBy(s.sum+cost-s.limit) - int64(now))
		}
		return Decision{
			Remaining:  s.limit - s.sum,
			RetryAfter: retry,
			ResetAfter: s.resetAfter(now),
		}, nil
	}
	if s.n > 0 && s.at(s.n-1).at == t {
		s.at(s.n - 1).cost += cost
	} else {
		*s.at(s.n) = logEntry{at: t, cost: cost}
		s.n++
	}
	s.sum += cost
	return Decision{
		Allowed:    true,
		Remaining:  s.limit - s.sum,
		ResetAfter: time.Duration(t + s.window - int64(now)),
	}, nil
}

// resetAfter is the time until the newest entry expires, or zero when the
// log is empty.
func (s *SlidingLog) resetAfter(now time.Duration) time.Duration {
	if s.n == 0 {
		return 0
	}
	return time.Duration(s.at(s.n-1).at + s.window - int64(now))
}
