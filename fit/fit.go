// Package fit tells which rate-limiting algorithm, with which policy and
// scope, a service behaves like, from a trace of its answers
// (requests.csv): every model of a family of limiters is replayed over the
// requests' send instants, and the one that predicts the answers best wins.
//
// Agreement is scored one step ahead: a model's state advances on the
// answers observed, not on its own predictions, so one request it gets
// wrong (a timing flip) is one miss, not a cascade. The run's timing
// uncertainty u (the p99 of answer minus send: the service decided
// somewhere in between) is honoured twice: requests of a key sent within
// u of each other are scored as a group, by their count of admissions;
// and a request is placed at the middle of its send and its answer, and
// one whose prediction would change anywhere within u/2 of that is too
// close to call, counted apart rather than scored.
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
	"strconv"
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
	ScopeGlobal = "global" // one limit for all requests
	ScopeSource = "source" // one per client address
	ScopeKey    = "key"    // one per key (the key header)
)

// Fit is one model with its best policy. Limit per Window with Burst is
// the policy in the terms of `ratebench list`: for a bucket, Burst is its
// capacity and the window is a canonical one (only the rate Limit/Window
// is known); for a window, Burst is the limit.
type Fit struct {
	Algorithm    string  `json:"algorithm"`
	Limit        int64   `json:"limit"`
	WindowNS     int64   `json:"window_ns"`
	Burst        int64   `json:"burst"`
	PhaseNS      int64   `json:"phase_ns,omitempty"` // fixed-window: window starts, ns into the run, modulo the window
	CountsDenied bool    `json:"counts_denied"`
	Scope        string  `json:"scope"`
	AgreementPct float64 `json:"agreement_pct"` // of the scored requests, predicted right
	AmbiguousPct float64 `json:"ambiguous_pct"` // of all requests, too close to call
	Scored       int64   `json:"scored"`
	Misses       int64   `json:"misses"`
	Ambiguous    int64   `json:"ambiguous"`
	nparams      int
}

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
}

// ErrNoRejections: a trace without rejections tells no limit.
var ErrNoRejections = errors.New("fit: the trace has no rejections, so no limit was reached")

// Run fits every model and scope to reqs (in send order; startUnixNS the
// run's start, where fixed windows on the clock are tried first) and
// returns the fits, best first: by agreement, then fewer parameters, then
// a model that does not count denied requests. Models run one per
// goroutine.
func Run(reqs []Request, startUnixNS int64) (*Result, error) {
	if len(reqs) == 0 {
		return nil, errors.New("fit: no answered requests")
	}
	// Two requests may leave in the other order than their rows by a few
	// microseconds (two connections' goroutines): the models want time
	// order.
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Compare(a.Sent, b.Sent) })
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
	d := newData(reqs, res.UncertaintyNS, startUnixNS)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, f := range families {
		wg.Go(func() {
			var fits []Fit
			for _, scope := range d.scopes {
				fits = append(fits, d.search(f, scope))
			}
			mu.Lock()
			res.Fits = append(res.Fits, fits...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortStableFunc(res.Fits, better)
	res.Best = res.Fits[0]
	return res, nil
}

// better orders fits: fewer misses per scored request, fewer parameters,
// not counting denied requests, the narrower scope, then by name.
func better(a, b Fit) int {
	if c := cmp.Compare(b.AgreementPct, a.AgreementPct); math.Abs(a.AgreementPct-b.AgreementPct) > 1e-9 {
		return c
	}
	if c := cmp.Compare(a.nparams, b.nparams); c != 0 {
		return c
	}
	if a.CountsDenied != b.CountsDenied {
		if a.CountsDenied {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(scopeRank(a.Scope), scopeRank(b.Scope)); c != 0 {
		return c
	}
	return cmp.Compare(a.Algorithm, b.Algorithm)
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

// String is the fit in a sentence's words: "gcra of 50 per 1s with a
// burst of 21, per client address".
func (f Fit) String() string {
	where := map[string]string{ScopeGlobal: "for all clients together", ScopeSource: "per client address", ScopeKey: "per key"}[f.Scope]
	w := time.Duration(f.WindowNS)
	s := fmt.Sprintf("%s of %s per %v", f.Algorithm, group(f.Limit), w)
	if f.Burst != f.Limit {
		s += fmt.Sprintf(" with a burst of %s", group(f.Burst))
	}
	if f.PhaseNS != 0 {
		s += fmt.Sprintf(", windows starting %v into the run", time.Duration(f.PhaseNS))
	}
	return s + ", " + where
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
	denied := "denied requests not counted"
	if b.CountsDenied {
		denied = "denied requests counted"
	}
	return fmt.Sprintf("behaves like %s; %.1f%% of %s requests predicted, %.1f%% too close to call; %s",
		b, b.AgreementPct, group(r.Requests), b.AmbiguousPct, denied)
}

// group formats n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
