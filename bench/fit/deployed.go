package fit

import (
	"math"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// The models of limiters people deploy as they are, each the algorithm of
// the same name in algorithms: go-chi/httprate's in-memory limiter and
// HAProxy's stick-table request rate.

// httprateModel is go-chi/httprate v0.16.1's in-memory limiter: a sliding
// counter of admitted requests on windows starting at phase + k*window,
// whose estimate prev*(W-diff)/W + curr, computed in float64 as the
// library does and rounded half away from zero, must leave room for the
// request: round(estimate) + 1 <= limit. The previous window counts only
// when it is the one just before. A request at an instant before the
// latest one of its key is decided as at that latest instant. Not safe
// for concurrent use.
type httprateModel struct {
	start, prev, curr, latest []int64
	limit, window, phase      int64
	saved                     [4]int64
}

func (m *httprateModel) save(k int) {
	m.saved = [4]int64{m.start[k], m.prev[k], m.curr[k], m.latest[k]}
}

func (m *httprateModel) restore(k int) {
	m.start[k], m.prev[k], m.curr[k], m.latest[k] = m.saved[0], m.saved[1], m.saved[2], m.saved[3]
}

func (m *httprateModel) reset(p params, n int) {
	m.limit, m.window, m.phase = p.limit, p.window, p.phase
	m.start = resize(m.start, n, math.MinInt64)
	m.prev = resize(m.prev, n, 0)
	m.curr = resize(m.curr, n, 0)
	m.latest = resize(m.latest, n, math.MinInt64)
}

// at returns the instant key k decides a request at t at, and its counts
// as they stand then.
func (m *httprateModel) at(k int, t int64) (at, start, prev, curr int64) {
	at = max(t, m.latest[k])
	start, prev, curr = rule.CounterRoll(m.start[k], m.prev[k], m.curr[k], at, m.window, m.phase)
	return at, start, prev, curr
}

func (m *httprateModel) decide(k int, t int64) bool {
	at, start, prev, curr := m.at(k, t)
	return rule.HTTPRateFits(rule.HTTPRateEstimate(prev, curr, at-start, m.window), 1, m.limit)
}

func (m *httprateModel) apply(k int, t int64, admitted bool) {
	m.latest[k], m.start[k], m.prev[k], m.curr[k] = m.at(k, t)
	if admitted {
		m.curr[k] = rule.FixedTake(m.curr[k], 1)
	}
}

// haproxyModel is HAProxy 2.6's stick-table http_req_rate(P) with `deny
// if { sc_http_req_rate(0) gt L }`: every request is counted, denied ones
// too, before the rate curr + floor(prev*remain/P) is read, remain = tick
// + P - m in milliseconds; a request finding its period over moves it on
// by P, or, when two periods have passed (or at a key's first request),
// opens one at its own millisecond, and the period's start is then forced
// even. The milliseconds are HAProxy's clock's, which start phase ns
// (modulo 1ms) into each of the trace's; its family fits no phase yet, so
// they are the trace's own. A request in a millisecond before the latest
// one counted for its key is decided in that latest one, HAProxy's clock
// never going back. P is the window in whole milliseconds, at least 2.
// Not safe for concurrent use.
type haproxyModel struct {
	tick, curr, prev []int64
	last             []int64 // the latest millisecond counted; math.MinInt64 before any
	limit, period    int64
	most             int64 // where a count stops
	phase            int64 // ns, in [0, 1ms)
	saved            [4]int64
}

func (m *haproxyModel) save(k int) {
	m.saved = [4]int64{m.tick[k], m.curr[k], m.prev[k], m.last[k]}
}

func (m *haproxyModel) restore(k int) {
	m.tick[k], m.curr[k], m.prev[k], m.last[k] = m.saved[0], m.saved[1], m.saved[2], m.saved[3]
}

func (m *haproxyModel) reset(p params, n int) {
	m.limit = p.limit
	m.period = max((p.window+5e5)/1e6, 2)
	m.most = rule.HAProxyMost(m.limit, m.period)
	m.phase = floorMod(p.phase, 1e6)
	m.tick = resize(m.tick, n, 0)
	m.curr = resize(m.curr, n, 0)
	m.prev = resize(m.prev, n, 0)
	m.last = resize(m.last, n, math.MinInt64)
}

// count returns the millisecond key k counts a request at t in, and its
// counter after it.
func (m *haproxyModel) count(k int, t int64) (int64, rule.HAProxyCounter) {
	ms := max(rule.Millis(t, m.phase), m.last[k])
	c := rule.HAProxyCounter{Tick: m.tick[k], Curr: m.curr[k], Prev: m.prev[k], Open: m.last[k] != math.MinInt64}
	return ms, rule.HAProxyCount(c, ms, 1, m.period, m.most)
}

func (m *haproxyModel) decide(k int, t int64) bool {
	ms, c := m.count(k, t)
	return rule.HAProxyFits(c, ms, m.period, m.limit)
}

func (m *haproxyModel) apply(k int, t int64, _ bool) {
	ms, c := m.count(k, t)
	m.last[k], m.tick[k], m.curr[k], m.prev[k] = ms, c.Tick, c.Curr, c.Prev
}
