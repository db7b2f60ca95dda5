// Package fit tells which rate-limiting algorithm, with which policy and
// scope, a service behaves like, from a trace of its answers
// (requests.csv): every model of a family of limiters is replayed over the
// requests' send instants, and the one that predicts the answers best wins.
//
// Agreement is scored one step ahead: a model's state advances on the
// answers observed, not on its own predictions, so one request it gets
// wrong (a timing flip) is one miss, not a cascade. The run's timing
// uncertainty u (the p99 of answer minus send: the service decided
// somewhere in between) is honoured twice. A request is placed within the
// span from its send to its answer: requests of a key whose spans overlap
// are scored as a group, by their count of admissions, and one whose
// prediction would change within its span is too close to call, counted
// apart rather than scored. The run's timing uncertainty u, the p99 of
// answer minus send, is reported beside.
package fit

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Request is one answered request of a trace.
type Request struct {
	Sent, Done time.Duration // since the run's start
	Key        string        // the key the client sent
	Source     string        // the local address it left from
	Admitted   bool
}

// Scopes a limit may apply to.
const (
	ScopeGlobal = result.ScopeGlobal
	ScopeSource = result.ScopeSource
	ScopeKey    = result.ScopeKey
)

// Fit is one model with its best policy.
type Fit = result.Fit

// Result is what Run found: the fits, best first.
type Result struct {
	Requests      int64 `json:"requests"`
	Admitted      int64 `json:"admitted"`
	UncertaintyNS int64 `json:"timing_uncertainty_ns"`
	Best          Fit   `json:"best"`
	Fits          []Fit `json:"fits"`
	// Shaper: the service delayed requests rather than rejecting them
	// (no rejections, service times far above their floor); RatePerS is
	// then the rate at which it served.
	Shaper   bool    `json:"shaper,omitempty"`
	RatePerS float64 `json:"shaper_rate_per_s,omitempty"`
	// Confidence is result.Sure, result.Unsure or result.Unexplained;
	// Doubts say why it is not sure and what would tell.
	Confidence string   `json:"confidence,omitempty"`
	Doubts     []string `json:"doubts,omitempty"`
	// UnsureOf names the parts of the verdict the doubts concern
	// (PartModel, PartPolicy, PartScope): answers slower than a window
	// allows blur its length and limit, not which model it is.
	UnsureOf []string `json:"unsure_of,omitempty"`
	// Scopes are the scopes the trace could tell apart: with one, the
	// scope is not known.
	Scopes []string `json:"scopes"`
}

// Parts of a verdict a doubt may concern (Result.UnsureOf): the model,
// its policy (rate, limit, window, burst), the scope.
const (
	PartModel  = "model"
	PartPolicy = "policy"
	PartScope  = "scope"
)

// unsureOf reports whether r's verdict is unsure of part: not sure, and
// a doubt concerns part (or no doubt says which parts it concerns, as in
// a fit.json written before it did).
func (r *Result) unsureOf(part string) bool {
	return r.Confidence != result.Sure && (len(r.UnsureOf) == 0 || slices.Contains(r.UnsureOf, part))
}

// ErrNoRejections: a trace without rejections tells no limit.
var ErrNoRejections = errors.New("fit: the trace has no rejections, so no limit was reached")

// Options tune Run. The zero value fits a trace alone.
type Options struct {
	// StartUnixNS is the run's start in Unix ns: fixed windows on the
	// clock are tried at multiples of their length since the epoch.
	StartUnixNS int64
	// Windows are window lengths to try besides the usual ones (100ms to
	// 1m), and RatesPerS rates besides the data's, e.g. a probe's
	// estimates.
	Windows   []time.Duration
	RatesPerS []float64
}

// Run fits every model and scope to reqs and returns the fits, best
// first. Each model's best policy is found on its own scores; then the
// models within a few points of the best are compared request for request
// on the same requests (those any of the two finds too close to call set
// aside for both), ranked by how many others each beats, and ties go to
// fewer parameters, then a model that does not count denied requests.
// The models that decide as the best one on the trace are named in
// Best.Equivalent, and Confidence says how sure the verdict is. Models
// run one per goroutine.
func Run(reqs []Request, opts Options) (*Result, error) {
	if len(reqs) == 0 {
		return nil, errors.New("fit: no answered requests")
	}
	res := &Result{Requests: int64(len(reqs)), UncertaintyNS: int64(uncertainty(reqs))}
	for _, r := range reqs {
		if r.Admitted {
			res.Admitted++
		}
	}
	if res.Admitted == res.Requests {
		if rate, ok := shaperRate(reqs); ok {
			res.Shaper, res.RatePerS = true, rate
			return res, nil
		}
		return nil, ErrNoRejections
	}
	d := newData(reqs, res.UncertaintyNS, opts)
	for _, s := range d.scopes {
		res.Scopes = append(res.Scopes, s.name)
	}
	entries := make([]*entry, len(families)*len(d.scopes))
	var wg sync.WaitGroup
	for i, f := range families {
		wg.Go(func() {
			for j, scope := range d.scopes {
				entries[i*len(d.scopes)+j] = d.search(f, scope)
			}
		})
	}
	wg.Wait()
	d.rank(entries)
	for _, e := range entries {
		res.Fits = append(res.Fits, e.fit)
	}
	d.judge(entries, res)
	res.Fits[0] = res.Best
	return res, nil
}

// better orders fits: by agreement (within tieAgreement a tie), then
// fewer parameters, not counting denied requests, the rounder window, the
// wider scope, and the order of the families (the plainest first).
func better(a, b Fit) int {
	if math.Abs(a.AgreementPct-b.AgreementPct) >= tieAgreement {
		return cmp.Compare(b.AgreementPct, a.AgreementPct)
	}
	if c := cmp.Compare(nparams(a.Algorithm), nparams(b.Algorithm)); c != 0 {
		return c
	}
	if ac, bc := a.Denied(), b.Denied(); ac != bc {
		if ac {
			return 1
		}
		return -1
	}
	if !a.RateOnly() && !b.RateOnly() { // of windows as good, the rounder is the likelier setting: 2s over 1.98s
		if c := cmp.Compare(roundness(b.WindowNS), roundness(a.WindowNS)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(scopeRank(a.Scope), scopeRank(b.Scope)); c != 0 {
		return c
	}
	return cmp.Compare(familyIndex(a.Algorithm), familyIndex(b.Algorithm))
}

// tieAgreement is the difference in agreement, in percentage points,
// below which two fits are as good: a few timing flips in a thousand
// requests do not tell a GCRA from nginx's millisecond bucket.
const tieAgreement = 0.2

func familyIndex(algo string) int {
	return slices.IndexFunc(families, func(f family) bool { return f.name == algo })
}

// nparams is how many parameters a model has.
func nparams(algo string) int {
	for _, f := range families {
		if f.name == algo {
			return f.nparams
		}
	}
	return math.MaxInt
}

func scopeRank(s string) int {
	switch s {
	case ScopeGlobal:
		return 0
	case ScopeSource:
		return 1
	}
	return 2
}

// uncertainty is the p99 of answer minus send.
func uncertainty(reqs []Request) time.Duration {
	d := make([]time.Duration, len(reqs))
	for i, r := range reqs {
		d[i] = max(r.Done-r.Sent, 0)
	}
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*99/100)]
}

// shaperRate tells a service that only delays: every request admitted,
// answers spaced by a steady interval well above the fastest answer. It
// returns the rate of answers over the busy part.
func shaperRate(reqs []Request) (float64, bool) {
	if len(reqs) < 10 {
		return 0, false
	}
	svc := make([]time.Duration, len(reqs))
	done := make([]time.Duration, len(reqs))
	for i, r := range reqs {
		svc[i], done[i] = r.Done-r.Sent, r.Done
	}
	slices.Sort(svc)
	slices.Sort(done)
	floor, p90 := svc[0], svc[len(svc)*9/10]
	if p90 < 10*max(floor, time.Millisecond) { // no queueing to speak of
		return 0, false
	}
	span := done[len(done)-1] - done[len(done)/10]
	if span <= 0 {
		return 0, false
	}
	return float64(len(done)-1-len(done)/10) / span.Seconds(), true
}

// sortedUnique returns the distinct values of v, sorted.
func sortedUnique(v []int64) []int64 {
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return slices.Compact(v)
}

// Sentence says what the service is, e.g. "behaves like gcra of 50 per 1s
// with a burst of 21, per client address; 99.8% of 1,840 requests
// predicted, 1.2% too close to call; denied requests not counted".
func (r *Result) Sentence() string {
	if r.Shaper {
		return fmt.Sprintf("delays requests rather than rejecting them: a shaper serving %.1f per second", r.RatePerS)
	}
	b := r.Best
	if len(r.Scopes) == 1 {
		b.Scope = "" // not said: one client's requests cannot tell it
	}
	if r.Confidence == result.Unexplained {
		return fmt.Sprintf("is explained by no model: the closest, %s, predicts %.1f%% of %s requests, %.1f%% too close to call; %s",
			b, b.AgreementPct, result.Group(r.Requests), b.AmbiguousPct, strings.Join(r.Doubts, "; "))
	}
	s := "behaves like " + b.String()
	if len(b.Equivalent) > 1 {
		s += fmt.Sprintf(" (%s decide alike on this trace)", andList(b.Equivalent))
	}
	s += fmt.Sprintf("; %.1f%% of %s requests predicted, %.1f%% too close to call; ", b.AgreementPct, result.Group(r.Requests), b.AmbiguousPct)
	switch {
	case b.CountsDenied == nil:
		s += "whether denied requests count cannot be told"
	case *b.CountsDenied:
		s += "denied requests counted"
	default:
		s += "denied requests not counted"
	}
	if len(r.Scopes) == 1 {
		s += "; the scope cannot be told from one client"
	}
	if r.Confidence == result.Unsure {
		s += "; unsure: " + strings.Join(r.Doubts, "; ")
	}
	return s
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// File is the name of a fit in a run folder.
const File = "fit.json"

// WriteFile writes r as DIR/fit.json, atomically.
func (r *Result) WriteFile(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return result.WriteFileAtomic(filepath.Join(dir, File), append(b, '\n'))
}

// ReadResult reads DIR/fit.json.
func ReadResult(dir string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, File), err)
	}
	return &r, nil
}
