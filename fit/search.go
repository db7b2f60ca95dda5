package fit

import (
	"maps"
	"math"
	"slices"
	"time"
)

// data is a trace prepared for scoring: instants, outcomes, and per scope
// each request's key index and group. A request's instant is the middle
// of its send and its answer: the service decided somewhere in between,
// so for all but 1% of requests within u/2 of it.
type data struct {
	t      []int64
	adm    []bool
	u      int64 // the timing uncertainty: requests within it of each other may have been decided in either order
	half   int64 // u/2: how far a decision may lie from its instant
	start  int64 // the run's start, Unix ns: fixed windows on the clock start at multiples of W from the epoch
	scopes []*scope
}

// scope maps each request to the state it is limited by.
type scope struct {
	name    string
	key     []int   // per request: the index of its key in this scope
	n       int     // keys
	group   []int32 // per request: its group (requests of a key within u)
	ngroups int
	// seeds read off the data: the long-run admitted rate (per ns) and the
	// first burst of the busiest key.
	rate  float64
	burst int64
	busy  int // the busiest key
}

func newData(reqs []Request, u int64, start int64) *data {
	d := &data{t: make([]int64, len(reqs)), adm: make([]bool, len(reqs)), u: u, half: u / 2, start: start}
	for i, r := range reqs {
		d.t[i], d.adm[i] = int64(r.Sent+max(r.Done-r.Sent, 0)/2), r.Admitted
	}
	keyOf := map[string]func(Request) string{
		ScopeGlobal: func(Request) string { return "" },
		ScopeSource: func(r Request) string { return r.Source },
		ScopeKey:    func(r Request) string { return r.Key },
	}
	distinct := map[string]int{}
	for _, name := range []string{ScopeSource, ScopeKey} {
		seen := map[string]bool{}
		for _, r := range reqs {
			seen[keyOf[name](r)] = true
		}
		distinct[name] = len(seen)
	}
	d.scopes = append(d.scopes, d.newScope(ScopeGlobal, reqs, keyOf[ScopeGlobal]))
	if distinct[ScopeSource] > 1 {
		d.scopes = append(d.scopes, d.newScope(ScopeSource, reqs, keyOf[ScopeSource]))
	}
	if distinct[ScopeKey] > 1 && distinct[ScopeKey] != distinct[ScopeSource] || distinct[ScopeKey] > 1 && distinct[ScopeSource] <= 1 {
		d.scopes = append(d.scopes, d.newScope(ScopeKey, reqs, keyOf[ScopeKey]))
	}
	return d
}

func (d *data) newScope(name string, reqs []Request, keyOf func(Request) string) *scope {
	s := &scope{name: name, key: make([]int, len(reqs)), group: make([]int32, len(reqs))}
	index := map[string]int{}
	var last []int64  // per key: the last send instant
	var lastG []int32 // per key: its last group
	var count []int
	for i, r := range reqs {
		k, ok := index[keyOf(r)]
		if !ok {
			k = len(index)
			index[keyOf(r)] = k
			last, lastG, count = append(last, math.MinInt64), append(lastG, -1), append(count, 0)
		}
		s.key[i] = k
		count[k]++
		if lastG[k] >= 0 && d.t[i]-last[k] <= d.u {
			s.group[i] = lastG[k]
		} else {
			s.group[i] = int32(s.ngroups)
			s.ngroups++
		}
		last[k], lastG[k] = d.t[i], s.group[i]
	}
	s.n = len(index)
	s.busy = slices.Index(count, slices.Max(count))
	s.rate, s.burst = d.seeds(s)
	return s
}

// seeds reads off the busiest key the admitted rate between its first and
// last rejection, and its first burst: what it admitted before its first
// rejection, less what the rate would have refilled meanwhile.
func (d *data) seeds(s *scope) (rate float64, burst int64) {
	first, firstRej, lastRej := int64(-1), int64(-1), int64(-1)
	var before, between int64
	for i := range d.t {
		if s.key[i] != s.busy {
			continue
		}
		if first < 0 {
			first = d.t[i]
		}
		if !d.adm[i] {
			if firstRej < 0 {
				firstRej = d.t[i]
			}
			lastRej = d.t[i]
		}
	}
	for i := range d.t {
		if s.key[i] != s.busy || !d.adm[i] {
			continue
		}
		switch {
		case firstRej < 0 || d.t[i] < firstRej:
			before++
		case d.t[i] <= lastRej:
			between++
		}
	}
	if firstRej < 0 || lastRej <= firstRej {
		return float64(max(before, 1)) / float64(max(d.t[len(d.t)-1]-d.t[0], 1)), max(before, 1)
	}
	rate = float64(max(between, 1)) / float64(lastRej-firstRej)
	burst = max(int64(math.Round(float64(before)-rate*float64(firstRej-first))), 1)
	return rate, burst
}

// score replays the trace through m with p, one step ahead, and returns
// the requests scored, the misses among them and the requests too close
// to call.
func (d *data) score(m model, p params, s *scope, gp, gobs []int32) (scored, misses, ambiguous int64) {
	m.reset(p, s.n)
	clear(gp)
	clear(gobs)
	for i, t := range d.t {
		k := s.key[i]
		pred := m.decide(k, t)
		if d.half > 0 && (m.decide(k, t-d.half) != pred || m.decide(k, t+d.half) != pred) {
			ambiguous++
		} else {
			scored++
			g := s.group[i]
			if pred {
				gp[g]++
			}
			if d.adm[i] {
				gobs[g]++
			}
		}
		m.apply(k, t, d.adm[i])
	}
	for g := range gp {
		misses += int64(abs(gp[g] - gobs[g]))
	}
	return scored, misses, ambiguous
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// candidate is a policy and how it scored; cost ranks candidates, a miss
// counting twice a request too close to call.
type candidate struct {
	p                         params
	scored, misses, ambiguous int64
}

func (c candidate) cost() int64 { return 2*c.misses + c.ambiguous }

// windows are the window lengths tried first, besides those the data
// suggests.
var windows = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute}

// search finds the best policy of f for scope s: seeds from the data,
// then a local search, and returns it as a Fit.
func (d *data) search(f family, s *scope) Fit {
	m := f.new()
	gp, gobs := make([]int32, s.ngroups), make([]int32, s.ngroups)
	eval := func(p params) candidate {
		c := candidate{p: p}
		c.scored, c.misses, c.ambiguous = d.score(m, p, s, gp, gobs)
		return c
	}
	// Every seed is scored; the best of each window starts a local
	// search, for the seeds of different windows are different hills.
	starts := map[int64]candidate{}
	for _, p := range d.seedParams(f, s) {
		if !valid(f, p) {
			continue
		}
		c := eval(p)
		if b, ok := starts[p.window]; !ok || c.cost() < b.cost() {
			starts[p.window] = c
		}
	}
	var best candidate
	for _, w := range slices.Sorted(maps.Keys(starts)) {
		if best.p != (params{}) && best.cost() == 0 {
			break
		}
		c := d.climb(f, starts[w], eval)
		if best.p == (params{}) || c.cost() < best.cost() {
			best = c
		}
	}
	return d.fitOf(f, s, best)
}

// climb moves from c to the best of its neighbours while that is better.
func (d *data) climb(f family, c candidate, eval func(params) candidate) candidate {
	for range 100 {
		next := c
		for _, p := range moves(f, c.p, d.half) {
			if !valid(f, p) {
				continue
			}
			if n := eval(p); n.cost() < next.cost() {
				next = n
			}
		}
		if next.p == c.p {
			return c
		}
		c = next
	}
	return c
}

// valid reports whether p is a policy f can take.
func valid(f family, p params) bool {
	if f.rateBased {
		return p.interval >= 1 && p.burst >= 1 && p.burst < 1<<40
	}
	return p.limit >= 1 && p.window >= int64(time.Millisecond) && p.limit < 1<<40
}

// seedParams are the first policies tried.
func (d *data) seedParams(f family, s *scope) []params {
	if f.rateBased {
		t := int64(math.Round(1 / s.rate))
		return []params{{interval: t, burst: s.burst}, {interval: t, burst: s.burst + 1}, {interval: t, burst: max(s.burst-1, 1)}}
	}
	var out []params
	for _, w := range windows {
		w := int64(w)
		phases := []int64{0}
		if f.phased {
			phases = d.phases(s, w)
		}
		l, most := max(int64(math.Round(s.rate*float64(w))), 1), s.maxIn(d, w)
		for _, limit := range sortedUnique([]int64{l, most, (l + most) / 2}) {
			for _, ph := range phases {
				out = append(out, params{limit: limit, window: w, phase: ph})
			}
		}
	}
	return out
}

// phases are the fixed-window phases tried for window w: the epoch's, and
// where the busiest key went from rejected to admitted.
func (d *data) phases(s *scope, w int64) []int64 {
	out := []int64{floorMod(-d.start, w)}
	prevRejected := false
	for i, t := range d.t {
		if s.key[i] != s.busy {
			continue
		}
		if d.adm[i] && prevRejected {
			out = append(out, floorMod(t, w))
			if len(out) == 8 {
				break
			}
		}
		prevRejected = !d.adm[i]
	}
	return sortedUnique(out)
}

func floorMod(a, w int64) int64 {
	r := a % w
	if r < 0 {
		r += w
	}
	return r
}

// maxIn is the most the busiest key had admitted in any span of w.
func (s *scope) maxIn(d *data, w int64) int64 {
	var at []int64
	var best int64
	j := 0
	for i, t := range d.t {
		if s.key[i] != s.busy || !d.adm[i] {
			continue
		}
		at = append(at, t)
		for at[j] <= t-w {
			j++
		}
		best = max(best, int64(len(at)-j))
	}
	return max(best, 1)
}

// moves are the neighbours of p the local search tries.
func moves(f family, p params, u int64) []params {
	var out []params
	if f.rateBased {
		for _, r := range []float64{0.9, 0.97, 0.99, 0.997, 0.999, 1.001, 1.003, 1.01, 1.03, 1.1} {
			q := p
			q.interval = int64(math.Round(float64(p.interval) * r))
			out = append(out, q)
		}
		// The interval of a whole rate per second, ten seconds or a minute:
		// an algorithm's interval is ceil(W/L).
		for _, w := range []float64{1e9, 1e10, 6e10} {
			if n := math.Round(w / float64(p.interval)); n >= 1 {
				q := p
				q.interval = int64(math.Ceil(w / n))
				out = append(out, q)
			}
		}
		for _, db := range []int64{-5, -2, -1, 1, 2, 5} {
			q := p
			q.burst += db
			out = append(out, q)
		}
		return out
	}
	for _, dl := range []int64{-5, -2, -1, 1, 2, 5} {
		q := p
		q.limit += dl
		out = append(out, q)
	}
	for _, r := range []float64{0.9, 0.99, 0.999, 1.001, 1.01, 1.1} {
		q := p
		q.window = int64(math.Round(float64(p.window) * r))
		if f.phased {
			q.phase = floorMod(q.phase, q.window)
		}
		out = append(out, q)
	}
	if f.phased {
		step := max(u, p.window/1000, 1)
		for _, dp := range []int64{-10 * step, -step, step, 10 * step} {
			q := p
			q.phase = floorMod(p.phase+dp, p.window)
			out = append(out, q)
		}
	}
	return out
}

// fitOf turns the best candidate into a Fit in the terms of the list.
func (d *data) fitOf(f family, s *scope, c candidate) Fit {
	fit := Fit{Algorithm: f.name, CountsDenied: f.countsDenied, Scope: s.name, nparams: f.nparams,
		Scored: c.scored, Misses: c.misses, Ambiguous: c.ambiguous}
	if c.scored > 0 {
		fit.AgreementPct = 100 * float64(c.scored-c.misses) / float64(c.scored)
	}
	fit.AmbiguousPct = 100 * float64(c.ambiguous) / float64(len(d.t))
	p := c.p
	if f.rateBased {
		fit.Limit, fit.WindowNS = perWindow(p.interval)
		fit.Burst = p.burst
		return fit
	}
	fit.Limit, fit.WindowNS, fit.Burst, fit.PhaseNS = p.limit, p.window, p.limit, p.phase
	return fit
}

// perWindow writes a rate of one per interval as whole requests per a
// canonical window: the first of 1s, 10s, 1m and 1h in which it is within
// 0.1% of a whole number.
func perWindow(interval int64) (limit, window int64) {
	for _, w := range []int64{int64(time.Second), int64(10 * time.Second), int64(time.Minute), int64(time.Hour)} {
		n := float64(w) / float64(interval)
		if r := math.Round(n); r >= 1 && math.Abs(n-r) <= 0.001*n {
			return int64(r), w
		}
	}
	return max(int64(math.Round(float64(time.Hour)/float64(interval))), 1), int64(time.Hour)
}
