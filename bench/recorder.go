package bench

import (
	"container/heap"
	"context"
	"errors"
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// keyStats is one key's share and its exact span maximum.
type keyStats = result.KeyTally

// served is an admitted request a shaper will serve at instant at.
type served struct {
	at, cost int64
	key      *keyStats
}

// servedHeap orders pending shaper services by instant.
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

// recorder turns a stream of (arrival, decision) pairs into a Run: counts,
// series, the exact most admitted in any span W per key, fairness,
// disagreement with a reference, and shaper delays. Arrivals must come in
// non-decreasing instant order. The zero value is not usable; use
// NewRecorder. Not safe for concurrent use: one per pass.
type recorder struct {
	run      result.Run
	window   int64
	over     int64 // the theory for one key; an excess over it is looked for
	bin      int64
	failOpen bool
	shaper   bool
	admitted []int64
	rejected []int64
	keys     map[string]*keyStats
	last     *keyStats // the key looked up last
	pending  servedHeap
	delays   *hdrhistogram.Histogram
	end      int64
}

// newRecorder returns a recorder for a run of target under policy p with
// time bins of bin.
func newRecorder(t call.Target, p algorithms.Policy, bin int64) *recorder {
	r := &recorder{
		run: result.Run{
			Algorithm: t.Name, Backend: t.Backend, Replicas: max(t.Replicas, 1),
			TheoryMaxInWindow: t.Theory, DisagreementPct: -1, FailOpen: t.FailOpen,
		},
		window:   int64(p.Window),
		bin:      bin,
		failOpen: t.FailOpen,
		shaper:   t.Shaper,
		keys:     map[string]*keyStats{},
	}
	if t.Shaper {
		r.delays = result.NewHistogram()
	}
	r.over = r.run.TheoryFor()
	if r.over <= 0 {
		r.over = math.MaxInt64 // unknown: nothing to look for
	}
	return r
}

// key returns the stats of key k, caching the last one looked up.
func (r *recorder) key(k string) *keyStats {
	if r.last != nil && k == r.last.Name {
		return r.last
	}
	ks := r.keys[k]
	if ks == nil {
		ks = &keyStats{Name: strings.Clone(k), Span: result.NewSpanMax(r.window, r.over)}
		r.keys[ks.Name] = ks
	}
	r.last = ks
	return ks
}

// Add records one arrival and what the limiter decided. A non-nil err is
// counted and the target's failure policy decides admission.
func (r *recorder) Add(a workload.Arrival, d algorithms.Decision, err error) {
	ks := r.key(a.Key)
	r.run.Offered++
	r.run.OfferedCost += a.Cost
	ks.Offered++
	at := int64(a.At)
	r.end = max(r.end, at)
	if r.shaper {
		r.release(at)
	}
	if err != nil {
		r.countError(err)
		d = algorithms.Decision{Allowed: r.failOpen}
	}
	if !d.Allowed {
		if d.TableFull {
			r.run.TableFull++
		}
		r.run.Rejected++
		r.run.RejectedCost += a.Cost
		r.rejected = addBin(r.rejected, at/r.bin, a.Cost)
		return
	}
	r.run.Admitted++
	r.run.AdmittedCost += a.Cost
	ks.Admitted++
	if !r.shaper {
		r.admit(ks, at, a.Cost)
		return
	}
	_ = r.delays.RecordValue(max(int64(d.Delay), result.HistLowest))
	heap.Push(&r.pending, served{at: at + int64(d.Delay), cost: a.Cost, key: ks})
}

// AddError records one arrival that got no decision, only err (an HTTP
// request that failed or got a 5xx): offered and counted as an error,
// neither admitted nor rejected, whatever the failure policy.
func (r *recorder) AddError(a workload.Arrival, err error) {
	r.offer(a)
	r.countError(err)
}

// offer counts a as offered, for its key too.
func (r *recorder) offer(a workload.Arrival) {
	r.key(a.Key).Offered++
	r.run.Offered++
	r.run.OfferedCost += a.Cost
	r.end = max(r.end, int64(a.At))
}

// release moves the services due by now into the measures: any service
// still pending is at or after its arrival, hence after now.
func (r *recorder) release(now int64) {
	for len(r.pending) > 0 && r.pending[0].at <= now {
		s := heap.Pop(&r.pending).(served)
		r.admit(s.key, s.at, s.cost)
	}
}

func (r *recorder) admit(ks *keyStats, at, cost int64) {
	r.admitted = addBin(r.admitted, at/r.bin, cost)
	ks.Span.Add(at, cost)
	r.end = max(r.end, at)
}

func addBin(bins []int64, i, cost int64) []int64 {
	if i >= int64(len(bins)) {
		bins = append(bins, make([]int64, i+1-int64(len(bins)))...)
	}
	bins[i] += cost
	return bins
}

func (r *recorder) countError(err error) {
	r.run.Errors++
	if r.run.ErrorKinds == nil {
		r.run.ErrorKinds = map[string]int64{}
		r.run.FirstError = err.Error()
	}
	r.run.ErrorKinds[errorKind(err)]++
}

// errorKind names the class of a limiter error for result.json.
func errorKind(err error) string {
	var k kindError
	switch {
	case errors.As(err, &k):
		return k.kind
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, algorithms.ErrInvalidCost):
		return "invalid_cost"
	case errors.Is(err, algorithms.ErrBackend):
		return "backend"
	}
	return "other"
}

// Disagree records how many decisions differed from the reference.
func (r *recorder) Disagree(falseAdmits, falseRejects int64) {
	r.run.FalseAdmits, r.run.FalseRejects = falseAdmits, falseRejects
	if r.run.Offered > 0 {
		r.run.DisagreementPct = 100 * float64(falseAdmits+falseRejects) / float64(r.run.Offered)
	}
}

// Finish flushes pending services and returns the run; duration is the
// length of the run in virtual time (0: up to the last instant seen).
func (r *recorder) Finish(p algorithms.Policy, duration int64) result.Run {
	r.release(1<<63 - 1)
	run := r.run
	if duration <= 0 {
		duration = r.end + 1
	}
	n := max(int64(len(r.admitted)), int64(len(r.rejected)), (duration+r.bin-1)/r.bin, 1)
	run.Series = result.Series{BinNS: r.bin, Admitted: addBin(r.admitted, n-1, 0), Rejected: addBin(r.rejected, n-1, 0)}
	keys := make([]*result.KeyTally, 0, len(r.keys))
	for _, k := range r.keys {
		keys = append(keys, k)
	}
	run.SetKeys(keys)
	if p.Limit > 0 { // else no limit is known: no ratio
		run.BurstRatio = float64(run.MaxAdmittedInWindow) / float64(p.Limit)
		run.TheoryRatio = float64(run.TheoryMaxInWindow) / float64(p.Limit)
	}
	run.ThroughputPerS = float64(run.AdmittedCost) / (float64(duration) / 1e9)
	if r.delays != nil && r.delays.TotalCount() > 0 {
		run.Latency = result.PercentilesOf(r.delays)
		run.LatencyHDR = result.EncodeHistogram(r.delays)
	}
	return run
}
