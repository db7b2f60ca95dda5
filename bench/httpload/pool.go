package httpload

import (
	"bufio"
	"context"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// How the pool grows: up to minWorkers at once, then at most one worker
// (one connection) per spawnEvery of the scheduler's clock, while arrivals
// find no idle worker. Arrivals that find none wait in the backlog for the
// next worker to finish.
const (
	minWorkers = 16
	spawnEvery = 100 * time.Microsecond
)

// idleFloor is the floor of a worker with no record on its way.
const idleFloor = math.MaxInt64

var aLongTimeAgo = time.Unix(1, 0)

// record is one request as the collector receives it. Instants are
// nanoseconds since the start.
type record struct {
	at, start, done int64 // intended, sent, answered (or failed)
	key             string
	status          int32 // 0 without a response
	retryAfter      int32 // seconds, noRetryAfter or badRetryAfter
	kind            errKind
}

// pending is a request handed to a worker; the worker sets sent, and
// start (the same since the pass's start), when it sends it.
type pending struct {
	job
	sent  time.Time
	start time.Duration
}

// recBuf is where one worker (or event loop) leaves its records for the
// collector.
type recBuf struct {
	_ [64]byte
	// floor is a lower bound of the instant of a record this worker is
	// about to add to buf, or idleFloor: the collector feeds no record at
	// or after it until it has taken that record.
	floor     atomic.Int64
	completed atomic.Int64
	finished  atomic.Bool
	dials     atomic.Int64 // connections opened
	_         [32]byte

	mu  sync.Mutex // guards buf, swapped by the collector
	buf []record
	n   int64
}

// take hands the records buffered so far to the collector, giving spare
// (empty) in exchange.
func (b *recBuf) take(spare []record) []record {
	b.mu.Lock()
	r := b.buf
	b.buf = spare
	b.mu.Unlock()
	return r
}

// worker sends requests one at a time: with the fast client on the one
// connection it owns (or none, after a failure), with the net/http client
// through it. When idle it waits on slot, on the pass's idle stack.
type worker struct {
	recBuf
	p    *pass
	slot chan pending // capacity 1: the scheduler never blocks on it

	connMu   sync.Mutex // guards c against abort, called by the stopper
	c        net.Conn
	br       *bufio.Reader
	req      []byte
	used     bool      // the connection carried a whole exchange
	deadline time.Time // the connection's read and write deadline
}

func newWorker(p *pass) *worker {
	w := &worker{p: p, slot: make(chan pending, 1)}
	w.floor.Store(idleFloor)
	w.buf = make([]record, 0, 64)
	return w
}

// run handles first, then every request it is given, until the pass
// closes.
func (w *worker) run(first pending) {
	defer w.p.wg.Done()
	defer w.finished.Store(true)
	defer w.closeConn()
	pend := first
	for {
		if w.p.stopping.Load() {
			w.discard()
		} else {
			w.handle(pend)
		}
		var ok bool
		if pend, ok = w.next(); !ok {
			return
		}
	}
}

// runClosed sends requests one after the other, with the keys of keys,
// until end or the pass stops: the closed loop.
func (w *worker) runClosed(keys *keySource, end time.Time) {
	defer w.p.wg.Done()
	defer w.finished.Store(true)
	defer w.closeConn()
	for !w.p.stopping.Load() && time.Now().Before(end) {
		key, ok := keys.next()
		if !ok {
			return
		}
		w.handle(pending{job: job{at: -1, key: key}})
	}
}

// discard counts a request not sent because the attack was interrupted.
func (w *worker) discard() {
	w.p.discarded.Add(1)
}

// next returns the next request: from the backlog, or handed over by
// the scheduler once the worker is idle. False when the pass closes.
func (w *worker) next() (pending, bool) {
	j, got, closing := w.p.release(w)
	switch {
	case closing:
		return pending{}, false
	case got:
		return pending{job: j}, true
	}
	pend, ok := <-w.slot
	return pend, ok
}

// handle sends pend and records its outcome. With the fast client, a
// request that fails on a reused connection before any byte of its
// response came back is sent once more on a new connection: the server
// had closed the idle connection (net/http does the same).
func (w *worker) handle(pend pending) {
	p := w.p
	pend.sent = time.Now()
	pend.start = pend.sent.Sub(p.start)
	if pend.at < 0 { // the closed loop: sent when intended
		pend.at = pend.start
	}
	if p.std != nil {
		resp, err := p.std.roundTrip(pend.key, p.wantPolicy.Load())
		w.record(pend, resp, err)
		return
	}
	for attempt := 0; ; attempt++ {
		reused := w.used
		writeErr := w.send(pend)
		var resp response
		var keepAlive, started bool
		err := writeErr
		if err == nil {
			resp, keepAlive, started, err = readResponse(w.br, p.t.noBody, p.wantPolicy.Load())
		}
		if err == nil {
			w.used = true
			if !keepAlive {
				w.closeConn()
			}
			w.record(pend, resp, nil)
			return
		}
		w.closeConn()
		retry := reused && !started && attempt == 0 && !p.stopping.Load() &&
			(writeErr != nil || classify(err) != errTimeout)
		if !retry {
			w.record(pend, response{}, err)
			return
		}
	}
}

// send dials if needed and writes pend's request. The connection's
// deadline, Timeout after the send, is renewed only when less than
// deadlineSlack of it would be left: setting it costs as much as parsing
// the response, and a request gets 0.9 to 1 times Timeout either way.
func (w *worker) send(pend pending) error {
	p := w.p
	timeout := p.cfg.Timeout
	if w.c == nil {
		if err := w.dial(pend.sent.Add(timeout)); err != nil {
			return err
		}
	}
	if w.deadline.Sub(pend.sent) < timeout-timeout/deadlineSlack {
		w.deadline = pend.sent.Add(timeout)
		if err := w.c.SetDeadline(w.deadline); err != nil {
			return err
		}
	}
	if p.stopping.Load() { // the stopper may have set its deadline before ours
		_ = w.c.SetDeadline(aLongTimeAgo)
	}
	w.req = p.fast.build(w.req[:0], pend.key)
	_, err := w.c.Write(w.req)
	return err
}

// deadlineSlack: a connection's deadline is renewed when it is less than
// Timeout - Timeout/deadlineSlack away.
const deadlineSlack = 10

func (w *worker) dial(deadline time.Time) error {
	p := w.p
	ctx, cancel := context.WithDeadline(p.ctx, deadline)
	c, err := p.fast.dialer.DialContext(ctx, "tcp", p.t.addr)
	cancel()
	if err != nil {
		return err
	}
	w.dials.Add(1)
	if w.br == nil {
		w.br = bufio.NewReaderSize(c, readBufSize)
	} else {
		w.br.Reset(c)
	}
	w.connMu.Lock()
	w.c = c
	w.connMu.Unlock()
	w.deadline = time.Time{}
	return nil
}

func (w *worker) closeConn() {
	w.connMu.Lock()
	if w.c != nil {
		_ = w.c.Close()
		w.c = nil
	}
	w.connMu.Unlock()
	w.used = false
}

// abort makes the request in flight on the worker's connection, if any,
// fail now. Safe for concurrent use.
func (w *worker) abort() {
	w.connMu.Lock()
	if w.c != nil {
		_ = w.c.SetDeadline(aLongTimeAgo)
	}
	w.connMu.Unlock()
}

// record leaves the outcome of pend for the collector.
func (w *worker) record(pend pending, resp response, err error) {
	p := w.p
	w.floor.Store(int64(pend.start)) // before the clock read: start <= done
	done := time.Since(p.start)
	r := p.outcome(pend.at, pend.start, done, pend.key, resp, err)
	w.mu.Lock()
	w.buf = append(w.buf, r)
	w.mu.Unlock()
	w.floor.Store(idleFloor)
	w.n++
	w.completed.Store(w.n)
}

// outcome makes the record of a request due at at, sent at start and
// answered with resp (or failed with err) at done, and takes what resp
// says beyond it: the server's policy, a Retry-After to honor. Safe for
// concurrent use.
func (p *pass) outcome(at, start, done time.Duration, key string, resp response, err error) record {
	r := record{at: int64(at), start: int64(start), done: int64(done), key: key,
		status: int32(resp.status), retryAfter: resp.retryAfter}
	if err != nil {
		r.kind = classify(err)
		if p.stopping.Load() {
			r.kind = errCanceled
		}
	}
	if resp.policy != "" {
		if pol, ok := ParsePolicy(resp.policy); ok && p.policy.CompareAndSwap(nil, &pol) {
			p.wantPolicy.Store(false)
		}
	}
	if p.hold != nil && resp.status == 429 && resp.retryAfter > 0 {
		p.holdUntil(key, done+time.Duration(resp.retryAfter)*time.Second)
	}
	return r
}

// dispatch gives the arrival j, due now, to a worker: the last one to go
// idle (so that few connections stay busy and hot), a new one while the
// pool may grow, or else the backlog; or to the event loops. Only the
// scheduler calls it.
func (p *pass) dispatch(j job, now time.Duration) {
	if p.ep != nil {
		p.ep.dispatch(j)
		return
	}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.slot <- pending{job: j}
		return
	}
	if len(p.workers) < p.cfg.Connections && (len(p.workers) < minWorkers || now-p.lastSpawn >= spawnEvery) {
		w := newWorker(p)
		p.workers = append(p.workers, w)
		p.bufs = append(p.bufs, &w.recBuf)
		p.lastSpawn = now
		p.mu.Unlock()
		p.wg.Add(1)
		go w.run(pending{job: j})
		return
	}
	p.backlog = append(p.backlog, j)
	p.mu.Unlock()
}

// release is called by a worker that is done with a request: it returns
// the oldest backlog arrival, or puts the worker on the idle stack;
// closing when the pass closes.
func (p *pass) release(w *worker) (j job, got, closing bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return j, false, true
	}
	if len(p.backlog) > p.backHead {
		j = p.backlog[p.backHead]
		p.backlog[p.backHead] = job{}
		switch p.backHead++; {
		case p.backHead == len(p.backlog):
			p.backlog, p.backHead = p.backlog[:0], 0
		case p.backHead >= 1024 && 2*p.backHead >= len(p.backlog): // never empty: reuse the front
			n := copy(p.backlog, p.backlog[p.backHead:])
			p.backlog, p.backHead = p.backlog[:n], 0
		}
		return j, true, false
	}
	p.idle = append(p.idle, w)
	return j, false, false
}

// fastClient holds what every connection of a fast attack shares:
// read-only once built, so safe for concurrent use.
type fastClient struct {
	t          *target
	head, tail []byte
	dialer     net.Dialer
}

func newFastClient(t *target, timeout time.Duration) *fastClient {
	head, tail := t.wire()
	return &fastClient{t: t, head: head, tail: tail, dialer: net.Dialer{Timeout: timeout}}
}

// build appends the request with the key header set to key to b.
func (fc *fastClient) build(b []byte, key string) []byte {
	b = append(b, fc.head...)
	if fc.t.keyHeader != "" {
		b = append(b, fc.t.keyHeader...)
		b = append(b, ": "...)
		b = append(b, key...)
		b = append(b, "\r\n"...)
	}
	return append(b, fc.tail...)
}
