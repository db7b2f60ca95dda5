package tracefile

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
	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/result"
)

// Counting says how a run's rows count, as the engine that made them
// counted them. Times are in ns.
type Counting struct {
	// Policy is the run's; its window is the W of the most admitted in any
	// span W, its limit the denominator of the ratios.
	Policy result.PolicyJSON
	// Bin is the series' bin width (Series.BinNS).
	Bin int64
	// Theory is the run's theory (Run.TheoryMaxInWindow) and Over the
	// total above which the shortest span is looked for (Run.TheoryFor());
	// <= 0 when unknown.
	Theory, Over int64
	// Served: a shaper's run, whose admits count when served (done_ns),
	// not when sent; and whose instants are then the limiter's own (no
	// timing uncertainty).
	Served bool
	// HTTP: an HTTP run, whose errors are neither admitted nor rejected;
	// otherwise an error is admitted when FailOpen and rejected when not,
	// as a limiter error is.
	HTTP     bool
	FailOpen bool
	// Reference, when not nil, is the exact limiter (backend.Reference) the
	// decisions are compared with, each at its send instant in send order,
	// as the engines compare theirs: Finish then sets the disagreement.
	// An HTTP run's failed requests are not compared. Summary owns it.
	Reference algorithms.Limiter
}

// Summary turns a run's rows, given in send order, into the measures of
// a result.Run, the way the engines' recorder does: counts and costs,
// status codes and error kinds, the series, the exact most admitted for
// one key in any span (t-W, t] counted on send instants (served instants
// for a shaper), the shortest span above the theory, per-key counts and
// fairness, latency (done minus sent) and the timing uncertainty (its
// p99); for an HTTP run, what its rate-limit fields were worth
// (Run.HTTP.Headers, as httpexec.HeaderCheck judges them). The zero value is not
// usable; use NewSummary. Not safe for concurrent use.
type Summary struct {
	c         Counting
	run       result.Run
	over      int64
	admitted  []int64
	rejected  []int64
	keys      map[string]*keyStats
	last      *keyStats
	pending   servedHeap
	lat       *hdrhistogram.Histogram
	waited    bool // some row's done is after its sent
	prev      int64
	end       int64
	reordered int64
	falseAdm  int64
	falseRej  int64
	refErr    error
	headers   *httpexec.HeaderCheck // an HTTP run's
}

// keyStats is one key's share and its exact span maximum.
type keyStats = result.KeyTally

// NewSummary returns a Summary counting as c says.
func NewSummary(c Counting) *Summary {
	s := &Summary{
		c:    c,
		run:  result.Run{TheoryMaxInWindow: max(c.Theory, 0), DisagreementPct: -1, FailOpen: c.FailOpen && !c.HTTP},
		over: c.Over,
		keys: map[string]*keyStats{},
		lat:  result.NewHistogram(),
	}
	if s.over <= 0 {
		s.over = math.MaxInt64
	}
	if s.c.Bin <= 0 {
		s.c.Bin = 1
	}
	if c.HTTP {
		s.headers = httpexec.NewHeaderCheck()
	}
	return s
}

func (s *Summary) key(k string) *keyStats {
	if s.last != nil && s.last.Name == k {
		return s.last
	}
	ks := s.keys[k]
	if ks == nil {
		ks = &keyStats{Name: strings.Clone(k), Span: result.NewSpanMax(s.c.Policy.WindowNS, s.over)}
		s.keys[ks.Name] = ks
	}
	s.last = ks
	return ks
}

// Add counts one row. Rows come in send order; a row sent before the one
// before it counts at that one's instant (as the live collector raises
// such a decision), and is counted by Reordered.
func (s *Summary) Add(r Row) {
	at := int64(r.Sent)
	if at < s.prev {
		s.reordered++
		at = s.prev
	}
	s.prev = at
	s.end = max(s.end, at)
	if s.c.Served {
		s.release(at)
	}
	if s.headers != nil {
		s.headers.Row(r.Row)
	}
	ks := s.key(r.Key)
	ks.Offered++
	s.run.Offered++
	s.run.OfferedCost += r.Cost
	if r.Status != 0 {
		if s.run.StatusCodes == nil {
			s.run.StatusCodes = map[string]int64{}
		}
		s.run.StatusCodes[strconv.Itoa(r.Status)]++
	}
	if r.Done >= r.Sent {
		d := int64(r.Done - r.Sent)
		s.waited = s.waited || d > 0
		_ = s.lat.RecordValue(min(max(d, result.HistLowest), result.HistHighest))
	}
	allowed := r.Outcome == call.Admitted
	if r.Outcome == call.Failed {
		s.run.Errors++
		if s.run.ErrorKinds == nil {
			s.run.ErrorKinds = map[string]int64{}
		}
		kind := r.ErrorKind
		if kind == "" {
			kind = "other"
		}
		s.run.ErrorKinds[kind]++
		if s.c.HTTP {
			return
		}
		allowed = s.c.FailOpen
	}
	s.compare(at, r, allowed)
	if !allowed {
		s.run.Rejected++
		s.run.RejectedCost += r.Cost
		s.rejected = addBin(s.rejected, at/s.c.Bin, r.Cost)
		return
	}
	s.run.Admitted++
	s.run.AdmittedCost += r.Cost
	ks.Admitted++
	if !s.c.Served {
		s.admit(ks, at, r.Cost)
		return
	}
	heap.Push(&s.pending, served{at: max(int64(r.Done), at), cost: r.Cost, key: ks})
}

// compare asks the reference what it decides of the row, sent at at.
func (s *Summary) compare(at int64, r Row, allowed bool) {
	if s.c.Reference == nil || s.refErr != nil {
		return
	}
	want, err := s.c.Reference.Allow(time.Duration(at), r.Key, r.Cost)
	switch {
	case err != nil:
		s.refErr = err
	case allowed && !want.Allowed:
		s.falseAdm++
	case !allowed && want.Allowed:
		s.falseRej++
	}
}

// release counts the services due by now: any still pending is served
// after now.
func (s *Summary) release(now int64) {
	for len(s.pending) > 0 && s.pending[0].at <= now {
		x := heap.Pop(&s.pending).(served)
		s.admit(x.key, x.at, x.cost)
	}
}

func (s *Summary) admit(ks *keyStats, at, cost int64) {
	s.admitted = addBin(s.admitted, at/s.c.Bin, cost)
	ks.Span.Add(at, cost)
	s.end = max(s.end, at)
}

// Reordered counts the rows sent before the row before them.
func (s *Summary) Reordered() int64 { return s.reordered }

// End is the latest instant counted so far (ns).
func (s *Summary) End() int64 { return s.end }

// Finish counts the services still pending and returns the run; duration
// (ns) is the length of the run: the series has at least duration/Bin
// bins, and the throughput is over it (0: up to the last instant). The
// run has no algorithm, backend or replicas: the caller knows them. Its
// disagreement is -1 without a Reference, or when the reference failed
// (an error it returns).
func (s *Summary) Finish(duration int64) (result.Run, error) {
	s.release(math.MaxInt64)
	run := s.run
	if s.c.Reference != nil && s.refErr == nil {
		run.FalseAdmits, run.FalseRejects = s.falseAdm, s.falseRej
		if run.Offered > 0 {
			run.DisagreementPct = 100 * float64(s.falseAdm+s.falseRej) / float64(run.Offered)
		}
	}
	if duration <= 0 {
		duration = s.end + 1
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
	if s.waited { // in virtual time a meter decides at once: no latency to speak of
		run.Latency, run.LatencyHDR = result.PercentilesOf(s.lat), result.EncodeHistogram(s.lat)
		if !s.c.Served {
			run.TimingUncertaintyNS = run.Latency.P99
		}
	}
	if s.headers != nil {
		run.HTTP = &result.HTTPStats{Headers: s.headers.Result()}
	}
	if s.refErr != nil {
		return run, fmt.Errorf("tracefile: reference: %w", s.refErr)
	}
	return run, nil
}

func addBin(bins []int64, i, cost int64) []int64 {
	if i >= int64(len(bins)) {
		bins = append(bins, make([]int64, i+1-int64(len(bins)))...)
	}
	bins[i] += cost
	return bins
}

// served is an admitted request a shaper serves at instant at.
type served struct {
	at, cost int64
	key      *keyStats
}

// servedHeap orders pending services by instant.
type servedHeap []served

func (h servedHeap) Len() int           { return len(h) }
func (h servedHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h servedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *servedHeap) Push(x any)        { *h = append(*h, x.(served)) }
func (h *servedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
