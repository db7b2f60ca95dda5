package live

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// A worker hands its decisions to the collector in chunks of chunkSize, or
// sooner, when it goes idle with a chunk older than flushAge. It writes
// them into a buffer of its own, copied into a chunk when handed over: a
// chunk the collector has read or cleared is in the other core's cache,
// and a decision written straight into it took a cache miss (about 50 ns
// here). It records its measures into its histograms measureBatch at a
// time: a decision then touches one cache line for them instead of the
// three histograms'.
const (
	chunkSize    = 128
	flushAge     = 25 * time.Millisecond
	measureBatch = 64
	// idleFloor is the floor of a worker with nothing buffered and no
	// call in progress.
	idleFloor = math.MaxInt64
)

// liveRec is one decision as the collector feeds it to the summary.
type liveRec struct {
	at      int64 // the instant passed to Allow, or an executor's answer came
	key     string
	cost    int64
	delay   int64
	allowed bool
	full    bool       // Decision.TableFull
	class   call.Class // an executor's outcome; 0 for a limiter's decision
	err     error
}

// liveChunk is a run of one worker's decisions, in instant order, and,
// when the run is traced, their rows.
type liveChunk struct {
	worker int
	recs   []liveRec
	rows   []call.Row
}

// sample is what one request adds to a worker's histograms; -1 where it
// adds nothing (a shaper's request is late when decided, done when served).
type sample struct {
	lat, svc, late int64
}

// waiting is an admitted shaper request waiting out its delay.
type waiting struct {
	due, at, start time.Duration
}

// workerResult is what a worker measured, handed over when it ends.
type workerResult struct {
	id              int
	lat, svc, late  *hdrhistogram.Histogram
	overhead        *hdrhistogram.Histogram // calibration only: per decision, batches aside
	batches         *hdrhistogram.Histogram // calibration only: per full batch of measures
	flushes         *hdrhistogram.Histogram // calibration only: per full chunk handed over
	lateCount       int64
	unserved        int64
	lastStart       time.Duration
	discardedAtStop int64
	answers         answerCounts // an executor's outcomes
}

// answerCounts counts what an executor's outcomes said, for Run.HTTP.
type answerCounts struct {
	responses, sent int64
	codes           map[int]int64
	retryAfter      map[int32]int64 // whole seconds, or BadRetryAfter
}

// add counts o.
func (a *answerCounts) add(o *call.Outcome) {
	a.sent += int64(o.Attempts)
	if o.Status == 0 {
		return
	}
	a.responses++
	if a.codes == nil {
		a.codes, a.retryAfter = map[int]int64{}, map[int32]int64{}
	}
	a.codes[o.Status]++
	if o.RetryAfter != call.NoRetryAfter {
		a.retryAfter[o.RetryAfter]++
	}
}

// merge adds b to a.
func (a *answerCounts) merge(b answerCounts) {
	a.responses += b.responses
	a.sent += b.sent
	for k, n := range b.codes {
		if a.codes == nil {
			a.codes, a.retryAfter = map[int]int64{}, map[int32]int64{}
		}
		a.codes[k] += n
	}
	for k, n := range b.retryAfter {
		a.retryAfter[k] += n
	}
}

// flying is a request an executor is performing for a worker, and once
// done its decision and row, held until every earlier one is done.
type flying struct {
	seq      int64
	at, sent time.Duration // intended instant; the scheduler's clock when it sent the job
	key      string
	cost     int64
	done     bool
	rec      liveRec
	row      call.Row
}

// workerSpec is what a pass tells each of its workers: what to call and
// how to measure it. A plain value, the same for every worker of a pass,
// read only once they run.
type workerSpec struct {
	lims      []algorithms.Limiter // a limiter pass's, by replica
	exec      call.Executor        // an executor pass's; nil for limiters
	name      string               // the target's, for the rows
	shaper    bool                 // admitted requests wait out their delay
	calibrate bool                 // time the harness's own work too
	rows      bool                 // make a trace row per request
	closed    bool                 // a closed loop: a request is intended when sent
	lateAfter time.Duration        // lateness above which an arrival is late
	// window: the config gives the policy's window, so that a limit
	// advertised without one serves.
	window bool
}

// workerWires is what a worker takes its jobs from and hands its output
// to, all made by its pass and the same for all its workers, each safe
// for concurrent use: the worker takes, sends and reads, and calls none of
// its pass's or its collector's methods.
type workerWires struct {
	disp    *dispatch            // its jobs
	chunks  chan<- liveChunk     // its decisions, to the collector
	free    <-chan []liveRec     // chunks the collector is done with
	results chan<- *workerResult // its measures, once, at its end
	stop    *stopSignal          // read only
	board   *policyBoard         // an executor pass's: the advertised policy
	holds   *holds               // keys held back after a Retry-After; nil: none
	freed   chan<- struct{}      // a poke per answer, for a closed loop
}

// liveWorker calls the limiters for the jobs it takes. Its histograms and
// buffer are its own; what others read of it is in its gauge. Not safe
// for concurrent use.
type liveWorker struct {
	spec       workerSpec
	out        workerWires
	clk        clock // set by run
	id         int
	g          *gauge       // its own, written by it alone
	inbox      chan liveJob // from the dispatch, while registered as idle
	registered bool         // in the dispatch's idle stack
	buf        []liveRec    // over local: the decisions not yet handed over
	local      [chunkSize]liveRec
	n          int64
	lastNow    time.Duration
	pending    []waiting // min-heap on due
	timer      *time.Timer
	meas       [measureBatch]sample
	nmeas      int
	rows       []call.Row // the buffered decisions' rows, when traced
	res        workerResult

	// An executor's requests in flight, oldest first, numbered from
	// headSeq; outcomes come back on outcomes. bufFloor is the sent time
	// of the job whose record started the buffer.
	outcomes chan call.Outcome
	flying   []flying
	headSeq  uint64
	bufFloor int64
	lastSent int64 // the instant of the decision handed to the buffer last
}

// newLiveWorker makes worker id of a pass, with its own gauge g; it runs
// once run is called.
func newLiveWorker(spec workerSpec, out workerWires, id int, g *gauge) *liveWorker {
	w := &liveWorker{spec: spec, out: out, id: id, g: g, inbox: make(chan liveJob, 1)}
	w.buf = w.local[:0]
	w.res = workerResult{id: id, lat: result.NewHistogram(), svc: result.NewHistogram(), late: result.NewHistogram()}
	if spec.calibrate {
		w.res.overhead, w.res.batches, w.res.flushes = result.NewHistogram(), result.NewHistogram(), result.NewHistogram()
	}
	if spec.shaper {
		w.timer = time.NewTimer(time.Hour)
		w.timer.Stop()
	}
	if spec.exec != nil {
		w.outcomes = make(chan call.Outcome, outcomesBuffer)
	}
	return w
}

// outcomesBuffer is how many outcomes an executor may hand a busy worker
// before it waits for the worker to take them.
const outcomesBuffer = 1024

// run takes jobs until the scheduler closes the channel, then waits out
// the shaper delays still pending, hands its last decisions over and
// reports; clk is the pass's clock, started.
func (w *liveWorker) run(clk clock) {
	w.clk = clk
	for {
		j, ok := w.next()
		if !ok {
			break
		}
		switch {
		case w.out.stop.stopping.Load():
			w.res.discardedAtStop++
		case w.spec.exec != nil:
			w.start(j)
		default:
			w.do(j)
		}
	}
	w.land()
	w.drain()
	w.flush()
	w.record()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.out.results <- &w.res
}

// do decides one job. The hot path: two clock reads around Allow, then
// the bookkeeping.
func (w *liveWorker) do(j liveJob) {
	spec := &w.spec
	if len(w.buf) == 0 {
		w.g.floor.Store(int64(j.sent))
	}
	start := w.clk.now()
	d, err := spec.lims[j.replica].Allow(start, j.key, j.cost)
	wait := spec.shaper && d.Delay > 0 && d.Allowed && err == nil
	var done time.Duration
	if !wait {
		done = w.clk.now()
	}
	w.buf = append(w.buf, liveRec{at: int64(start), key: j.key, cost: j.cost, delay: int64(d.Delay), allowed: d.Allowed, full: d.TableFull, err: err})
	if spec.rows {
		end := done
		if wait {
			end = start + d.Delay // served then, unless the pass ends first
		}
		w.rows = append(w.rows, call.Row{Algorithm: spec.name, Attempts: 1})
		r := &w.rows[len(w.rows)-1]
		r.Decided(start, end, j.key, j.cost, d, err)
		r.Traced(j.seq, j.at, d, err)
	}
	late := max(start-j.at, 0) // >= 0: the scheduler sends at or after the intended instant
	if late > spec.lateAfter {
		w.res.lateCount++
	}
	w.res.lastStart = start
	if wait {
		w.push(waiting{due: start + d.Delay, at: j.at, start: start})
		w.note(sample{lat: -1, svc: -1, late: int64(late)})
	} else {
		w.finish(j.at, start, done, late)
	}
	if len(w.buf) == cap(w.buf) {
		w.flush()
	}
	if spec.calibrate {
		_ = w.res.overhead.RecordValue(int64(w.clk.now() - start))
	}
}

// finish notes a request done at done; late is -1 for a shaper's request,
// whose lateness was noted when it was decided.
func (w *liveWorker) finish(at, start, done, late time.Duration) {
	w.note(sample{lat: int64(done - at), svc: int64(done - start), late: int64(late)})
	w.lastNow = done
	w.n++
	w.g.completed.Store(w.n)
}

// note keeps m for the next batch.
func (w *liveWorker) note(m sample) {
	w.meas[w.nmeas] = m
	if w.nmeas++; w.nmeas == len(w.meas) {
		w.record()
	}
}

// record adds the noted measures to the histograms (timed in the
// calibration pass, as part of the harness's overhead).
func (w *liveWorker) record() {
	var t0 time.Duration
	if w.spec.calibrate {
		t0 = w.clk.now()
	}
	for _, m := range w.meas[:w.nmeas] {
		if m.lat >= 0 {
			_ = w.res.lat.RecordValue(min(m.lat, result.HistHighest))
			_ = w.res.svc.RecordValue(min(m.svc, result.HistHighest))
		}
		if m.late >= 0 {
			_ = w.res.late.RecordValue(min(m.late, result.HistHighest))
		}
	}
	if w.spec.calibrate && w.nmeas == len(w.meas) {
		_ = w.res.batches.RecordValue(int64(w.clk.now() - t0))
	}
	w.nmeas = 0
}

// next returns the next job, serving due shaper requests meanwhile; false
// when the scheduler is done. A worker with nothing queued for it
// registers as idle with the dispatch and waits on its inbox.
func (w *liveWorker) next() (liveJob, bool) {
	for {
		if len(w.pending) > 0 {
			w.serveDue()
		}
		if !w.registered {
			j, ok, open := w.out.disp.take(w.inbox)
			if ok || !open {
				return j, ok
			}
			w.registered = true
		}
		w.idle()
		var due <-chan time.Time
		if len(w.pending) > 0 {
			w.timer.Reset(w.pending[0].due - w.lastNow)
			due = w.timer.C
		}
		select {
		case j, ok := <-w.inbox:
			if due != nil {
				w.timer.Stop()
			}
			w.registered = false
			return j, ok
		case o := <-w.outcomes: // nil, and never ready, without an executor
			w.complete(o)
		case <-w.g.kick:
			if len(w.buf) > 0 {
				w.flush()
			}
			w.setFloor()
		case <-due:
		}
	}
}

// idle is called before blocking: hand over an old buffer, and say that
// nothing is in progress when nothing is buffered.
func (w *liveWorker) idle() {
	if len(w.buf) > 0 && w.lastNow-time.Duration(w.buf[0].at) > flushAge {
		w.flush()
	}
	if len(w.buf) == 0 {
		w.setFloor()
	}
}

// setFloor sets the floor from what the worker holds: the buffer's first
// job and, with an executor, the oldest request in flight, whose answer
// comes after it was sent; idleFloor when it holds nothing.
func (w *liveWorker) setFloor() {
	f := int64(idleFloor)
	if len(w.buf) > 0 {
		f = w.bufFloor
	}
	if len(w.flying) > 0 {
		f = min(f, int64(w.flying[0].sent))
	}
	w.g.floor.Store(f)
}

// start hands job j to the executor. The oldest request in flight keeps
// the floor down until it is answered.
func (w *liveWorker) start(j liveJob) {
	w.flying = append(w.flying, flying{seq: j.seq, at: j.at, sent: j.sent, key: j.key, cost: j.cost})
	if len(w.flying) == 1 && len(w.buf) == 0 {
		w.g.floor.Store(int64(j.sent))
	}
	seq := w.headSeq + uint64(len(w.flying)) - 1
	w.spec.exec.Start(call.Request{Seq: seq, Key: j.key, Cost: j.cost, Policy: w.out.board.want.Load()}, w.outcomes)
}

// complete records the outcome of a request the executor performed, and
// its measures. Its decision counts at the instant the request was sent:
// the server decided after it, and before the answer, but the send
// instants are the ones the client controls (a schedule's spacing, a
// burst's edge). Decisions go to the buffer in send order, when every
// earlier request of the worker is done.
func (w *liveWorker) complete(o call.Outcome) {
	spec := &w.spec
	f := &w.flying[o.Seq-w.headSeq]
	f.done = true
	start, done := w.clk.at(o.Sent), w.clk.at(o.Done)
	if spec.closed { // intended when sent: latency is the service time
		f.at = start
	}
	f.rec = liveRec{at: int64(start), key: f.key, cost: f.cost, class: o.Class, allowed: o.Class == call.Admitted}
	if o.Class == call.Failed {
		f.rec.err = kindError{kind: o.Kind, err: o.Err}
	}
	if spec.rows {
		f.row = outcomeRow(f, &o, spec.name, start, done)
	}
	w.res.answers.add(&o)
	late := max(start-f.at, 0)
	if late > spec.lateAfter {
		w.res.lateCount++
	}
	w.res.lastStart = max(w.res.lastStart, start)
	if o.Kind == call.KindCanceled { // ended by the interrupt: no latency to speak of
		w.note(sample{lat: -1, svc: -1, late: int64(late)})
		w.lastNow, w.n = done, w.n+1
		w.g.completed.Store(w.n)
	} else {
		w.finish(f.at, start, done, late)
	}
	if o.Class == call.Rejected && o.RetryAfter >= 0 && w.out.holds != nil {
		w.out.holds.hold(f.key, done+time.Duration(o.RetryAfter)*time.Second)
	}
	// A limit advertised without its window (X-RateLimit-Limit) serves
	// when the config gives the window.
	if o.Policy.Limit > 0 && (o.Policy.Window > 0 || spec.window) && w.out.board.want.Load() {
		w.out.board.post(o.Policy)
	}
	for len(w.flying) > 0 && w.flying[0].done {
		w.hand(&w.flying[0])
		w.flying[0] = flying{}
		w.flying = w.flying[1:]
		w.headSeq++
	}
	if len(w.flying) == 0 {
		w.flying = w.flying[:0:0] // let the old array go
	}
	w.setFloor()
	select { // a closed loop waits for a free slot
	case w.out.freed <- struct{}{}:
	default:
	}
}

// hand moves a done request's decision and row to the buffer. Two
// requests of a worker may be written in the other order than sent, by
// two connections' goroutines: an instant is raised to the one before it,
// so that the buffer stays in instant order.
func (w *liveWorker) hand(f *flying) {
	f.rec.at = max(f.rec.at, w.lastSent)
	w.lastSent = f.rec.at
	if len(w.buf) == 0 {
		w.bufFloor = f.rec.at
	}
	w.buf = append(w.buf, f.rec)
	if w.spec.rows {
		w.rows = append(w.rows, f.row)
	}
	if len(w.buf) == cap(w.buf) {
		w.flush()
	}
}

// land waits for the answers to the requests still in flight once the
// scheduler is done: the executor bounds each by its timeout, and an
// interrupt aborts them. Nothing is in flight without an executor.
func (w *liveWorker) land() {
	for len(w.flying) > 0 {
		select {
		case o := <-w.outcomes:
			w.complete(o)
		case <-w.g.kick:
			if len(w.buf) > 0 {
				w.flush()
			}
			w.setFloor()
		case <-w.out.stop.abandon:
			return
		}
	}
}

// flush hands a copy of the buffer to the collector (timed in the
// calibration pass when the chunk is full). The floor stays until the
// next job sets it: stale, hence still a lower bound.
func (w *liveWorker) flush() {
	if len(w.buf) == 0 {
		return
	}
	var t0 time.Duration
	full := w.spec.calibrate && len(w.buf) == cap(w.buf)
	if full {
		t0 = w.clk.now()
	}
	recs := append(w.chunkBuf(), w.buf...)
	clear(w.buf) // drop the keys' references
	w.buf = w.buf[:0]
	if w.spec.exec != nil {
		w.setFloor()
	}
	rows := w.rows
	w.rows = nil
	select {
	case w.out.chunks <- liveChunk{worker: w.id, recs: recs, rows: rows}:
	case <-w.out.stop.abandon:
	}
	if full {
		_ = w.res.flushes.RecordValue(int64(w.clk.now() - t0))
	}
}

// chunkBuf returns a chunk the collector is done with, or a new one.
func (w *liveWorker) chunkBuf() []liveRec {
	select {
	case b := <-w.out.free:
		return b
	default:
		return make([]liveRec, 0, chunkSize)
	}
}

// serveDue serves the waiting requests whose delay is over.
func (w *liveWorker) serveDue() {
	now := w.clk.now()
	w.lastNow = now
	for len(w.pending) > 0 && w.pending[0].due <= now {
		x := w.pop()
		w.finish(x.at, x.start, now, -1)
	}
}

// drain waits out the pending shaper delays due before the pass's drain
// deadline; the others, and all of them after an interrupt, are recorded
// as served at their promised instant and counted as unserved.
func (w *liveWorker) drain() {
	end := time.Duration(w.out.stop.drainEnd.Load())
	for len(w.pending) > 0 && !w.out.stop.stopping.Load() {
		w.serveDue()
		if len(w.pending) == 0 || w.pending[0].due > end {
			break
		}
		w.timer.Reset(w.pending[0].due - w.lastNow)
		select {
		case <-w.timer.C:
		case <-w.out.stop.stopped:
		}
	}
	for len(w.pending) > 0 {
		x := w.pop()
		w.finish(x.at, x.start, x.due, -1)
		w.res.unserved++
	}
}

// push and pop keep pending a min-heap on due.
func (w *liveWorker) push(x waiting) {
	h := append(w.pending, x)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if h[parent].due <= h[i].due {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
	w.pending = h
}

func (w *liveWorker) pop() waiting {
	h := w.pending
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].due < h[m].due {
			m = l
		}
		if r < len(h) && h[r].due < h[m].due {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	w.pending = h
	return top
}
