package httpload

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/pace"
	"github.com/ratebench/ratebench/workload"
)

// stopGrace is how long an interrupted attack waits for its requests
// after aborting them and for its workers, before it gives up on them;
// drainPoll how often the end of a run looks for the last answers.
const (
	stopGrace = 500 * time.Millisecond
	drainPoll = 2 * time.Millisecond
)

// job is one arrival handed to a worker.
type job struct {
	at  time.Duration // intended instant, since the start
	key string
}

// pass is one attack: the scheduler (Attack's goroutine), the workers
// and the collector.
type pass struct {
	cfg    Config
	t      *target
	fast   *fastClient // nil with the net/http client
	std    *stdClient
	ep     *epollEngine    // the fast client's event loops, or nil for workers
	ctx    context.Context // cancelled to abort dials and net/http requests
	cancel context.CancelFunc
	start  time.Time

	stopping  atomic.Bool
	stopBy    time.Time    // set by stop: when to give up on what is still busy
	discarded atomic.Int64 // handed to a worker, not sent: interrupted
	wg        sync.WaitGroup

	mu        sync.Mutex // guards what follows
	bufs      []*recBuf  // every worker's or event loop's, in order
	workers   []*worker  // every worker started, in order
	idle      []*worker  // a stack: the last to go idle is reused first
	backlog   []job      // arrivals waiting for a worker, from backHead
	backHead  int
	lastSpawn time.Duration
	closing   bool

	// wantPolicy is set while the policy is still to be read from a
	// response; policy holds the first one read.
	wantPolicy atomic.Bool
	policy     atomic.Pointer[algorithms.Policy]

	holdMu sync.Mutex
	hold   map[string]time.Duration // HonorRetryAfter: key -> instant before which it is held back
}

func newPass(ctx context.Context, cfg Config, t *target) *pass {
	p := &pass{cfg: cfg, t: t}
	// Not derived from ctx: an interrupt first stops the scheduler, then
	// aborts the requests in flight (stop).
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if cfg.Client == ClientFast {
		p.fast = newFastClient(t, cfg.Timeout)
		if cfg.Engine == EngineEpoll {
			if ep, err := newEpollEngine(p); err == nil {
				p.ep = ep
			} else { // the workers dial, and count the failures
				p.cfg.Engine = EngineGoroutines
			}
		}
	} else {
		p.std = newStdClient(p.ctx, t, &cfg)
	}
	if cfg.Policy.Limit == 0 || cfg.Policy.Window == 0 {
		p.wantPolicy.Store(true)
	}
	if cfg.HonorRetryAfter {
		p.hold = map[string]time.Duration{}
	}
	return p
}

// alignStart waits for the next multiple of w since the Unix epoch, where
// the server's fixed windows start (httplimit decides at the time since
// the epoch), so that the boundary workload's edges are the server's.
func (p *pass) alignStart(ctx context.Context, w time.Duration) {
	now := time.Now().UnixNano()
	t := time.NewTimer(time.Duration(int64(w) - now%int64(w)))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// schedule is what the scheduler did.
type schedule struct {
	sent, dropped, held int64
	unsent              int64         // due before the end, not sent when the sender reached it
	lastAt              time.Duration // intended instant of the last arrival reached
	end                 time.Duration // clock when the scheduler stopped
	wall                time.Duration // clock when every worker was done
	interrupted         bool
	abandoned           int
	err                 error // the stream's
	coll                *collector
}

// drive starts the collector, schedules the arrivals, waits for the
// answers (aborting the requests in flight on an interrupt), closes the
// workers and hands back the collector with every record fed.
func (p *pass) drive(ctx context.Context, stream workload.Stream) schedule {
	coll := newCollector(p)
	stopColl, collDone := make(chan struct{}), make(chan struct{})
	p.start = time.Now()
	go coll.loop(stopColl, collDone)
	var s schedule
	if p.cfg.Closed {
		s = p.closedLoop(ctx, stream)
	} else {
		s = p.schedule(ctx, stream)
	}
	s.end = time.Since(p.start)
	if s.interrupted {
		p.stop()
	}
	if p.cfg.Closed {
		p.waitWorkers(ctx)
	} else {
		p.drain(ctx, s.sent)
	}
	s.abandoned = p.close()
	s.interrupted = s.interrupted || p.stopping.Load()
	s.wall = time.Since(p.start)
	close(stopColl)
	<-collDone
	coll.step(true)
	s.coll = coll
	return s
}

// schedule gives each arrival to a worker when the clock reaches its
// instant, and never waits for one: an arrival due while MaxInFlight
// requests are sent or waiting and not answered is dropped, one whose key
// is held back after a 429 is counted as held. It returns at the end of
// the stream or when ctx is done.
func (p *pass) schedule(ctx context.Context, stream workload.Stream) schedule {
	if p.ep != nil {
		p.ep.start(nil, time.Time{})
	}
	done := ctx.Done()
	// Sleep, not Yield: a spinning sender would take a core from the
	// server under test when both share the machine.
	pacer := pace.New(p.start, pace.Sleep)
	defer pacer.Stop()
	var s schedule
	var completed int64 // a stale sum of the workers' completions
	limit := int64(p.cfg.MaxInFlight)
	end := p.cfg.Workload.Duration // the sender stops there, even behind schedule
	if end <= 0 {
		end = math.MaxInt64
	}
	var behind int64
	now := pacer.Now()
	for {
		a, ok := stream.Next()
		if !ok {
			s.err = stream.Err()
			break
		}
		if a.At > now {
			if now, ok = pacer.Until(done, a.At); !ok {
				s.interrupted = true
				break
			}
		} else if ctx.Err() != nil {
			s.interrupted = true
			break
		} else if behind++; behind%1024 == 0 {
			if now = pacer.Now(); now >= end {
				s.lastAt = a.At
				s.unsent = 1 + countUntil(ctx, stream, end)
				break
			}
		}
		s.lastAt = a.At
		key := a.Key
		if p.hold != nil && p.held(key, now) {
			s.held++
			continue
		}
		if s.sent-completed >= limit {
			if completed = p.completed(); s.sent-completed >= limit {
				s.dropped++
				continue
			}
		}
		p.dispatch(job{at: a.At, key: key}, now)
		s.sent++
	}
	return s
}

// countUntil counts the arrivals left in stream before end, stopping
// early (with what it counted) when ctx is done.
func countUntil(ctx context.Context, stream workload.Stream, end time.Duration) int64 {
	var n int64
	for {
		a, ok := stream.Next()
		if !ok || a.At >= end {
			return n
		}
		if n++; n%(1<<14) == 0 && ctx.Err() != nil {
			return n
		}
	}
}

// closedLoop starts Connections workers that each send their next
// request as soon as the previous one is answered, with the keys of
// stream, and returns after the workload's duration or when ctx is done.
func (p *pass) closedLoop(ctx context.Context, stream workload.Stream) schedule {
	keys := &keySource{stream: stream}
	end := p.start.Add(p.cfg.Workload.Duration)
	if p.ep != nil {
		p.ep.start(keys, end)
	} else {
		p.mu.Lock()
		for range p.cfg.Connections {
			w := newWorker(p)
			p.workers = append(p.workers, w)
			p.bufs = append(p.bufs, &w.recBuf)
		}
		ws := p.workers
		p.mu.Unlock()
		for _, w := range ws {
			p.wg.Add(1)
			go w.runClosed(keys, end)
		}
	}
	var s schedule
	t := time.NewTimer(p.cfg.Workload.Duration)
	defer t.Stop()
	select {
	case <-ctx.Done():
		s.interrupted = true
	case <-t.C:
	}
	s.lastAt = time.Since(p.start)
	return s
}

// keySource hands out the keys of a stream, its instants ignored. Safe
// for concurrent use.
type keySource struct {
	mu     sync.Mutex
	stream workload.Stream
}

func (k *keySource) next() (string, bool) {
	k.mu.Lock()
	a, ok := k.stream.Next()
	k.mu.Unlock()
	return a.Key, ok
}

// fill appends up to n keys to dst, fewer at the end of the stream.
func (k *keySource) fill(dst []string, n int) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	for range n {
		a, ok := k.stream.Next()
		if !ok {
			break
		}
		dst = append(dst, a.Key)
	}
	return dst
}

// waitWorkers waits for the closed loop's workers to send their last
// request. When ctx is done meanwhile it stops the pass, and then waits at
// most stopGrace.
func (p *pass) waitWorkers(ctx context.Context) {
	finished := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return
	case <-ctx.Done():
	}
	p.stop()
	select {
	case <-finished:
	case <-time.After(p.graceLeft()):
	}
}

// snapshot returns the record buffers of the workers or event loops
// started so far.
func (p *pass) snapshot() []*recBuf {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bufs
}

// connections is how many connections the attack may have had open at
// once: its workers, or the event loops' connection slots.
func (p *pass) connections() int {
	if p.ep != nil {
		return p.ep.connections()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.workers)
}

// completed sums the workers' completions and the requests discarded.
func (p *pass) completed() int64 {
	n := p.discarded.Load()
	for _, w := range p.snapshot() {
		n += w.completed.Load()
	}
	return n
}

// stop drops the backlog, makes the workers drop what they are handed and
// aborts the requests in flight.
func (p *pass) stop() {
	if p.stopping.Swap(true) {
		return
	}
	p.cancel()
	p.mu.Lock()
	p.stopBy = time.Now().Add(stopGrace)
	p.discarded.Add(int64(len(p.backlog) - p.backHead))
	p.backlog, p.backHead = nil, 0
	ws := p.workers
	p.mu.Unlock()
	for _, w := range ws {
		w.abort()
	}
	if p.ep != nil {
		p.ep.wakeAll()
	}
}

// drain waits until the sent requests are answered (or failed). When ctx
// is done meanwhile it stops the pass, and then waits at most stopGrace.
func (p *pass) drain(ctx context.Context, sent int64) {
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	done := ctx.Done()
	var grace <-chan time.Time
	if p.stopping.Load() {
		done, grace = nil, time.After(p.graceLeft())
	}
	for p.completed() < sent {
		select {
		case <-tick.C:
		case <-done:
			p.stop()
			done, grace = nil, time.After(p.graceLeft())
		case <-grace:
			return
		}
	}
}

// graceLeft is the time left until stopBy, or stopGrace when the pass is
// not stopping.
func (p *pass) graceLeft() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopBy.IsZero() {
		return stopGrace
	}
	return max(time.Until(p.stopBy), 0)
}

// close ends the workers: idle ones are woken, busy ones end when done.
// It waits for them at most stopGrace (on an interrupt, until stopBy) and
// returns how many it gave up on.
func (p *pass) close() int {
	p.mu.Lock()
	p.closing = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		close(w.slot)
	}
	if p.ep != nil {
		p.ep.close()
	}
	finished := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return 0
	case <-time.After(p.graceLeft()):
	}
	n := 0
	for _, b := range p.snapshot() {
		if !b.finished.Load() {
			n++
		}
	}
	return n
}

// held reports whether key is held back at now after a 429.
func (p *pass) held(key string, now time.Duration) bool {
	p.holdMu.Lock()
	until, ok := p.hold[key]
	if ok && now >= until {
		delete(p.hold, key)
	}
	p.holdMu.Unlock()
	return ok && now < until
}

// holdUntil holds key back until the instant until.
func (p *pass) holdUntil(key string, until time.Duration) {
	p.holdMu.Lock()
	if until > p.hold[key] {
		p.hold[key] = until
	}
	p.holdMu.Unlock()
}
