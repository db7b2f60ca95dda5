package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// SlidingLogAll is a sliding log that records every request, admitted or
// rejected, as the Redis limiters that ZADD each request to a sorted set
// before they count it do. A request of cost n at now is recorded, and
// admitted iff the cost recorded in the trailing window (now-W, now], the
// new request included, is at most L; Burst is ignored. An entry at t
// counts while now < t+W.
//
// Denied requests count as admitted ones do, so a client that keeps
// sending more than L per W is starved: each of its requests keeps the
// trailing window above L, and nothing is admitted until it slows down
// enough for its recorded cost in a span W to fall to L - n (a client that
// stops for W starts afresh). SlidingLog, which logs admits only, admits
// L per W of the same traffic. Since every admitted cost is recorded, it
// never admits more than L in a half-open span W: its worst case is L,
// the exact sliding log's.
//
// A request above L is rejected with RetryAfter Never and is recorded
// too. RetryAfter is, from the state after the rejection (which is
// recorded), the time until enough of the oldest entries have expired for
// the same request to fit; since the rejection itself is recorded at the
// latest instant seen, it is at most W after that instant. ResetAfter is
// the time until the newest entry expires.
//
// The log keeps only what can still change a decision. An entry whose
// newer entries already hold L or more can only expire while they still
// hold that much, so it never decides anything: it is dropped, and an
// entry's cost is kept at most L for the same reason. The entries after
// the oldest then hold less than L, each at least one, so the log is a ring
// preallocated to L entries (16*L bytes, L <= 2^24) however much is sent,
// and requests at one instant share an entry. A request at an instant
// earlier than the latest one seen (a clock that went backwards) is
// decided and recorded as if at that latest instant, as in SlidingLog.
//
// The zero value is not usable; use NewSlidingLogAll. Safe for concurrent
// use: a mutex makes each decision one step; no allocation.
type SlidingLogAll struct {
	limit int64 // L

	mu      sync.Mutex
	logRing       // of L entries; its sum < 2L
	latest  int64 // latest instant seen; math.MinInt64 at first
}

// NewSlidingLogAll returns an empty SlidingLogAll for p, or an error
// wrapping ErrInvalidPolicy.
func NewSlidingLogAll(p Policy) (*SlidingLogAll, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("sliding-log-all: %w", err)
	}
	if p.Limit > maxLogEntries {
		return nil, fmt.Errorf("sliding-log-all: %w: limit %d is above %d, the largest log it keeps", ErrInvalidPolicy, p.Limit, maxLogEntries)
	}
	return &SlidingLogAll{
		limit:   p.Limit,
		logRing: logRing{window: int64(p.Window), ring: make([]logEntry, p.Limit)},
		latest:  math.MinInt64,
	}, nil
}

// Allow implements Limiter; key is ignored.
func (s *SlidingLogAll) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("sliding-log-all: %w: %d", ErrInvalidCost, cost)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest = max(s.latest, int64(now))
	t := s.latest
	s.expire(t)
	allowed := rule.FixedFits(s.sum, cost, s.limit)
	s.record(t, min(cost, s.limit))
	d := Decision{
		Allowed:    allowed,
		Remaining:  max(s.limit-s.sum, 0),
		ResetAfter: time.Duration(t + s.window - int64(now)),
	}
	if !allowed {
		d.RetryAfter = Never
		if cost <= s.limit {
			d.RetryAfter = time.Duration(s.expiresBy(s.sum+cost-s.limit) - int64(now))
		}
	}
	return d, nil
}

// record logs cost c, 1 <= c <= L, at t, no earlier than the newest entry,
// and drops the oldest entries while the ones after them hold L or more:
// those can only expire while the rest still rejects everything.
func (s *SlidingLogAll) record(t, c int64) {
	if s.n > 0 && s.at(s.n-1).at == t {
		e := s.at(s.n - 1)
		add := min(c, s.limit-e.cost)
		e.cost += add
		s.sum += add
	} else {
		// Make room first: with the new entry, the entries after the oldest
		// must hold less than L, which leaves fewer than L entries here.
		for s.n > 0 && s.sum-s.ring[s.head].cost+c >= s.limit {
			s.dropOldest()
		}
		*s.at(s.n) = logEntry{at: t, cost: c}
		s.n++
		s.sum += c
	}
	for s.n > 1 && s.sum-s.ring[s.head].cost >= s.limit {
		s.dropOldest()
	}
}
