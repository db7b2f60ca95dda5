package fit

import (
	"math"
	"slices"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// params is a candidate policy. Rate-based models read interval (ns per
// request) and burst, and a ticked one phase (where its clock's
// milliseconds start, ns into the trace, modulo 1ms); window models limit,
// window and, for a fixed window on the clock, phase (where windows
// start, ns into the trace, modulo window).
type params struct {
	limit, burst  int64
	window, phase int64
	interval      int64
}

// model predicts a limiter's decisions for a sequence of requests of one
// key and is told what really happened: the fit scores it one step ahead.
// decide must not change the state; apply advances it by the request sent
// at t and its observed outcome. States are per key, index k; save keeps
// one key's state aside, restore puts it back (one saved at a time).
type model interface {
	// reset readies n keys' states for p.
	reset(p params, n int)
	decide(k int, t int64) bool
	apply(k int, t int64, admitted bool)
	save(k int)
	restore(k int)
}

// family describes one model: its name in `ratebench list`, whether it
// counts denied requests, its parameters, and how to make one.
type family struct {
	name         string
	countsDenied bool
	rateBased    bool // interval and burst; otherwise limit and window
	phased       bool // windows on the clock: a phase too
	// ticked: a rate-based model on a clock of whole milliseconds whose
	// ticks fall anywhere in the trace's milliseconds (the service's clock
	// is not the client's): their phase is fitted too. It is no parameter
	// of the policy, and not counted in nparams.
	ticked  bool
	nparams int
	new     func() model
}

// families are the models a trace is fitted to. The bucket family (token
// bucket, GCRA, leaky bucket as a meter, x/time/rate) admits the same
// requests for the same rate and capacity: one model stands for it.
var families = []family{
	{name: "gcra", rateBased: true, nparams: 2, new: func() model { return &gcraModel{} }},
	{name: "token-bucket-debt", countsDenied: true, rateBased: true, nparams: 2, new: func() model { return &debtModel{} }},
	{name: "nginx-limit-req", rateBased: true, ticked: true, nparams: 2, new: func() model { return &nginxModel{} }},
	{name: "sliding-log", nparams: 2, new: func() model { return &logModel{} }},
	{name: "sliding-log-all", countsDenied: true, nparams: 2, new: func() model { return &logModel{all: true} }},
	{name: "sliding-counter", phased: true, nparams: 3, new: func() model { return &counterModel{} }},
	{name: "sliding-counter-all", countsDenied: true, phased: true, nparams: 3, new: func() model { return &counterModel{all: true} }},
	{name: "fixed-window", phased: true, nparams: 3, new: func() model { return &fixedModel{} }},
	{name: "fixed-window-first", nparams: 2, new: func() model { return &firstModel{} }},
	{name: "httprate", phased: true, nparams: 3, new: func() model { return &httprateModel{} }},
	{name: "haproxy-req-rate", countsDenied: true, nparams: 2, new: func() model { return &haproxyModel{} }},
}

// gcraModel is the bucket family as a GCRA: a theoretical arrival time per
// key; a request at t fits when max(tat, t) + T - t <= B*T.
type gcraModel struct {
	tat      []int64
	t, limit int64
	saved    int64
}

func (m *gcraModel) save(k int)    { m.saved = m.tat[k] }
func (m *gcraModel) restore(k int) { m.tat[k] = m.saved }

func (m *gcraModel) reset(p params, n int) {
	m.t, m.limit = p.interval, p.burst*p.interval
	m.tat = resize(m.tat, n, math.MinInt64)
}

func (m *gcraModel) decide(k int, t int64) bool { return rule.GCRAFits(m.tat[k], t, m.t, m.limit) }

func (m *gcraModel) apply(k int, t int64, admitted bool) {
	if admitted {
		m.tat[k] = rule.GCRATake(m.tat[k], t, m.t)
	}
}

// debtModel is a token bucket that a denied request also draws from, into
// debt: every request, admitted or not, takes its token, at most down to
// -B. Its tat holds, per key, the limiter's word: the instant the bucket
// held no token, not a theoretical arrival time.
type debtModel struct{ gcraModel }

func (m *debtModel) decide(k int, t int64) bool { return rule.DebtFits(m.tat[k], t, m.t, m.limit) }

func (m *debtModel) apply(k int, t int64, _ bool) {
	m.tat[k] = rule.DebtTake(m.tat[k], t, m.t, m.limit)
}

// nginxModel is nginx's limit_req: excess in thousandths of a request,
// leaking at the rate on a millisecond clock; a request fits when the
// excess after it is at most the burst (capacity - 1). The milliseconds
// are nginx's clock's (CLOCK_MONOTONIC on Linux), not the trace's: they
// start phase ns into each of the trace's. A request in a millisecond
// before the last admission's finds nothing drained (nginx takes time
// going back as none passing) and does not move it.
type nginxModel struct {
	excess, last []int64 // last: the millisecond of the last admission
	rate         int64   // thousandths of a request per second
	burst        int64   // thousandths
	most         int64   // requests admitted at once
	phase        int64
	saved        [2]int64
}

func (m *nginxModel) save(k int)    { m.saved = [2]int64{m.excess[k], m.last[k]} }
func (m *nginxModel) restore(k int) { m.excess[k], m.last[k] = m.saved[0], m.saved[1] }

func (m *nginxModel) reset(p params, n int) {
	m.rate = int64(math.Round(1e12 / float64(p.interval)))
	m.burst, m.most = (p.burst-1)*rule.NginxUnit, p.burst
	m.phase = p.phase
	m.excess = resize(m.excess, n, 0)
	m.last = resize(m.last, n, math.MinInt64)
}

// nginxNeverFull is the model's fullMs for NginxRoll: none. Its excess
// follows the admissions observed, and may be above the burst, where the
// limiter's shortcut for a drained bucket no longer holds.
const nginxNeverFull = math.MaxInt64

func (m *nginxModel) decide(k int, t int64) bool {
	base, _ := rule.NginxRoll(m.excess[k], m.last[k], rule.Millis(t, m.phase), m.rate, nginxNeverFull)
	return rule.NginxFits(base, 1, m.most, m.burst)
}

func (m *nginxModel) apply(k int, t int64, admitted bool) {
	if admitted {
		ms := rule.Millis(t, m.phase)
		base, elapsed := rule.NginxRoll(m.excess[k], m.last[k], ms, m.rate, nginxNeverFull)
		m.excess[k], m.last[k] = rule.NginxTake(base, elapsed, m.last[k], ms, 1)
	}
}

// logModel is a sliding log: a request fits when fewer than L requests
// (admitted ones, or all with all) were logged in (t-W, t].
type logModel struct {
	all    bool
	logs   [][]int64
	limit  int64
	window int64
	saved  []int64
}

func (m *logModel) save(k int)    { m.saved = append(m.saved[:0], m.logs[k]...) }
func (m *logModel) restore(k int) { m.logs[k] = append(m.logs[k][:0], m.saved...) }

func (m *logModel) reset(p params, n int) {
	m.limit, m.window = p.limit, p.window
	if cap(m.logs) < n {
		m.logs = make([][]int64, n)
	}
	m.logs = m.logs[:n]
	for i := range m.logs {
		m.logs[i] = m.logs[i][:0]
	}
}

// decide counts the log's entries after its horizon, in (t-window, t];
// entries are in send order, so a binary search finds the first.
func (m *logModel) decide(k int, t int64) bool {
	l := m.logs[k]
	i, _ := slices.BinarySearch(l, rule.LogHorizon(t, m.window)+1)
	return rule.FixedFits(int64(len(l)-i), 1, m.limit)
}

func (m *logModel) apply(k int, t int64, admitted bool) {
	if !admitted && !m.all {
		return
	}
	l := m.logs[k]
	drop, _ := slices.BinarySearch(l, rule.LogHorizon(t, m.window)+1)
	if drop > 0 && drop*2 >= len(l) { // keep the slice from growing without bound
		l = append(l[:0], l[drop:]...)
	}
	m.logs[k] = append(l, t)
}

// counterModel is a sliding counter: the previous window's count weighted
// by the part of it still inside (t-W, t], plus the current one's, must
// leave room for the request. Its windows are on the clock, from phase.
type counterModel struct {
	all                  bool
	start, prev, curr    []int64
	limit, window, phase int64
	most                 int64 // where a count stops, with all
	saved                [3]int64
}

func (m *counterModel) save(k int) { m.saved = [3]int64{m.start[k], m.prev[k], m.curr[k]} }
func (m *counterModel) restore(k int) {
	m.start[k], m.prev[k], m.curr[k] = m.saved[0], m.saved[1], m.saved[2]
}

func (m *counterModel) reset(p params, n int) {
	m.limit, m.window, m.phase = p.limit, p.window, p.phase
	m.most = rule.CounterMost(p.limit, p.window)
	m.start = resize(m.start, n, math.MinInt64)
	m.prev = resize(m.prev, n, 0)
	m.curr = resize(m.curr, n, 0)
}

// at returns the counts as they stand at t.
func (m *counterModel) at(k int, t int64) (start, prev, curr int64) {
	return rule.CounterRoll(m.start[k], m.prev[k], m.curr[k], t, m.window, m.phase)
}

func (m *counterModel) decide(k int, t int64) bool {
	start, prev, curr := m.at(k, t)
	return rule.CounterFits(prev, curr, rule.CounterWeight(start, t, m.window), 1, m.limit, m.window)
}

func (m *counterModel) apply(k int, t int64, admitted bool) {
	m.start[k], m.prev[k], m.curr[k] = m.at(k, t)
	switch {
	case m.all:
		m.curr[k] = rule.CounterCount(m.curr[k], 1, m.most)
	case admitted:
		m.curr[k] = rule.FixedTake(m.curr[k], 1)
	}
}

// fixedModel is a fixed window on the clock: windows start at phase + jW.
type fixedModel struct {
	start, count         []int64
	limit, window, phase int64
	saved                [2]int64
}

func (m *fixedModel) save(k int)    { m.saved = [2]int64{m.start[k], m.count[k]} }
func (m *fixedModel) restore(k int) { m.start[k], m.count[k] = m.saved[0], m.saved[1] }

func (m *fixedModel) reset(p params, n int) {
	m.limit, m.window, m.phase = p.limit, p.window, p.phase
	m.start = resize(m.start, n, math.MinInt64)
	m.count = resize(m.count, n, 0)
}

func (m *fixedModel) decide(k int, t int64) bool {
	return rule.FixedFits(rule.FixedCount(m.start[k], m.count[k], t, m.window), 1, m.limit)
}

func (m *fixedModel) apply(k int, t int64, admitted bool) {
	start, count := rule.FixedRoll(m.start[k], m.count[k], t, m.window, m.phase)
	if admitted {
		count = rule.FixedTake(count, 1)
	}
	m.start[k], m.count[k] = start, count
}

// firstModel is a fixed window that a key's first request opens, for W
// (INCR then EXPIRE): every request counts, denied ones too, and one
// fits while the count is at most L.
type firstModel struct {
	open, count   []int64
	limit, window int64
	saved         [2]int64
}

func (m *firstModel) save(k int)    { m.saved = [2]int64{m.open[k], m.count[k]} }
func (m *firstModel) restore(k int) { m.open[k], m.count[k] = m.saved[0], m.saved[1] }

func (m *firstModel) reset(p params, n int) {
	m.limit, m.window = p.limit, p.window
	m.open = resize(m.open, n, math.MinInt64)
	m.count = resize(m.count, n, 0)
}

func (m *firstModel) decide(k int, t int64) bool {
	return rule.FixedFits(rule.FirstRoll(m.open[k], m.count[k], t, m.window), 1, m.limit)
}

func (m *firstModel) apply(k int, t int64, _ bool) {
	open := m.open[k]
	m.open[k], m.count[k] = rule.FirstTake(open, rule.FirstRoll(open, m.count[k], t, m.window), t, 1)
}

// resize returns s with n elements, all v.
func resize(s []int64, n int, v int64) []int64 {
	if cap(s) < n {
		s = make([]int64, n)
	}
	s = s[:n]
	for i := range s {
		s[i] = v
	}
	return s
}
