package algorithms

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/internal/wide"
	"github.com/ratebench/ratebench/algorithms/rule"
)

// HAProxyReqRate is HAProxy 2.6's stick-table request rate, for one
// entry: a table that stores http_req_rate(P), `http-request track-sc0
// src`, then `http-request deny if { sc_http_req_rate(0) gt L }`.
//
// Policy mapping. L is the deny threshold (a request is admitted while
// the rate it reads is at most L) and W is the period P, a whole number of
// milliseconds from 2ms (HAProxy's frequency counters need two ticks) to
// 2^31-1 ms (its largest delay); any other window is an invalid policy.
// Burst is ignored. Counts are of requests (cost units), the counter's
// times in milliseconds, instants and the Decision's durations in ns.
//
// The counter (update_freq_ctr_period in include/haproxy/freq_ctr.h). It
// holds the start of its current period, tick, in HAProxy's milliseconds,
// here m = floor(now/1ms); curr, the requests counted since tick; and
// prev, those of the period before. The track-sc0 rule counts every
// request before the deny rule reads the rate, so denied requests count
// too. A request at m within the period (m - tick < P) adds one to curr.
// Otherwise the period rotates: prev takes curr, curr is 1, and tick moves
// to tick + P, or, when that period too is over (two periods or more have
// passed, or the entry is new), prev is 0 and tick is m: a window opens at
// the request. Either way tick is then forced even (HAProxy keeps a lock
// in its lowest bit), so a window opened at an odd millisecond starts 1ms
// earlier, and with an odd P each rotation moves the period 1ms earlier
// than tick + P.
//
// The read (freq_ctr_total in src/freq_ctr.c, through
// read_freq_ctr_period) is curr + floor(prev*remain/P), remain = tick +
// P - m in ms: the previous period weighted by the share of the current
// one still to come. Its flapping correction (when curr is 0 and prev at
// most 1, the rate read is prev) never applies, since the request itself
// is counted in curr; nor does its branch for a read a period or more
// after tick, the request having just rotated the counter. A request of
// cost n is n requests at the same instant, all counted, admitted (all of
// them) iff the rate after the n-th is at most L. One above L is rejected
// with RetryAfter Never, and counted: HAProxy could let L+1 requests in
// at one millisecond only where an odd period rotates twice (below).
//
// What that admits. A period admits at most L, since curr counts every
// request. (With P odd, a request at tick + 2P - 1, the last millisecond
// before the counter would be reset, rotates it to tick + P - 1, 1ms
// early, which is then over: the next request rotates it again, and the
// first request is alone in its period.) With P even, at most 2L - floor(L/P) in a half-open span W
// (HAProxyReqRateWorst): L in the last millisecond of a period, where
// remain is 1, then L - floor(L/P) in the last millisecond of the next,
// where those L weigh floor(L/P); 2L whenever P > L. With P odd the
// rotations move periods 1ms earlier, so that a span W sees the end of one
// period, the whole of the next and the first millisecond of a third:
// 2L + ceil((L - floor(L/P))/P).
//
// What is not modelled. HAProxy's millisecond clock is its own: the wall
// clock's milliseconds, read when a thread wakes up, and kept monotonic;
// the algorithm counts milliseconds from the clock's zero (the fit's model
// can take their phase). A
// request at an instant earlier than the latest one seen is decided as if
// at that latest instant, as on HAProxy's clock, which never goes back.
// HAProxy's milliseconds and counts are 32-bit and wrap (every 49.7 days,
// and a new entry, whose tick is 0, joins the period [0, P) if it comes
// in the first P ms after a wrap); here they do not. An entry is dropped
// after the table's expire; here it is kept. Counts stop at
// min((L+1)*P, 2^63-1), from which the previous period's weight alone
// rejects everything until it has left, which changes no decision.
//
// RetryAfter is the time until the first millisecond at which the same
// request, counted in its turn, is admitted if nothing else happens;
// ResetAfter until the first at which a request of L is, both exact. The
// state decides as a fresh one only from tick + 2P, when a request opens
// a window again: IdleAfter, 2W, says so to per-key tables (keyed). The
// zero value is not usable; use NewHAProxyReqRate. Safe for concurrent
// use: a mutex makes each decision one step, as the entry's lock does in
// HAProxy; no allocation.
type HAProxyReqRate struct {
	limit  int64 // L
	period int64 // P, ms
	most   int64 // where a count stops

	mu     sync.Mutex
	ctr    rule.HAProxyCounter
	latest int64 // latest instant seen, ns; math.MinInt64 at first
}

const (
	haproxyTick      = int64(time.Millisecond)
	haproxyMaxPeriod = 1<<31 - 1 // ms: HAProxy's largest delay
)

// haproxyPeriod returns p validated and its period in ms, or an error
// wrapping ErrInvalidPolicy.
func haproxyPeriod(p Policy) (Policy, int64, error) {
	p, err := p.Validate()
	if err != nil {
		return p, 0, err
	}
	w := int64(p.Window)
	if w%haproxyTick != 0 || w < 2*haproxyTick || w/haproxyTick > haproxyMaxPeriod {
		return p, 0, fmt.Errorf("%w: window %v must be a whole number of milliseconds from 2ms to %dms", ErrInvalidPolicy, p.Window, int64(haproxyMaxPeriod))
	}
	return p, w / haproxyTick, nil
}

// NewHAProxyReqRate returns a HAProxyReqRate for p with no request
// counted, or an error wrapping ErrInvalidPolicy.
func NewHAProxyReqRate(p Policy) (*HAProxyReqRate, error) {
	p, period, err := haproxyPeriod(p)
	if err != nil {
		return nil, fmt.Errorf("haproxy-req-rate: %w", err)
	}
	most := rule.HAProxyMost(p.Limit, period)
	return &HAProxyReqRate{limit: p.Limit, period: period, most: most, latest: math.MinInt64}, nil
}

// HAProxyReqRateWorst returns the most cost a HAProxyReqRate for p admits
// in any half-open span W: 2L - floor(L/P) for an even period P in ms,
// 2L + ceil((L - floor(L/P))/P) for an odd one (see HAProxyReqRate), or 0
// for an invalid policy.
func HAProxyReqRateWorst(p Policy) int64 {
	p, period, err := haproxyPeriod(p)
	if err != nil {
		return 0
	}
	l := p.Limit
	if period%2 == 0 {
		return 2*l - l/period
	}
	return 2*l + ceilDiv(l-l/period, period)
}

// IdleAfter is how long after a decision the state is sure to decide as a
// fresh one, whatever ResetAfter says: two periods, after which the next
// request opens a window of its own.
func (h *HAProxyReqRate) IdleAfter() time.Duration {
	return time.Duration(2 * h.period * haproxyTick)
}

// Allow implements Limiter; key is ignored.
func (h *HAProxyReqRate) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("haproxy-req-rate: %w: %d", ErrInvalidCost, cost)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latest = max(h.latest, int64(now))
	m := rule.Millis(h.latest, 0)
	h.ctr = h.count(h.ctr, m, cost)
	allowed := cost <= h.limit && h.fits(h.ctr, m)
	d := Decision{Allowed: allowed, Remaining: h.remaining(h.ctr, m)}
	if full := h.firstAdmit(h.ctr, m, h.limit); full > m {
		d.ResetAfter = time.Duration(full*haproxyTick - int64(now))
	}
	if !allowed {
		d.RetryAfter = Never
		if cost <= h.limit {
			d.RetryAfter = time.Duration(h.firstAdmit(h.ctr, m, cost)*haproxyTick - int64(now))
		}
	}
	return d, nil
}

// count returns c after n requests at millisecond m (rule.HAProxyCount).
func (h *HAProxyReqRate) count(c rule.HAProxyCounter, m, n int64) rule.HAProxyCounter {
	return rule.HAProxyCount(c, m, n, h.period, h.most)
}

// fits reports whether the rate the deny rule reads at millisecond m from
// c, which has just counted a request at m, is at most L (rule.HAProxyFits).
func (h *HAProxyReqRate) fits(c rule.HAProxyCounter, m int64) bool {
	return rule.HAProxyFits(c, m, h.period, h.limit)
}

// remaining is the largest cost, at most L, of a request at millisecond
// m that c admits: after the first two of its requests (which may rotate
// the counter) each one adds one to the rate.
func (h *HAProxyReqRate) remaining(c rule.HAProxyCounter, m int64) int64 {
	var best int64
	if h.fits(h.count(c, m, 1), m) {
		best = 1
	}
	if h.limit >= 2 {
		if two := h.count(c, m, 2); h.fits(two, m) {
			rate := two.Curr + wide.MulDiv(two.Prev, two.Tick+h.period-m, h.period)
			best = min(2+h.limit-rate, h.limit)
		}
	}
	return best
}

// firstAdmit returns the first millisecond at or after m, where c has
// just counted a request, at which a request of cost n <= L is admitted if
// nothing else happens: in the rest of the current period, where the
// previous count's weight falls each millisecond; in the next, which the
// request opens by rotating and where the current count weighs; or at
// tick + 2P, where it opens a window of its own.
func (h *HAProxyReqRate) firstAdmit(c rule.HAProxyCounter, m, n int64) int64 {
	p := h.period
	if end := c.Tick + p - 1; m <= end {
		if u, ok := h.firstIn(c, n, m, end, c.Tick, c.Prev, h.limit-n-c.Curr); ok {
			return u
		}
	}
	if u, ok := h.firstIn(c, n, max(m, c.Tick+p), c.Tick+2*p-1, (c.Tick+p)&^1, c.Curr, h.limit-n); ok {
		return u
	}
	return c.Tick + 2*p
}

// firstIn returns the first millisecond in [lo, hi] at which a request of
// cost n is admitted by c, and whether there is one. In that span the
// request finds the weight floor(weighed*remain/P) on a period starting at
// tick and must keep it at most room: none fits when room < 0, all do
// when weighed <= room, and otherwise the first is where remain falls to
// ceil((room+1)*P/weighed) - 1. The rate read falls as the milliseconds
// pass (an odd period's second rotation only lowers it more), so that
// guess is checked on the counter itself, and a binary search settles
// the rest.
func (h *HAProxyReqRate) firstIn(c rule.HAProxyCounter, n, lo, hi, tick, weighed, room int64) (int64, bool) {
	switch {
	case room < 0:
		return 0, false
	case weighed <= room:
		return lo, true
	}
	ok := func(u int64) bool { return h.fits(h.count(c, u, n), u) }
	g := tick + h.period - (wide.MulDivCeil(room+1, h.period, weighed) - 1)
	return firstAdmitted(lo, hi, g, true, ok)
}
