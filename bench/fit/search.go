package fit

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

// data is a trace prepared for scoring: instants, outcomes, and per scope
// each request's key index and group. The service decided each request
// somewhere between its send and its answer, nearer the answer (a request
// waits on its way in, for a connection or a busy server, more than the
// answer on its way back): its instant is three quarters of the way, lo
// and hi how far before and after it the decision may lie. Each is at
// least twice the median half-span, for a model's state also rests on
// earlier requests' instants.
type data struct {
	t       []int64
	lo, hi  []int64
	adm     []bool
	u       int64 // the timing uncertainty, p99 of answer minus send, as reported
	floor   int64 // the median answer time: the least span a request is ambiguous over
	start   int64 // the run's start, Unix ns: fixed windows on the clock start at multiples of W from the epoch
	windows []time.Duration
	rates   []float64 // per ns, to try besides the data's
	scopes  []*scope
}

// scope maps each request to the state it is limited by.
type scope struct {
	name    string
	key     []int   // per request: the index of its key in this scope
	n       int     // keys
	group   []int32 // per request: its group (requests of a key whose spans overlap)
	ngroups int
	// members lists the requests of each group of two or more, by group;
	// a single request's group has none.
	members [][]int
	// seeds read off the data: the admitted rates (per ns) of the busiest
	// key, as the median per overloaded second, as the mean between its
	// first and last rejection, and as that mean within each busy
	// stretch (see stretchRate); and its first burst.
	rate, mean, stretch float64
	burst               int64
	busy                int // the busiest key
}

func newData(reqs []Request, u int64, opts Options) *data {
	// The models want their instants in order, not the sends'.
	instant := func(r Request) int64 { return int64(r.Sent) + 3*int64(max(r.Done-r.Sent, 0))/4 }
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Compare(instant(a), instant(b)) })
	n := len(reqs)
	d := &data{t: make([]int64, n), lo: make([]int64, n), hi: make([]int64, n), adm: make([]bool, n), u: u, start: opts.StartUnixNS}
	d.windows = append(slices.Clone(windows), opts.Windows...)
	for _, r := range opts.RatesPerS {
		if r > 0 {
			d.rates = append(d.rates, r/1e9)
		}
	}
	spans := make([]int64, n)
	for i, r := range reqs {
		spans[i] = int64(max(r.Done-r.Sent, 0))
		d.t[i], d.adm[i] = instant(r), r.Admitted
	}
	d.floor = slices.Sorted(slices.Values(spans))[n/2] // twice the median half-span
	for i, s := range spans {
		d.lo[i], d.hi[i] = max(3*s/4, d.floor), max(s/4, d.floor)
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
	d.windows = append(d.windows, d.edgeWindows(d.scopes[0])...)
	return d
}

// edgeWindows are window lengths read off the spacing of the busiest
// key's window edges (where rejections that lasted longer than twice the
// timing uncertainty turn to an admission): under overload a window's
// edges come one window apart, or a whole number of windows after an
// idle time. The spacings are clustered (within 2%), and the medians of
// the four largest clusters, at least 20ms, are returned.
func (d *data) edgeWindows(s *scope) []time.Duration {
	edges := d.edges(s, -1)
	var gaps []int64
	for i := 1; i < len(edges); i++ {
		if g := edges[i] - edges[i-1]; g >= int64(20*time.Millisecond) {
			gaps = append(gaps, g)
		}
	}
	slices.Sort(gaps)
	var clusters [][]int64
	for i, g := range gaps {
		if i == 0 || float64(g) > 1.02*float64(gaps[i-1]) {
			clusters = append(clusters, nil)
		}
		clusters[len(clusters)-1] = append(clusters[len(clusters)-1], g)
	}
	slices.SortStableFunc(clusters, func(a, b []int64) int { return cmp.Compare(len(b), len(a)) })
	var out []time.Duration
	for _, c := range clusters[:min(4, len(clusters))] {
		out = append(out, time.Duration(c[len(c)/2]).Round(time.Millisecond))
	}
	return out
}

// edges are the instants at which the busiest key of s went from
// rejected to admitted after rejections that lasted longer than twice the
// timing uncertainty (an admission in the middle of a burst's rejections
// is timing, not a window's edge): at most n of them, or all for n < 0.
func (d *data) edges(s *scope, n int) []int64 {
	var out []int64
	rejectedFrom := int64(-1) // the first rejection of the current run of them
	for i, t := range d.t {
		if s.key[i] != s.busy {
			continue
		}
		switch {
		case !d.adm[i] && rejectedFrom < 0:
			rejectedFrom = t
		case d.adm[i] && rejectedFrom >= 0:
			if t-rejectedFrom > 2*d.u {
				out = append(out, t)
				if len(out) == n {
					return out
				}
			}
			rejectedFrom = -1
		}
	}
	return out
}

func (d *data) newScope(name string, reqs []Request, keyOf func(Request) string) *scope {
	s := &scope{name: name, key: make([]int, len(reqs)), group: make([]int32, len(reqs))}
	index := map[string]int{}
	var last []int64  // per key: the end of its last request's interval
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
		// Requests whose intervals overlap may have been decided in
		// either order: they are scored together.
		if lastG[k] >= 0 && d.t[i]-d.lo[i] <= last[k] {
			s.group[i] = lastG[k]
			last[k] = max(last[k], d.t[i]+d.hi[i])
		} else {
			s.group[i] = int32(s.ngroups)
			s.ngroups++
			last[k] = d.t[i] + d.hi[i]
		}
		lastG[k] = s.group[i]
	}
	s.n = len(index)
	s.members = make([][]int, s.ngroups)
	for i, g := range s.group {
		s.members[g] = append(s.members[g], i)
	}
	for g, m := range s.members {
		if len(m) < 2 {
			s.members[g] = nil
		}
	}
	s.busy = slices.Index(count, slices.Max(count))
	s.rate, s.mean, s.burst = d.seeds(s)
	s.stretch = d.stretchRate(s)
	return s
}

// stretchRate is the busiest key's admitted rate (per ns) while it was
// overloaded: its trace cut into busy stretches wherever it sent nothing
// for ten times its median gap (and at least 100ms), the admissions
// strictly between each stretch's first and last rejection over the time
// between them, summed. A bucket that is kept empty admits at its rate
// there, whatever it refilled while idle: traffic that comes and goes
// (bursts, on and off) is read right, where the mean over the whole
// trace counts the idle times and the median per second the refills.
// It is 0 when no stretch has two rejections.
func (d *data) stretchRate(s *scope) float64 {
	var idx []int
	for i := range d.t {
		if s.key[i] == s.busy {
			idx = append(idx, i)
		}
	}
	if len(idx) < 3 {
		return 0
	}
	gaps := make([]int64, len(idx)-1)
	for j := 1; j < len(idx); j++ {
		gaps[j-1] = d.t[idx[j]] - d.t[idx[j-1]]
	}
	idle := max(10*slices.Sorted(slices.Values(gaps))[len(gaps)/2], int64(100*time.Millisecond))
	var admitted, span int64
	firstRej, lastRej := int64(-1), int64(-1)
	var since, between int64 // admissions since the first rejection, and up to the last
	end := func() {
		if lastRej > firstRej {
			admitted, span = admitted+between, span+lastRej-firstRej
		}
		firstRej, lastRej, since, between = -1, -1, 0, 0
	}
	for j, i := range idx {
		if j > 0 && gaps[j-1] > idle {
			end()
		}
		switch {
		case !d.adm[i]:
			if firstRej < 0 {
				firstRej = d.t[i]
			}
			lastRej, between = d.t[i], since
		case firstRej >= 0:
			since++
		}
	}
	end()
	if span == 0 {
		return 0
	}
	return float64(max(admitted, 1)) / float64(span)
}

// seeds reads off the busiest key two estimates of its admitted rate (per
// ns): the median of what it admitted in the seconds in which it was also
// rejected (overloaded, whatever the idle time between; a whole number
// per second), and the mean from its first rejection to its last (a long
// run, not rounded); and its first burst: what it admitted before its
// first rejection, less what the median rate would have refilled
// meanwhile.
func (d *data) seeds(s *scope) (rate, mean float64, burst int64) {
	const bin = int64(time.Second)
	first, firstRej, lastRej := int64(-1), int64(-1), int64(-1)
	var before, between int64
	admitted, rejected := map[int64]int64{}, map[int64]bool{}
	for i, t := range d.t {
		if s.key[i] != s.busy {
			continue
		}
		if first < 0 {
			first = t
		}
		if !d.adm[i] {
			rejected[(t-first)/bin] = true
			if firstRej < 0 {
				firstRej = t
			}
			lastRej = t
			continue
		}
		admitted[(t-first)/bin]++
		if firstRej < 0 {
			before++
		} else {
			between++ // less those after the last rejection, below
		}
	}
	for i := len(d.t) - 1; i >= 0 && d.t[i] > lastRej; i-- {
		if s.key[i] == s.busy && d.adm[i] {
			between--
		}
	}
	if firstRej < 0 || lastRej <= firstRej {
		rate = float64(max(before, 1)) / float64(max(d.t[len(d.t)-1]-d.t[0], bin))
		return rate, rate, max(before, 1)
	}
	mean = float64(max(between, 1)) / float64(lastRej-firstRej)
	var perBin []int64
	for b := range rejected {
		if b != (firstRej-first)/bin { // the first burst's second holds the burst
			perBin = append(perBin, admitted[b])
		}
	}
	rate = mean
	if len(perBin) > 0 {
		slices.Sort(perBin)
		rate = float64(max(perBin[len(perBin)/2], 1)) / float64(bin)
	}
	burst = max(int64(math.Round(float64(before)-rate*float64(firstRej-first))), 1)
	return rate, mean, burst
}

// score replays the trace through m with p, one step ahead, and returns
// the requests scored, the misses among them and the requests too close
// to call. A group of requests that may have been decided in any order
// is predicted as a whole, from the state at its start, by the model's
// own decisions; its misses are the difference of the counts of
// admissions, less one for each of its requests too close to call (each
// may have gone either way). A request alone is a group of one: too close
// to call, it is no miss.
//
// With rec, each request's prediction (its group's own, for a member of
// one) and whether it was too close to call are kept in rec.
//
// A group's misses are counted when its last request is, so the cost
// (candidate.cost) only grows along the trace: once it exceeds bound the
// replay stops and returns the counts so far, a cost above bound. Most
// policies a search tries are far worse than the best so far, and are
// told so after a small part of a long trace.
func (d *data) score(m model, p params, s *scope, g *groupCounts, own []bool, rec *record, bound int64) (scored, misses, ambiguous int64) {
	m.reset(p, s.n)
	gp, gobs, gamb := g.reset(s.ngroups)
	for i, t := range d.t {
		k, g := s.key[i], s.group[i]
		members := s.members[g]
		if len(members) > 0 && members[0] == i {
			m.save(k)
			for _, j := range members {
				own[j] = m.decide(k, d.t[j])
				m.apply(k, d.t[j], own[j])
			}
			m.restore(k)
		}
		pred := m.decide(k, t)
		amb := (d.lo[i] > 0 || d.hi[i] > 0) && (m.decide(k, t-d.lo[i]) != pred || m.decide(k, t+d.hi[i]) != pred)
		if amb {
			ambiguous++
			gamb[g]++
		} else {
			scored++
		}
		if len(members) > 0 {
			pred = own[i]
		}
		if rec != nil {
			rec.pred[i], rec.amb[i] = pred, amb
		}
		if pred {
			gp[g]++
		}
		if d.adm[i] {
			gobs[g]++
		}
		m.apply(k, t, d.adm[i])
		if len(members) == 0 || members[len(members)-1] == i {
			misses += int64(max(abs(gp[g]-gobs[g])-gamb[g], 0))
			if 2*misses+ambiguous > bound {
				return scored, misses, ambiguous
			}
		} else if 2*misses+ambiguous > bound {
			return scored, misses, ambiguous
		}
	}
	return scored, misses, ambiguous
}

// unbounded is score's bound for a replay of the whole trace.
const unbounded = math.MaxInt64

// groupCounts are score's counts per group: admissions predicted and
// observed, and requests too close to call.
type groupCounts struct{ pred, obs, amb []int32 }

// reset returns the counts for n groups, zeroed.
func (g *groupCounts) reset(n int) (pred, obs, amb []int32) {
	for _, c := range []*[]int32{&g.pred, &g.obs, &g.amb} {
		if cap(*c) < n {
			*c = make([]int32, n)
		}
		*c = (*c)[:n]
		clear(*c)
	}
	return g.pred, g.obs, g.amb
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
// suggests: the lengths people configure, not only whole seconds.
var windows = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 1500 * time.Millisecond, 2 * time.Second, 2500 * time.Millisecond, 3 * time.Second, 4 * time.Second,
	5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute}

// search finds the best policy of f for scope s: seeds from the data,
// then a local search, and returns it as a Fit with its record.
func (d *data) search(f family, s *scope) *entry {
	m := f.new()
	var counts groupCounts
	own := make([]bool, len(d.t))
	// eval scores p; a cost above bound is known only to be that.
	eval := func(p params, bound int64) candidate {
		c := candidate{p: p}
		c.scored, c.misses, c.ambiguous = d.score(m, p, s, &counts, own, nil, bound)
		return c
	}
	// Every seed is scored; the best of each window and phase (for a
	// bucket: each rate and tick phase) starts a local search, for those
	// are different hills; the best few are climbed.
	starts := map[hill]candidate{}
	for _, p := range d.seedParams(f, s) {
		if !valid(f, p) {
			continue
		}
		h := hill{p.window, p.phase, p.interval}
		b, ok := starts[h]
		bound := int64(unbounded)
		if ok {
			bound = b.cost()
		}
		if c := eval(p, bound); !ok || c.cost() < b.cost() {
			starts[h] = c
		}
	}
	if !f.rateBased {
		hillLimits(f, starts, eval)
	}
	if f.phased {
		// Each window's best hill is tried at phases across the window
		// too: its edges, where the phases come from, may all be off.
		best := map[int64]candidate{}
		for _, c := range starts {
			if b, ok := best[c.p.window]; !ok || c.cost() < b.cost() {
				best[c.p.window] = c
			}
		}
		for w, c := range best {
			if n := d.phaseScan(c, eval); n.p != c.p {
				starts[hill{w, n.p.phase, 0}] = bestLimit(n, eval)
			}
		}
	}
	// The climbs start from the best hills first, and stop once one
	// explains everything.
	hills := slices.SortedFunc(maps.Values(starts), func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.cost(), b.cost()), cmp.Compare(a.p.window, b.p.window), cmp.Compare(a.p.phase, b.p.phase))
	})
	var best candidate
	for i, start := range hills {
		if i == maxClimbs || best.p != (params{}) && best.cost() == 0 {
			break
		}
		c := d.climb(f, start, eval)
		if best.p == (params{}) || c.cost() < best.cost() {
			best = c
		}
	}
	if f.phased && best.cost() > 0 {
		if n := d.phaseScan(best, eval); n.p != best.p {
			if n = d.climb(f, n, eval); n.cost() < best.cost() {
				best = n
			}
		}
	}
	e := &entry{fit: d.fitOf(f, s, best), family: f, scope: s, p: best.p,
		rec: record{pred: make([]bool, len(d.t)), amb: make([]bool, len(d.t))}}
	d.score(m, best.p, s, &counts, own, &e.rec, unbounded)
	return e
}

// hill is where a local search starts: a window and phase, or a bucket's
// rate and tick phase.
type hill struct{ window, phase, interval int64 }

// hillLimits sets each window hill's limit to the one that costs least.
// The phases of one window share it, give or take one: the window's best
// hill is searched (bestLimit), and its other phases try that limit and
// its two neighbours; a phased model seeds up to six phases a window, and
// a ternary search costs some fifty replays.
func hillLimits(f family, starts map[hill]candidate, eval evalFunc) {
	if !f.phased {
		for h, c := range starts {
			starts[h] = bestLimit(c, eval)
		}
		return
	}
	best := map[int64]hill{} // per window; ties to the earlier phase, so that the result is the same on every run
	for h, c := range starts {
		b, ok := best[h.window]
		if !ok || cmp.Or(cmp.Compare(c.cost(), starts[b].cost()), cmp.Compare(h.phase, b.phase)) < 0 {
			best[h.window] = h
		}
	}
	for w, bh := range best {
		found := bestLimit(starts[bh], eval)
		starts[bh] = found
		for h, c := range starts {
			if h.window != w || h == bh {
				continue
			}
			for _, l := range []int64{found.p.limit - 1, found.p.limit, found.p.limit + 1} {
				p := c.p
				p.limit = l
				if valid(f, p) {
					if n := eval(p, c.cost()); n.cost() < c.cost() {
						c = n
					}
				}
			}
			starts[h] = c
		}
	}
}

// phaseScan tries c's window and limit at phaseSteps phases across the
// window and returns the best of them if it beats c, else c: windows on
// the clock may start anywhere, and the edges seen (where the seeds come
// from) may all be off by more than a climb's steps.
func (d *data) phaseScan(c candidate, eval evalFunc) candidate {
	best := c
	for k := range int64(phaseSteps) {
		p := c.p
		p.phase = k * p.window / phaseSteps
		if n := eval(p, best.cost()); n.cost() < best.cost() {
			best = n
		}
	}
	return best
}

// phaseSteps is how many phases phaseScan tries.
const phaseSteps = 32

// maxClimbs bounds the local searches of one model and scope.
const maxClimbs = 6

// evalFunc scores a policy; a cost above bound is known only to be that.
type evalFunc func(p params, bound int64) candidate

// bestLimit finds, for c's window (and phase), the limit that costs
// least: misses fall as the limit nears the true one from either side, so
// a ternary search over 1 to four times c's limit finds it in a few dozen
// scores. Each score stops once it costs more than the best so far: when
// both points of a step do, the best so far tells which side to keep (of
// a cost with one valley, the best point seen lies in the part kept).
func bestLimit(c candidate, eval evalFunc) candidate {
	lo, hi := int64(1), 4*c.p.limit+8
	best := c
	at := func(l int64) candidate {
		p := c.p
		p.limit = l
		n := eval(p, best.cost())
		if n.cost() < best.cost() {
			best = n
		}
		return n
	}
	for hi-lo > 2 {
		m1, m2 := lo+(hi-lo)/3, hi-(hi-lo)/3
		b := best.cost()
		c1, c2 := at(m1).cost(), at(m2).cost()
		switch {
		case c1 <= b || c2 <= b: // one at least is exact, and a loser's cost above it is enough
			if c1 <= c2 {
				hi = m2
			} else {
				lo = m1
			}
		case best.p.limit < m1:
			hi = m2
		case best.p.limit > m2:
			lo = m1
		default:
			lo, hi = m1, m2
		}
	}
	for l := lo; l <= hi; l++ {
		at(l)
	}
	return best
}

// roundness counts the trailing zeros of a window in ns: of two windows
// that score the same, the rounder is the likelier setting.
func roundness(w int64) int {
	n := 0
	for w != 0 && w%10 == 0 {
		w /= 10
		n++
	}
	return n
}

// rounding is how round p's policy is: a window's roundness, or for a
// bucket the rate's: a whole number per second (4), per ten seconds (3),
// per minute (2), per hour (1), or none of these (0).
func rounding(f family, p params) int {
	if !f.rateBased {
		return roundness(p.window)
	}
	for i, w := range []float64{1e9, 1e10, 6e10, 3.6e12} {
		n := w / float64(p.interval)
		if r := math.Round(n); r >= 1 && math.Abs(n-r) <= 1e-4*n {
			return 4 - i
		}
	}
	return 0
}

// climb moves from c to the best of its neighbours while that is better.
// Among the neighbours that cost at most one in 100 scored requests more
// than the cheapest (and no more than c), the roundest is taken: in the
// timing noise, a service is likelier set to 1s than to 1.001s, to 50 per
// second than to 50.1. Each step lowers the cost or, at the same cost,
// raises the roundness, so the climb ends.
func (d *data) climb(f family, c candidate, eval evalFunc) candidate {
	for range 100 {
		var ns []candidate
		cheapest := c.cost()
		for _, p := range moves(f, c.p, d.floor) {
			if valid(f, p) {
				n := eval(p, c.cost()) // a neighbour costing more than c is not taken
				ns = append(ns, n)
				cheapest = min(cheapest, n.cost())
			}
		}
		tol := cheapest + max(c.scored/100, 1)
		next, found := c, c.cost() <= tol
		for _, n := range ns {
			if n.cost() > tol || n.cost() > c.cost() {
				continue
			}
			rn, rnext := rounding(f, n.p), rounding(f, next.p)
			if !found || rn > rnext || rn == rnext && n.cost() < next.cost() {
				next, found = n, true
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
		// The capacity shows as the most admitted at once: in a span a
		// few answer times long.
		short := max(5*d.floor, int64(10*time.Millisecond))
		bursts := sortedUnique([]int64{s.burst, s.maxIn(d, short), s.maxIn(d, short) + 1})
		phases := []int64{0}
		if f.ticked {
			phases = tickPhases
		}
		var out []params
		rates := append([]float64{s.rate, s.mean}, d.rates...)
		if s.stretch > 0 {
			rates = append(rates, s.stretch)
		}
		for _, r := range rates {
			for _, b := range bursts {
				for _, ph := range phases {
					out = append(out, params{interval: int64(math.Round(1 / r)), burst: max(b, 1), phase: ph})
				}
			}
		}
		return out
	}
	var out []params
	for _, w := range d.windows {
		w := int64(w)
		phases := []int64{0}
		if f.phased {
			phases = d.phases(s, w)
		}
		l, most := max(int64(math.Round(s.rate*float64(w))), 1), s.maxIn(d, w)
		lm := max(int64(math.Round(s.mean*float64(w))), 1)
		for _, limit := range sortedUnique([]int64{l, lm, most, (l + most) / 2}) {
			for _, ph := range phases {
				out = append(out, params{limit: limit, window: w, phase: ph})
			}
		}
	}
	return out
}

// tickPhases are the phases of a millisecond clock tried first, a tenth
// of a millisecond apart; the best few start climbs of their own.
var tickPhases = func() []int64 {
	p := make([]int64, 10)
	for i := range p {
		p[i] = int64(i) * int64(time.Millisecond) / 10
	}
	return p
}()

// phases are the fixed-window phases tried for window w: the epoch's, and
// where the busiest key went from rejected to admitted after rejections
// that lasted longer than twice the timing uncertainty (an admission in
// the middle of a burst's rejections is timing, not a window's edge).
func (d *data) phases(s *scope, w int64) []int64 {
	out := []int64{floorMod(-d.start, w)}
	for _, t := range d.edges(s, 5) {
		out = append(out, floorMod(t, w))
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
		// Rate and capacity trade off: under overload a bucket with one
		// slot too many admits a request early after every admission, so
		// a new interval is tried with the capacities around the current
		// one as well.
		var intervals []int64
		for _, r := range []float64{0.9, 0.97, 0.99, 0.997, 0.999, 1.001, 1.003, 1.01, 1.03, 1.1} {
			intervals = append(intervals, int64(math.Round(float64(p.interval)*r)))
		}
		// The interval of a whole rate per second, ten seconds or a minute:
		// an algorithm's interval is ceil(W/L).
		for _, w := range []float64{1e9, 1e10, 6e10} {
			if n := math.Round(w / float64(p.interval)); n >= 1 {
				intervals = append(intervals, int64(math.Ceil(w/n)), int64(math.Ceil(w/(n+1))), int64(math.Ceil(w/max(n-1, 1))))
			}
		}
		for _, iv := range sortedUnique(intervals) {
			for _, db := range []int64{-2, -1, 0, 1, 2} {
				q := p
				q.interval, q.burst = iv, p.burst+db
				out = append(out, q)
			}
		}
		for _, db := range []int64{-5, -2, -1, 1, 2, 5, p.burst / 2, -p.burst / 3} {
			q := p
			q.burst += db
			out = append(out, q)
		}
		if f.ticked {
			for _, dp := range []int64{-250e3, -100e3, -50e3, 50e3, 100e3, 250e3} {
				q := p
				q.phase = floorMod(p.phase+dp, int64(time.Millisecond))
				out = append(out, q)
			}
		}
		return out
	}
	for _, dl := range []int64{-5, -2, -1, 1, 2, 5} {
		q := p
		q.limit += dl
		out = append(out, q)
	}
	var ws []int64
	for _, r := range []float64{0.9, 0.99, 0.999, 1.001, 1.01, 1.1} {
		ws = append(ws, int64(math.Round(float64(p.window)*r)))
	}
	for _, unit := range []int64{1e6, 1e7, 1e8, 1e9} { // the window rounded to a ms, 10ms, 100ms, 1s
		if r := (p.window + unit/2) / unit * unit; r > 0 && r != p.window {
			ws = append(ws, r)
		}
	}
	for _, w := range ws {
		q := p
		q.window = w
		if f.phased {
			q.phase = floorMod(q.phase, q.window)
		}
		out = append(out, q)
	}
	if f.phased {
		// A phase a little late (an edge found at the first admission
		// after it) is best paired with a limit one lower: the two move
		// together too.
		step := max(u, p.window/1000, 1)
		for _, dp := range []int64{-10 * step, -step, -step / 4, -1e6, 1e6, step / 4, step, 10 * step} {
			for _, dl := range []int64{-1, 0, 1} {
				q := p
				q.phase, q.limit = floorMod(p.phase+dp, p.window), p.limit+dl
				out = append(out, q)
			}
		}
	}
	return out
}

// fitOf turns the best candidate into a Fit in the terms of the list.
func (d *data) fitOf(f family, s *scope, c candidate) Fit {
	fit := Fit{Algorithm: f.name, CountsDenied: &f.countsDenied, Scope: s.name,
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
	fit.Limit, fit.WindowNS, fit.Burst = p.limit, p.window, p.limit
	if f.phased {
		fit.PhaseNS = p.phase
		if d.start != 0 {
			u := floorMod(d.start+p.phase, p.window)
			fit.UnixPhaseNS = &u
		}
	}
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
