package fit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// entry is one model's best policy for one scope, with what it predicted
// for each request.
type entry struct {
	fit    Fit
	family family
	scope  *scope
	p      params
	rec    record
}

// record is a model's prediction for each request (its group's own for
// a member of one) and whether the request was too close to call.
type record struct{ pred, amb []bool }

// judged is a's and b's agreement (in percent) on the same requests: the
// requests either of them finds too close to call are set aside for both,
// so that neither wins by declaring more of them ambiguous.
func (d *data) judged(a, b *entry) (pa, pb float64) {
	mask := make([]bool, len(d.t))
	for i := range mask {
		mask[i] = a.rec.amb[i] || b.rec.amb[i]
	}
	return d.agreement(a, mask), d.agreement(b, mask)
}

// agreement is e's share of the requests outside mask predicted right, in
// percent: its misses, counted per group as in score, less one for each
// request of the group in mask.
func (d *data) agreement(e *entry, mask []bool) float64 {
	s := e.scope
	pred, obs, amb := make([]int32, s.ngroups), make([]int32, s.ngroups), make([]int32, s.ngroups)
	var masked int64
	for i, g := range s.group {
		if e.rec.pred[i] {
			pred[g]++
		}
		if d.adm[i] {
			obs[g]++
		}
		if mask[i] {
			amb[g]++
			masked++
		}
	}
	var misses int64
	for g := range pred {
		misses += int64(max(abs(pred[g]-obs[g])-amb[g], 0))
	}
	scored := int64(len(d.t)) - masked
	if scored <= 0 {
		return 0
	}
	return 100 * float64(scored-misses) / float64(scored)
}

// farMisses replays e's model and counts the requests alone in their
// group (overlapping no other of their key) that it scored and got
// wrong, and whose prediction stays the same at every instant within
// within of theirs (a quarter, a half and the whole of it either side).
// Timing explains a miss next to a decision edge: the service decided a
// little earlier or later than the model placed it. A miss far from every
// edge is the model's own: the limiter does something the model does not.
func (d *data) farMisses(e *entry, within int64) (far int64) {
	s := e.scope
	m := e.family.new()
	m.reset(e.p, s.n)
	for i, t := range d.t {
		k := s.key[i]
		if s.members[s.group[i]] == nil && !e.rec.amb[i] {
			if pred := m.decide(k, t); pred != d.adm[i] && stays(m, k, t, within, pred) {
				far++
			}
		}
		m.apply(k, t, d.adm[i])
	}
	return far
}

// stays reports whether m predicts pred for key k at t-D and t+D for D
// a quarter, a half and the whole of within.
func stays(m model, k int, t, within int64, pred bool) bool {
	for _, dt := range []int64{within / 4, within / 2, within} {
		if m.decide(k, t-dt) != pred || m.decide(k, t+dt) != pred {
			return false
		}
	}
	return true
}

// alike reports whether a and b decide the same on the trace: they differ
// on no more than one request in 500 of those neither finds too close to
// call, or one in 100 for models of one kind (a GCRA and nginx's
// millisecond bucket part on a few requests near a refill, which timing
// then decides).
func (d *data) alike(a, b *entry) bool {
	var differ int
	for i := range d.t {
		if a.rec.pred[i] != b.rec.pred[i] && !a.rec.amb[i] && !b.rec.amb[i] {
			differ++
		}
	}
	if kindOf(a.family.name) == kindOf(b.family.name) {
		return differ <= len(d.t)/100
	}
	return differ <= len(d.t)/500
}

// contention is how far, in points of agreement, below the best fit's own
// a fit of another group may be and still be looked at as a close call.
const contention = 5

// rank orders the entries best first, by how many of the others each
// beats: on the same requests by at least tieAgreement, or, as good as
// each other there, on all of them (every request scored by its
// prediction, none set aside), so that a model does not win by finding
// more requests too close to call. Those with as many wins are ordered by
// better.
func (d *data) rank(es []*entry) {
	n := len(es)
	none := make([]bool, len(d.t))
	raw := map[*entry]float64{}
	for _, e := range es {
		raw[e] = d.agreement(e, none)
	}
	wins := map[*entry]int{}
	for i := range n {
		for j := i + 1; j < n; j++ {
			a, b := es[i], es[j]
			pa, pb := d.judged(a, b)
			if math.Abs(pa-pb) < tieAgreement {
				pa, pb = raw[a], raw[b]
			}
			switch {
			case pa-pb >= tieAgreement:
				wins[a]++
			case pb-pa >= tieAgreement:
				wins[b]++
			}
		}
	}
	slices.SortStableFunc(es, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(wins[b], wins[a]), better(a.fit, b.fit))
	})
}

// Thresholds of a sure verdict: the best fit predicts at least minSure
// percent of the scored requests with at most maxAmbiguous percent too
// close to call, and no model of another group comes within closeCall
// points of it on the same requests. Below minExplained percent, or above
// maxExplainedAmbiguous too close to call, or with too many misses that
// timing cannot explain (farMisses), no model explains the trace.
const (
	timingShare           = 50 // a window model is unsure when u exceeds the window over this
	minSure               = 99
	maxAmbiguous          = 5
	closeCall             = 0.5
	minExplained          = 95
	maxExplainedAmbiguous = 25
)

// A miss is far (farMisses) when its prediction holds within farFrom
// times the timing uncertainty of its instant; with more than
// maxFarPerMille of the scored requests far, and more than minFar, no
// model explains the trace. A true model's misses are timing, next to an edge;
// a window that a request opens can leave a few far (the opening request's
// instant, not this one's, was off).
const (
	farFrom        = 2
	maxFarPerMille = 5
	minFar         = 5
)

// judge groups the ranked entries with the best (those that decide alike
// on the trace), fills the best fit's Equivalent and CountsDenied, and
// says how sure the verdict is and why not.
func (d *data) judge(es []*entry, res *Result) {
	best := es[0]
	group, others := d.alikeGroup(best, es)
	b := &res.Best
	*b = best.fit
	b.Equivalent = equivalents(b.Equivalent, group)
	b.CountsDenied = countsDenied(best, group)
	res.Confidence, res.Doubts, res.UnsureOf = result.Sure, nil, nil
	if why := d.unexplained(best, b); why != "" {
		res.Confidence = result.Unexplained
		res.Doubts = []string{why}
		return
	}
	d.doubtFit(best, res)
	d.doubtRivals(best, others, res)
	doubtGroup(group, res)
}

// alikeGroup splits es into the best and those that decide alike with
// it, and the others, each in rank order.
func (d *data) alikeGroup(best *entry, es []*entry) (group, others []*entry) {
	for _, e := range es {
		if e == best || d.alike(best, e) {
			group = append(group, e)
		} else {
			others = append(others, e)
		}
	}
	return group, others
}

// equivalents adds to names those of the group's models, and of the
// algorithms each stands for, that it does not hold yet.
func equivalents(names []string, group []*entry) []string {
	for _, e := range group {
		for _, name := range append([]string{e.family.name}, standsFor[e.family.name]...) {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// countsDenied is whether best counts denied requests when every model
// of its group agrees on it (a model for which it makes no difference
// agrees with both), else nil.
func countsDenied(best *entry, group []*entry) *bool {
	counts := map[bool]bool{}
	for _, e := range group {
		counts[e.family.countsDenied] = true
		if deniedUnknowable[e.family.name] {
			counts[!e.family.countsDenied] = true
		}
	}
	if len(counts) != 1 {
		return nil
	}
	v := best.family.countsDenied
	return &v
}

// unexplained says why no model explains the trace when b, the fit of
// best, the closest, predicts too little or calls too much too close to
// call, or when timing cannot explain too many of its misses; it is ""
// when best explains the trace.
func (d *data) unexplained(best *entry, b *Fit) string {
	if b.AgreementPct < minExplained || b.AmbiguousPct > maxExplainedAmbiguous {
		return fmt.Sprintf("the closest predicts under %d%% of the scored requests, or calls over %d%% too close to call",
			minExplained, maxExplainedAmbiguous)
	}
	if far := d.farMisses(best, farFrom*d.u); far > max(minFar, b.Scored*maxFarPerMille/1000) {
		return fmt.Sprintf("%d of the requests it gets wrong are more than %v (twice the answers' p99) from any instant at which it would decide otherwise: timing does not explain them",
			far, result.Readable(time.Duration(farFrom*d.u)))
	}
	return ""
}

// doubt makes the verdict unsure of parts (a doubt of the model is one of
// its policy too) and says why.
func (r *Result) doubt(parts []string, format string, a ...any) {
	r.Confidence = result.Unsure
	r.Doubts = append(r.Doubts, fmt.Sprintf(format, a...))
	if slices.Contains(parts, PartModel) {
		parts = append(parts, PartPolicy)
	}
	for _, p := range parts {
		if !slices.Contains(r.UnsureOf, p) {
			r.UnsureOf = append(r.UnsureOf, p)
		}
	}
}

// doubtFit doubts the best fit on its own: it predicts too few requests,
// the answers are slow next to its window (a window model) or to the
// interval between two requests at its rate (a rate model, whose burst
// and rate they then blur by a request or more), or it calls too many
// too close to call.
func (d *data) doubtFit(best *entry, res *Result) {
	b := &res.Best
	if b.AgreementPct < minSure {
		res.doubt([]string{PartModel}, "only %.1f%% of the scored requests predicted (under %d%%): more requests (-max-requests) and a longer -max-duration would show whether another model or policy explains the rest", b.AgreementPct, minSure)
	}
	if w := b.WindowNS; !best.family.rateBased && w > 0 && d.u > w/timingShare {
		res.doubt([]string{PartPolicy}, "answers took up to %v (p99), more than 1/%d of the %v window: its length and limit are known only to about that; a quieter host or a client nearer the service would tell",
			result.Readable(time.Duration(d.u)), timingShare, result.Readable(time.Duration(w)))
	}
	if best.family.rateBased && b.Limit > 0 && d.u > b.WindowNS/b.Limit {
		interval := b.WindowNS / b.Limit
		res.doubt([]string{PartPolicy}, "answers took up to %v (p99), more than the %v between two requests at its rate: its burst is known only to about %d requests, and its rate to about that over the run; a quieter host or a client nearer the service would tell",
			result.Readable(time.Duration(d.u)), result.Readable(time.Duration(interval)), (d.u+interval-1)/interval)
	}
	if b.AmbiguousPct > maxAmbiguous {
		res.doubt([]string{PartModel}, "%.1f%% of the requests were too close to call (over %d%%): the answers' timing blurs the thresholds; a quieter host or a client nearer the service would tell", b.AmbiguousPct, maxAmbiguous)
	}
}

// doubtRivals doubts the best fit when the first of the others (ranked by
// wins, not by their own agreement) that is neither far behind nor the
// same algorithm predicts the same requests within closeCall points.
func (d *data) doubtRivals(best *entry, others []*entry, res *Result) {
	b := &res.Best
	for _, e := range others {
		if e.fit.AgreementPct < b.AgreementPct-contention ||
			e.scope == best.scope && kindOf(e.family.name) == kindOf(best.family.name) {
			continue // far behind, or the same algorithm
		}
		if pb, pe := d.judged(best, e); pb-pe < closeCall {
			var parts []string
			if kindOf(e.family.name) != kindOf(best.family.name) {
				parts = append(parts, PartModel)
			}
			if e.scope != best.scope {
				parts = append(parts, PartScope)
			}
			res.doubt(parts, "%s predicts the same requests within %.1f points (%.1f%% against %.1f%%): %s would tell them apart",
				e.fit, pb-pe, pe, pb, apart(best, e))
			return
		}
	}
}

// doubtGroup doubts the verdict when the models that decide alike with
// the best are of several kinds, or limit in several scopes.
func doubtGroup(group []*entry, res *Result) {
	var ks, scopes []string
	for _, e := range group {
		if k := kindOf(e.family.name); !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
		if !slices.Contains(scopes, e.scope.name) {
			scopes = append(scopes, e.scope.name)
		}
	}
	if len(ks) > 1 {
		res.doubt([]string{PartModel}, "the trace cannot tell %s apart: a longer -max-duration (more overload and window edges) would", andList(ks))
	}
	if len(scopes) > 1 {
		words := make([]string, len(scopes))
		for i, s := range scopes {
			words[i] = scopeWords[s]
		}
		slices.Sort(words)
		res.doubt([]string{PartScope}, "the trace cannot tell %s: more client addresses (-source-addrs) or keys (-key-header) would", strings.Join(words, " from "))
	}
}

// standsFor names, for a model, the algorithms of the list that always
// decide as it does: one model stands for the bucket family.
var standsFor = map[string][]string{"gcra": {"token-bucket", "leaky-bucket", "x-rate"}}

// deniedUnknowable names the models whose decisions are the same whether
// or not they count denied requests: a fixed window, on the clock or
// opened by a request, admits up to its limit and then nothing until it
// closes, either way.
var deniedUnknowable = map[string]bool{"fixed-window": true, "fixed-window-first": true}

// kinds name the kind of limiter each model is, counting denied requests
// or not: models of one kind differ only in details a trace rarely
// shows, so a group of them still names the algorithm.
var kinds = map[string]string{
	"gcra": "a token bucket", "nginx-limit-req": "a token bucket", "token-bucket-debt": "a token bucket",
	"sliding-log": "a sliding log", "sliding-log-all": "a sliding log",
	"sliding-counter": "a sliding counter", "sliding-counter-all": "a sliding counter",
	"httprate": "a sliding counter", "haproxy-req-rate": "a sliding counter",
	"fixed-window": "a fixed window", "fixed-window-first": "a window opened by a first request",
}

// kindOf is the kind of the model called name; a model of no listed kind
// is a kind of its own.
func kindOf(name string) string {
	if k, ok := kinds[name]; ok {
		return k
	}
	return name
}

// scopeWords name the scopes in a sentence.
var scopeWords = map[string]string{ScopeGlobal: "all clients together", ScopeSource: "per client address", ScopeKey: "per key"}

// apart says what experiment would tell two models apart.
func apart(a, b *entry) string {
	switch {
	case a.scope.name != b.scope.name:
		return "more client addresses (-source-addrs) or keys (-key-header)"
	case a.family.countsDenied != b.family.countsDenied:
		return "longer overload (a longer -max-duration)"
	case a.family.rateBased != b.family.rateBased:
		return "more window edges (a longer -max-duration, or -window as a hint)"
	}
	return "more requests (-max-requests) and a longer -max-duration"
}
