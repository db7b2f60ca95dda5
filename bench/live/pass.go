package live

import (
	"context"
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/pace"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// stopGrace is how long an interrupted pass waits for workers still inside
// Allow before it abandons them (their counts are then lost). maxQueued
// bounds the arrivals waiting for a worker (the dispatch's queue),
// whatever MaxInFlight.
const (
	stopGrace = 500 * time.Millisecond
	maxQueued = 1 << 16
)

// livePass is one target's run in real time: a scheduler (the caller's
// goroutine), the workers and a collector. The workers call the target's
// limiters, or hand the requests to an executor. The pass makes every
// stage and what they share, and is the only one to call their methods.
type livePass struct {
	cfg       Config
	target    call.Target
	lims      []algorithms.Limiter
	exec      call.Executor // nil for a target's limiters
	calibrate bool
	planned   time.Time     // the start StartAt plans for this pass; zero: none
	clk       clock         // set when the pass starts
	lag       time.Duration // how long after planned the pass began
	gauges    []gauge       // one per worker, by id
	workers   []*liveWorker
	disp      *dispatch
	coll      *liveCollector
	chunks    chan liveChunk
	free      chan []liveRec
	results   chan *workerResult
	stop      *stopSignal

	// With an executor: the policy its answers advertised, wanted until
	// the collector has one; the keys held back after a rejection; and a
	// signal from each answer, for the closed loop.
	board *policyBoard
	holds *holds
	freed chan struct{}

	// rows: the workers make a trace row per request, for the trace
	// (Config.Trace) and, with an executor, the check of its headers
	// (headers, fed by the collector).
	rows    bool
	headers call.Checker
}

// newLivePass makes a pass and its stages: the dispatch, the workers (on
// lims, or through exec) and the collector (with ref, the exact reference,
// when not nil).
func newLivePass(cfg Config, t call.Target, lims []algorithms.Limiter, exec call.Executor, ref algorithms.Limiter, calibrate bool) *livePass {
	n := cfg.Workers
	p := &livePass{
		cfg: cfg, target: t, lims: lims, exec: exec, calibrate: calibrate,
		gauges:  newGauges(n),
		disp:    newDispatch(n, min(cfg.MaxInFlight, maxQueued)),
		chunks:  make(chan liveChunk, 64*n+1024),
		free:    make(chan []liveRec, 4*n+64),
		results: make(chan *workerResult, n),
		stop:    newStopSignal(),
		board:   &policyBoard{},
		freed:   make(chan struct{}, 1),
	}
	if exec != nil && cfg.HonorRetryAfter {
		p.holds = &holds{until: map[string]time.Duration{}}
	}
	p.rows = !calibrate && (cfg.Trace != nil || exec != nil)
	spec := workerSpec{
		lims: lims, exec: exec, name: t.Name, shaper: t.Shaper, calibrate: calibrate, rows: p.rows,
		closed: cfg.Closed, lateAfter: cfg.LateAfter, window: cfg.Policy.Window > 0,
	}
	out := workerWires{
		disp: p.disp, chunks: p.chunks, free: p.free, results: p.results,
		stop: p.stop, board: p.board, holds: p.holds, freed: p.freed,
	}
	p.workers = make([]*liveWorker, n)
	for i := range p.workers {
		p.workers[i] = newLiveWorker(spec, out, i, &p.gauges[i])
	}
	in := collectorIn{
		cfg: cfg, target: t, executor: exec != nil, ref: ref,
		gauges: p.gauges, chunks: p.chunks, free: p.free, board: p.board, rows: p.rows,
	}
	if p.rows {
		if ce, ok := exec.(call.CheckedExecutor); ok {
			p.headers = ce.NewChecker()
			in.tracers = append(in.tracers, p.headers)
		}
		if cfg.Trace != nil {
			in.tracers = append(in.tracers, cfg.Trace)
		}
	}
	p.coll = newLiveCollector(in)
	return p
}

// livePassRun drives one target (or, with calibrate, the no-op) over the
// schedule: the whole workload, or its first cfg.Calibration; at, when
// not zero, is the pass's planned start.
func livePassRun(ctx context.Context, cfg Config, t call.Target, at time.Time, calibrate bool) (*result.Run, error) {
	lims, err := t.Instances()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var ref algorithms.Limiter
	if cfg.Reference != nil && !calibrate {
		if ref, err = cfg.Reference(); err != nil {
			return nil, fmt.Errorf("bench: reference: %w", err)
		}
	}
	p := newLivePass(cfg, t, lims, nil, ref, calibrate)
	p.coll.begin(cfg.Policy, "")
	if p.planned = at; !pace.SleepUntil(ctx, at) {
		return nil, ctx.Err()
	}
	run, err := p.run(ctx)
	if run != nil {
		run.LossyEvictions = keyed.LossyEvictions(lims)
	}
	return run, err
}

// run schedules the pass's workload (the whole of it, or for the
// calibration its first cfg.Calibration), then turns what the workers
// and the collector measured into a Run.
func (p *livePass) run(ctx context.Context) (*result.Run, error) {
	cfg := p.cfg
	stream, err := cfg.Open()
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	// The pass sends what is due before its end, and stops there even
	// when it has fallen behind: its wall time stays bounded.
	until := cfg.Length()
	if until <= 0 { // a whole trace read by someone who did not give its span
		until = math.MaxInt64
	}
	total := cfg.Length()
	if p.calibrate {
		until, total = cfg.Calibration, cfg.Calibration
	}
	bar := call.StartBar(cfg.Progress, p.target.Name, int64(total))
	s, results := p.drive(ctx, stream, until, bar)
	wall := p.clk.now()
	bar.Done(s.interrupted)

	span := total
	switch {
	case s.interrupted && total > 0:
		span = min(s.end, total)
	case s.interrupted:
		span = s.end
	case total <= 0: // a whole replay trace
		span = s.lastAt + 1
	}
	coll := p.coll
	run, refErr := coll.sum.Finish(int64(max(span, 1)))
	measure.Name(&run, p.target, coll.firstErr)
	run.StartUnixNS = p.clk.start.UnixNano()
	liveMeasures(&run, cfg, s, results, span, wall)
	run.Live.StartLagNS = int64(p.lag)
	if p.exec != nil && run.Live.Service != nil {
		run.TimingUncertaintyNS = run.Live.Service.P99 // the server decided between send and answer
	}
	run.Live.Reordered = coll.reordered
	if p.exec != nil {
		run.DisagreementPct = -1
		answers(&run, results, s, p.cfg, coll.source, p.headers, wall)
	}
	switch {
	case s.err != nil:
		return &run, fmt.Errorf("bench: %w", s.err)
	case refErr != nil:
		return &run, fmt.Errorf("bench: %w", refErr)
	case s.interrupted:
		return &run, ctx.Err()
	}
	return &run, nil
}

// RunExecutor runs cfg's workload through exec in real time, as Run runs
// a target's limiters: the same scheduler, workers, collector and
// measures, and Run.HTTP for what the answers said. t names the run
// (Name, Backend, Theory; New is not called). A zero Limit or Window of
// cfg.Policy is taken from the policy the answers advertise
// (Outcome.Policy), completed by cfg.Policy's other fields; if none comes
// within a second of answers, a Limit of cfg.Policy is per second, and
// without one no limit is known (Limit 0, PolicyNone). It
// returns the run, the policy it was measured against, and, when ctx is
// cancelled, what ran with ctx's error, within about a second of the
// cancel (exec.Abort ends the requests in flight).
func RunExecutor(ctx context.Context, cfg Config, t call.Target, exec call.Executor) (result.Run, algorithms.Policy, error) {
	cfg, err := cfg.resolveExec()
	if err != nil {
		return result.Run{}, algorithms.Policy{}, err
	}
	p := newLivePass(cfg, t, nil, exec, nil, false)
	if pol := cfg.Policy; pol.Limit > 0 && pol.Window > 0 {
		p.coll.begin(pol, result.PolicyFromConfig)
	} else {
		p.board.want.Store(true)
	}
	switch {
	case !cfg.StartAt.IsZero():
		p.planned = cfg.StartAt
		if step := int64(cfg.AlignStart); step > 0 {
			p.planned = time.Unix(0, (p.planned.UnixNano()+step-1)/step*step)
		}
		if !pace.SleepUntil(ctx, p.planned) {
			return result.Run{}, cfg.Policy, ctx.Err()
		}
	case cfg.AlignStart > 0 && !alignStart(ctx, cfg.AlignStart):
		return result.Run{}, cfg.Policy, ctx.Err()
	}
	run, err := p.run(ctx)
	if run == nil {
		return result.Run{}, p.coll.policy, err
	}
	return *run, p.coll.policy, err
}

// alignStart waits for the next multiple of step since the Unix epoch, so
// that a pass starts where a server's windows do; false when ctx is done
// first.
func alignStart(ctx context.Context, step time.Duration) bool {
	now := time.Now()
	return pace.SleepUntil(ctx, now.Add(step-time.Duration(now.UnixNano()%int64(step))))
}

// drive starts the workers and the collector, schedules the arrivals,
// then stops everything in order and hands the collector's state back to
// the caller's goroutine, all decisions fed.
func (p *livePass) drive(ctx context.Context, stream workload.Stream, until time.Duration, bar call.Bar) (schedule, []*workerResult) {
	stopColl, collDone := make(chan struct{}), make(chan struct{})
	p.clk = clock{start: time.Now()}
	if !p.planned.IsZero() {
		// The clock starts at the planned instant, even when that has
		// passed: arrivals then count their lateness from it. Not when
		// the whole pass is overdue: it would only be sent at once.
		if p.lag = max(p.clk.start.Sub(p.planned), 0); p.lag < until {
			p.clk.start = p.planned
		}
	}
	for _, w := range p.workers {
		go w.run(p.clk)
	}
	go p.coll.loop(p.clk, stopColl, collDone, bar)
	s := p.schedule(ctx, stream, until)
	if s.interrupted {
		p.interrupt()
	}
	p.stop.drainEnd.Store(int64(s.end + p.cfg.Drain))
	p.disp.close()
	results, reported := p.wait(ctx)
	s.interrupted = p.stop.stopping.Load() // also when interrupted during the drain
	close(stopColl)
	<-collDone
	p.coll.receive(reported)
	p.coll.emit(math.MaxInt64)
	p.coll.settle()
	return s, results
}

// interrupt makes the workers drop what is queued and stop waiting out
// shaper delays, and the executor end the requests in flight.
func (p *livePass) interrupt() {
	if p.stop.interrupt() && p.exec != nil {
		p.exec.Abort()
	}
}

// wait collects the workers' results. Once the pass is interrupted (before
// or while waiting), it gives up on workers still busy after stopGrace.
// reported[i] says whether worker i reported.
func (p *livePass) wait(ctx context.Context) ([]*workerResult, []bool) {
	results := make([]*workerResult, 0, len(p.workers))
	reported := make([]bool, len(p.workers))
	done := ctx.Done()
	var grace <-chan time.Time
	if p.stop.stopping.Load() {
		done, grace = nil, time.After(stopGrace)
	}
	for len(results) < len(p.workers) {
		select {
		case r := <-p.results:
			results = append(results, r)
			reported[r.id] = true
		case <-done:
			p.interrupt()
			done, grace = nil, time.After(stopGrace)
		case <-grace:
			close(p.stop.abandon)
			return results, reported
		}
	}
	return results, reported
}

// liveMeasures merges the workers' histograms into run and fills run.Live.
func liveMeasures(run *result.Run, cfg Config, s schedule, results []*workerResult, span, wall time.Duration) {
	lat, svc, late := result.NewHistogram(), result.NewHistogram(), result.NewHistogram()
	l := &result.LiveStats{
		Workers: cfg.Workers, MaxInFlight: cfg.MaxInFlight, LateAfterNS: int64(cfg.LateAfter),
		Dropped: s.dropped, Unsent: s.unsent, Scheduled: run.Offered + s.dropped + s.unsent + s.held, SpanNS: int64(span), WallNS: int64(wall),
	}
	var overhead, batches, flushes *hdrhistogram.Histogram
	var lastStart time.Duration
	l.Abandoned = cfg.Workers - len(results)
	for _, r := range results {
		mergeInto(lat, r.lat)
		mergeInto(svc, r.svc)
		mergeInto(late, r.late)
		if r.overhead != nil {
			if overhead == nil {
				overhead, batches, flushes = result.NewHistogram(), result.NewHistogram(), result.NewHistogram()
			}
			mergeInto(overhead, r.overhead)
			mergeInto(batches, r.batches)
			mergeInto(flushes, r.flushes)
		}
		l.Late += r.lateCount
		l.Unserved += r.unserved
		lastStart = max(lastStart, r.lastStart)
	}
	if run.Latency != nil {
		l.QueueDelay = run.Latency // a shaper's delays, from the summary
	}
	run.Latency, run.LatencyHDR = result.PercentilesOf(lat), result.EncodeHistogram(lat)
	l.Service, l.ServiceHDR = result.PercentilesOf(svc), result.EncodeHistogram(svc)
	l.Lateness, l.LatenessHDR = result.PercentilesOf(late), result.EncodeHistogram(late)
	if run.Offered > 0 {
		l.LatePct = 100 * float64(l.Late) / float64(run.Offered)
	}
	secs := max(span, 1).Seconds()
	l.OfferedRatePerS = float64(l.Scheduled) / secs
	l.AchievedRatePerS = float64(run.Offered) / max(span, lastStart, 1).Seconds()
	if overhead != nil && overhead.TotalCount() > 0 {
		// Each decision's own part, plus its share of a batch of
		// histogram records and of a chunk handed to the collector.
		var median, mean float64
		if batches.TotalCount() > 0 {
			median = float64(batches.ValueAtQuantile(50)) / measureBatch
			mean = batches.Mean() / measureBatch
		}
		if flushes.TotalCount() > 0 {
			median += float64(flushes.ValueAtQuantile(50)) / chunkSize
			mean += flushes.Mean() / chunkSize
		}
		// The calibration pass's own: Live copies it into every run.
		dist := result.PercentilesOf(overhead)
		l.HarnessOverheadNS = float64(dist.P50) + median
		l.Calibration = &result.Calibration{OverheadNS: l.HarnessOverheadNS, OverheadMeanNS: overhead.Mean() + mean, Overhead: dist}
	}
	run.Live = l
}

// mergeInto adds src to dst; both have the bounds of NewHistogram, so
// nothing is dropped.
func mergeInto(dst, src *hdrhistogram.Histogram) {
	_ = dst.Merge(src)
}
