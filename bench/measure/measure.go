// Package measure turns the rows of a pass, one per request, into the
// measures of a result.Run. It is the one place a run is counted: the
// simulator and the live engine hand it each decision as it is made, and
// report and merge hand it the rows of a requests.csv, so a run rebuilt
// from its trace is counted by the same rules as the run itself.
package measure

import (
	"container/heap"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// Counting says how a run's rows count. Times are in ns.
type Counting struct {
	// Policy is the run's; its window is the W of the most admitted in any
	// span W, its limit the denominator of the ratios (none when 0).
	Policy result.PolicyJSON
	// Bin is the series' bin width (Series.BinNS); 0 means 1.
	Bin int64
	// Theory is the run's theory (Run.TheoryMaxInWindow) and Over the
	// total above which the shortest span is looked for (Run.TheoryFor());
	// <= 0 when unknown.
	Theory, Over int64
	// Served: a shaper's run, whose admits count when served (Done), not
	// when sent, and whose latency is the delay its admitted requests
	// waited to be served (Latency aside).
	Served bool
	// HTTP: an executor's run, whose failures are neither admitted nor
	// rejected; otherwise a failure is admitted when FailOpen and rejected
	// when not, as a limiter error is.
	HTTP     bool
	FailOpen bool
	// Latency: unless Served, every row's done minus sent is its latency,
	// and the p99 the run's timing uncertainty. A trace's rows are counted
	// so; the engines measure the latency of their calls on their own.
	Latency bool
	// Reference, when not nil, is the exact limiter (backend.Reference)
	// each decision is compared with at its instant, in order: Finish then
	// sets the disagreement. A failure of an HTTP run is not compared. The
	// Summary owns it.
	Reference algorithms.Limiter
	// Check, when not nil, judges the rows' claims (httpexec.HeaderCheck
	// for an HTTP trace): Finish puts its result in Run.HTTP.Headers. The
	// Summary owns it.
	Check call.Checker
}

// Summary counts a pass's rows, given in instant order: counts and costs,
// status codes and error kinds, the series, the exact most admitted for
// one key in any span (t-W, t] (on served instants for a shaper), the
// shortest span above the theory, per-key counts and fairness, the
// disagreement with a reference, and as Counting says, latency and the
// rows' claims. Adding a row allocates nothing once its key and bins are
// known. The zero value is not usable; use New. Not safe for concurrent
// use: one per pass.
type Summary struct {
	c         Counting
	run       result.Run
	over      int64
	admitted  []int64
	rejected  []int64
	keys      map[string]*result.KeyTally
	last      *result.KeyTally // the key looked up last
	lastKey   string           // its name, as the row gave it
	pending   servedHeap
	lat       *hdrhistogram.Histogram
	waited    bool  // some row's done is after its sent
	prev      int64 // the instant the last row counted at
	end       int64 // the latest service counted, which may be after prev
	reordered int64
	falseAdm  int64
	falseRej  int64
	compared  bool // Disagree gave the disagreement
	refErr    error
}

// New returns a Summary counting as c says.
func New(c Counting) *Summary {
	s := &Summary{
		c:    c,
		run:  result.Run{TheoryMaxInWindow: max(c.Theory, 0), DisagreementPct: -1, FailOpen: c.FailOpen && !c.HTTP},
		over: c.Over,
		keys: map[string]*result.KeyTally{},
	}
	if s.over <= 0 {
		s.over = math.MaxInt64 // unknown: nothing to look for
	}
	if s.c.Bin <= 0 {
		s.c.Bin = 1
	}
	if c.Latency || c.Served {
		s.lat = result.NewHistogram()
	}
	return s
}

// key returns the tally of key k. Rows mostly come with the key of the
// row before them, and often with the very same string (a generator's or
// a parser's), which compares without reading its bytes: so that key, as
// given, is looked at first, in a check small enough to be inlined into
// Add; lookup finds the others.
func (s *Summary) key(k string) *result.KeyTally {
	if s.last != nil && s.lastKey == k {
		return s.last
	}
	return s.lookup(k)
}

// lookup returns the tally of key k, made if new, and remembers it as the
// last one looked up.
func (s *Summary) lookup(k string) *result.KeyTally {
	ks := s.keys[k]
	if ks == nil {
		ks = &result.KeyTally{Name: strings.Clone(k), Span: result.NewSpanMax(s.c.Policy.WindowNS, s.over)}
		s.keys[ks.Name] = ks
	}
	s.last, s.lastKey = ks, k
	return ks
}

// Add counts one row. Rows come in the order of their Sent instants; a
// row sent before the one before it counts at that one's instant, and is
// counted by Reordered.
func (s *Summary) Add(r *call.Row) {
	at := int64(r.Sent)
	if at < s.prev {
		s.reordered++
		at = s.prev
	}
	s.prev = at
	if s.c.Served {
		s.release(at)
	}
	cost := max(r.Cost, 1)
	ks := s.key(r.Key)
	ks.Offered++
	s.run.Offered++
	s.run.OfferedCost += cost
	if r.Status != 0 || s.c.Latency || s.c.Check != nil {
		s.observe(r)
	}
	allowed := r.Outcome == call.Admitted
	if r.Outcome == call.Failed {
		s.failure(r.ErrorKind)
		if s.c.HTTP {
			return
		}
		allowed = s.c.FailOpen
	}
	if s.c.Reference != nil && s.refErr == nil {
		s.compare(at, r, cost, allowed)
	}
	if !allowed {
		if r.TableFull {
			s.run.TableFull++
		}
		s.run.Rejected++
		s.run.RejectedCost += cost
		s.rejected = addBin(s.rejected, at/s.c.Bin, cost)
		return
	}
	s.run.Admitted++
	s.run.AdmittedCost += cost
	ks.Admitted++
	if s.c.Served {
		served := max(int64(r.Done), at)
		_ = s.lat.RecordValue(min(max(served-at, result.HistLowest), result.HistHighest))
		heap.Push(&s.pending, pending{at: served, cost: cost, key: ks})
		return
	}
	// admit, written out: a meter's admission is most rows, and admit is
	// too big to inline.
	s.admitted = addBin(s.admitted, at/s.c.Bin, cost)
	ks.Span.Add(at, cost)
}

// observe counts what a row says beyond its decision: its HTTP status,
// its latency, its claims.
func (s *Summary) observe(r *call.Row) {
	if r.Status != 0 {
		if s.run.StatusCodes == nil {
			s.run.StatusCodes = map[string]int64{}
		}
		s.run.StatusCodes[strconv.Itoa(r.Status)]++
	}
	if s.c.Latency && !s.c.Served && r.Done >= r.Sent {
		d := int64(r.Done - r.Sent)
		s.waited = s.waited || d > 0
		_ = s.lat.RecordValue(min(max(d, result.HistLowest), result.HistHighest))
	}
	if s.c.Check != nil {
		s.c.Check.Row(*r)
	}
}

// failure counts a request that got no decision, by its error kind.
func (s *Summary) failure(kind string) {
	s.run.Errors++
	if s.run.ErrorKinds == nil {
		s.run.ErrorKinds = map[string]int64{}
	}
	if kind == "" {
		kind = "other"
	}
	s.run.ErrorKinds[kind]++
}

// compare asks the reference what it decides of the row, counted at at.
func (s *Summary) compare(at int64, r *call.Row, cost int64, allowed bool) {
	want, err := s.c.Reference.Allow(time.Duration(at), r.Key, cost)
	switch {
	case err != nil:
		s.refErr = err
	case allowed && !want.Allowed:
		s.falseAdm++
	case !allowed && want.Allowed:
		s.falseRej++
	}
}

// Disagree sets the decisions that differed from the exact reference, for
// an engine that compared them itself (one reference pass for every
// target) instead of through Counting.Reference.
func (s *Summary) Disagree(falseAdmits, falseRejects int64) {
	s.falseAdm, s.falseRej, s.compared = falseAdmits, falseRejects, true
}

// release counts the services due by now: any still pending is served
// after now.
func (s *Summary) release(now int64) {
	for len(s.pending) > 0 && s.pending[0].at <= now {
		x := heap.Pop(&s.pending).(pending)
		s.admit(x.key, x.at, x.cost)
		s.end = max(s.end, x.at)
	}
}

func (s *Summary) admit(ks *result.KeyTally, at, cost int64) {
	s.admitted = addBin(s.admitted, at/s.c.Bin, cost)
	ks.Span.Add(at, cost)
}

// Counts is what was offered and admitted so far, for a progress bar.
func (s *Summary) Counts() (offered, admitted int64) { return s.run.Offered, s.run.Admitted }

// Reordered counts the rows sent before the row before them.
func (s *Summary) Reordered() int64 { return s.reordered }

// End is the latest instant counted so far (ns).
func (s *Summary) End() int64 { return max(s.prev, s.end) }

// Finish counts the services still pending and returns the run; duration
// (ns) is the length of the run: the series has at least duration/Bin
// bins, and the throughput is over it (0: up to the last instant). The
// run has no algorithm, backend or replicas: the caller knows them. Its
// disagreement is -1 unless a Reference or Disagree gave one; an error
// of the reference is returned with the run.
func (s *Summary) Finish(duration int64) (result.Run, error) {
	s.release(math.MaxInt64)
	run := s.run
	if s.c.Reference != nil && s.refErr == nil || s.compared {
		run.FalseAdmits, run.FalseRejects = s.falseAdm, s.falseRej
		if run.Offered > 0 {
			run.DisagreementPct = 100 * float64(s.falseAdm+s.falseRej) / float64(run.Offered)
		}
	}
	if duration <= 0 {
		duration = s.End() + 1
	}
	bin := s.c.Bin
	n := max(int64(len(s.admitted)), int64(len(s.rejected)), (duration+bin-1)/bin, 1)
	run.Series = result.Series{BinNS: bin, Admitted: addBin(s.admitted, n-1, 0), Rejected: addBin(s.rejected, n-1, 0)}
	keys := make([]*result.KeyTally, 0, len(s.keys))
	for _, k := range s.keys {
		keys = append(keys, k)
	}
	run.SetKeys(keys)
	if lim := s.c.Policy.Limit; lim > 0 {
		run.BurstRatio = float64(run.MaxAdmittedInWindow) / float64(lim)
		run.TheoryRatio = float64(run.TheoryMaxInWindow) / float64(lim)
	}
	run.ThroughputPerS = float64(run.AdmittedCost) / (float64(duration) / 1e9)
	s.latency(&run)
	if s.c.Check != nil {
		run.HTTP = &result.HTTPStats{Headers: s.c.Check.Result()}
	}
	if s.refErr != nil {
		return run, fmt.Errorf("measure: reference: %w", s.refErr)
	}
	return run, nil
}

// latency puts the rows' latency into run: a shaper's delays whenever one
// was admitted; otherwise done minus sent, when some row waited (in
// virtual time a meter decides at once: no latency to speak of), its p99
// the timing uncertainty.
func (s *Summary) latency(run *result.Run) {
	switch {
	case s.lat == nil || s.lat.TotalCount() == 0:
	case s.c.Served:
		run.Latency, run.LatencyHDR = result.PercentilesOf(s.lat), result.EncodeHistogram(s.lat)
	case s.waited:
		run.Latency, run.LatencyHDR = result.PercentilesOf(s.lat), result.EncodeHistogram(s.lat)
		run.TimingUncertaintyNS = run.Latency.P99
	}
}

func addBin(bins []int64, i, cost int64) []int64 {
	if i >= int64(len(bins)) {
		bins = append(bins, make([]int64, i+1-int64(len(bins)))...)
	}
	bins[i] += cost
	return bins
}

// pending is an admitted request a shaper serves at instant at.
type pending struct {
	at, cost int64
	key      *result.KeyTally
}

// servedHeap orders pending services by instant.
type servedHeap []pending

func (h servedHeap) Len() int           { return len(h) }
func (h servedHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h servedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *servedHeap) Push(x any)        { *h = append(*h, x.(pending)) }
func (h *servedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
