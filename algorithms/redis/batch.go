package redis

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ErrClosed is returned by decisions sent through a closed Batcher.
var ErrClosed = errors.New("redis: batcher closed")

// Batcher decides concurrent decisions together: what the callers ask
// while a batch is out goes in the next one, and a batch is one EVALSHA per
// script and Cluster slot (each deciding all of its decisions in order, see
// the scripts in lua.go), the calls of a batch sent in one pipeline (on a
// ClusterClient, to each slot's node). A decision's outcome is the one it
// would get alone in the order the batch holds it among the decisions of
// its script (the limiters of one algorithm and policy, which alone share
// state keys); the calls of different scripts go in the pipeline's order.
//
// Bounds. A batch holds at most MaxBatch decisions. A decision that finds
// nothing in flight goes at once, alone if it is alone; one that finds a
// batch out waits for company until that batch returns (the server is then
// free) or the batch is full, and, with more than one dispatcher, at most
// MaxWait.
//
// Failures. When a batch's call fails (a connection error, a timeout),
// every decision in it fails with that error, once each; decisions whose
// deadline has passed before their batch leaves are not sent (their callers
// have given up). A call that met NOSCRIPT (a restarted server) did not run:
// its script is loaded and the call sent again. Each decision's deadline is
// honored by its caller; a batch's round trip is bounded by Timeout and by
// the latest deadline of its decisions.
//
// The zero value is not usable; use NewBatcher. Safe for concurrent use.
type Batcher struct {
	client   goredis.UniversalClient
	slotted  bool // group by Cluster slot: any client but a single node's
	calls    chan *call
	max      int
	wait     time.Duration
	timeout  time.Duration
	gather   sync.Mutex    // held by the one dispatcher filling a batch
	inflight atomic.Int32  // batches out
	returned chan struct{} // a batch came back (buffered, 1)
	done     chan struct{}
	mu       sync.RWMutex // held to send, so that Close sees every call sent
	closed   bool
	wg       sync.WaitGroup
}

// BatchOptions tune a Batcher. The zero value is usable.
type BatchOptions struct {
	// Dispatchers is the number of batches in flight at once (each on its
	// own connection); 0 means 1. One batch in flight makes the largest
	// batches, and most of a batch's price (a script call, system calls on
	// both sides) is per batch, not per decision.
	Dispatchers int
	// MaxBatch bounds the decisions in one batch; 0 means 128, and more
	// than 1024 means 1024 (a script call takes every key of its batch in
	// one MGET, within Lua's stack).
	MaxBatch int
	// MaxWait bounds how long a decision waits for company while another
	// batch is out and a dispatcher is free (more than one dispatcher); 0
	// means 500µs, a negative value never waits (each batch takes what is
	// waiting when a dispatcher is free).
	MaxWait time.Duration
	// Timeout bounds one batch's round trip; 0 means 5s.
	Timeout time.Duration
}

// call is one decision waiting for its batch.
type call struct {
	l        *Limiter
	key      string // the state key, l.Key(request key)
	now      int64  // ns
	cost     int64  // clamped
	deadline time.Time
	res      [4]int64 // the reply numbers, algorithm.width of them
	err      error
	done     chan struct{} // buffered: the dispatcher never blocks on it
	timer    *time.Timer   // the caller's deadline, reused with the call
}

// calls recycles calls, with their channel and timer, between decisions:
// a decision allocates neither a context nor a timer.
var calls = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &call{done: make(chan struct{}, 1), timer: t}
}}

// NewBatcher starts a batcher's dispatchers on client (a *goredis.Client
// or a *goredis.ClusterClient: a Ring's shards are not Cluster slots, and
// it would send a call's keys to its first key's shard). Close stops them.
func NewBatcher(client goredis.UniversalClient, opts BatchOptions) *Batcher {
	_, single := client.(*goredis.Client)
	b := &Batcher{
		client:   client,
		slotted:  !single,
		calls:    make(chan *call, 1024),
		max:      opts.MaxBatch,
		wait:     opts.MaxWait,
		timeout:  opts.Timeout,
		returned: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	if b.max <= 0 {
		b.max = 128
	}
	b.max = min(b.max, 1024)
	if b.wait == 0 {
		b.wait = 500 * time.Microsecond
	}
	if b.timeout <= 0 {
		b.timeout = 5 * time.Second
	}
	n := opts.Dispatchers
	if n <= 0 {
		n = 1
	}
	for range n {
		b.wg.Go(b.dispatch)
	}
	return b
}

// Close stops the dispatchers after the batches in flight; decisions still
// queued, and those sent afterwards, fail with ErrClosed. It does not close
// the client.
func (b *Batcher) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	close(b.done)
	b.wg.Wait()
	for {
		select {
		case c := <-b.calls:
			c.res, c.err = [4]int64{}, ErrClosed
			c.done <- struct{}{}
		default:
			return nil
		}
	}
}

// run queues one decision (key is the state key, cost clamped) and waits
// for its reply, or for timeout (0: none) to pass, then failing with
// context.DeadlineExceeded.
func (b *Batcher) run(l *Limiter, key string, now, cost int64, timeout time.Duration) ([4]int64, error) {
	c := calls.Get().(*call)
	c.l, c.key, c.now, c.cost = l, key, now, cost
	var expired <-chan time.Time // nil: never
	if timeout > 0 {
		c.deadline = time.Now().Add(timeout)
		c.timer.Reset(timeout)
		expired = c.timer.C
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		c.release()
		return [4]int64{}, ErrClosed
	}
	select {
	case b.calls <- c:
	case <-expired:
		b.mu.RUnlock()
		c.release()
		return [4]int64{}, context.DeadlineExceeded
	}
	b.mu.RUnlock()
	select {
	case <-c.done:
		res, err := c.res, c.err
		c.release()
		return res, err
	case <-expired:
		return [4]int64{}, context.DeadlineExceeded // c is the dispatcher's now; it is dropped
	}
}

// release stops c's timer and returns c to the pool; only its owner, the
// caller, may, and only while no dispatcher holds it.
func (c *call) release() {
	c.timer.Stop()
	*c = call{done: c.done, timer: c.timer}
	calls.Put(c)
}

func (b *Batcher) dispatch() {
	batch := make([]*call, 0, b.max)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var ex executor
	for {
		var ok bool
		if batch, ok = b.fill(batch[:0], timer); !ok {
			return
		}
		b.inflight.Add(1)
		ex.run(b.client, b.slotted, b.timeout, batch)
		b.inflight.Add(-1)
		for i, c := range batch {
			c.done <- struct{}{}
			batch[i] = nil
		}
		select {
		case b.returned <- struct{}{}:
		default:
		}
		// Let the callers just woken queue their next decisions before
		// gathering the next batch: bigger batches, without a timed wait
		// (with nothing in flight, the next batch leaves at once).
		runtime.Gosched()
	}
}

// fill gathers the next batch: at least one decision (false when the
// batcher closes first), then what is waiting, then, while another batch is
// out, what comes until it returns, the batch is full or b.wait passes.
func (b *Batcher) fill(batch []*call, timer *time.Timer) ([]*call, bool) {
	b.gather.Lock()
	defer b.gather.Unlock()
	select {
	case c := <-b.calls:
		batch = append(batch, c)
	case <-b.done:
		return batch, false
	}
	batch = b.drain(batch)
	if len(batch) == b.max || b.wait < 0 {
		return batch, true
	}
	select {
	case <-b.returned: // stale: drop it before looking at inflight
	default:
	}
	if b.inflight.Load() == 0 {
		return batch, true
	}
	timer.Reset(b.wait)
	defer timer.Stop()
	for len(batch) < b.max {
		select {
		case c := <-b.calls:
			batch = append(batch, c)
		case <-b.returned:
			return b.drain(batch), true
		case <-timer.C:
			return batch, true
		case <-b.done:
			return batch, true
		}
	}
	return batch, true
}

// drain adds the decisions waiting, up to b.max.
func (b *Batcher) drain(batch []*call) []*call {
	for len(batch) < b.max {
		select {
		case c := <-b.calls:
			batch = append(batch, c)
		default:
			return batch
		}
	}
	return batch
}

// executor sends batches: it groups a batch's decisions by script and slot
// into one call each and keeps the buffers from one batch to the next. The
// zero value is ready; not safe for concurrent use.
type executor struct {
	groups []group
	index  map[groupKey]int
}

type groupKey struct {
	script *goredis.Script
	slot   int
}

// group is one script call: its decisions in order, their keys and
// arguments end to end.
type group struct {
	script *goredis.Script
	calls  []*call
	keys   []string
	args   []any
	cmd    *goredis.Cmd
}

// run decides batch, setting each call's res or err: those past their
// deadline are not sent, the others go as one call per group, all in one
// pipeline, and the groups that met NOSCRIPT once more after loading their
// scripts.
func (e *executor) run(client goredis.UniversalClient, slotted bool, timeout time.Duration, batch []*call) {
	now := time.Now()
	deadline := now.Add(timeout)
	latest, open := e.groupBatch(batch, slotted, now)
	if len(e.groups) == 0 {
		return
	}
	if !open && latest.Before(deadline) {
		deadline = latest
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	e.send(ctx, client, func(*group) bool { return true })
	if e.loadMissing(ctx, client) {
		e.send(ctx, client, func(g *group) bool { return isNoScript(g.cmd.Err()) })
	}
	e.deliver()
}

// groupBatch groups the decisions of batch by script and, when slotted,
// by Cluster slot, each group's in batch order, failing those whose
// deadline has passed at now. It returns the latest deadline of those
// grouped, and whether one of them has none (open).
func (e *executor) groupBatch(batch []*call, slotted bool, now time.Time) (latest time.Time, open bool) {
	e.groups = e.groups[:0]
	if e.index == nil {
		e.index = map[groupKey]int{}
	}
	clear(e.index)
	for _, c := range batch {
		if c.deadline.IsZero() {
			open = true
		} else if !now.Before(c.deadline) {
			c.err = context.DeadlineExceeded
			continue
		} else if c.deadline.After(latest) {
			latest = c.deadline
		}
		k := groupKey{script: c.l.script}
		if slotted {
			k.slot = keySlot(c.key)
		}
		g := e.groupOf(k)
		g.calls = append(g.calls, c)
		g.keys, g.args = c.l.appendRequest(g.keys, g.args, c.key, c.now, c.cost)
	}
	return latest, open
}

// groupOf returns k's group of this batch, starting it when there is none
// yet, on the buffers of an earlier batch's group where there is one.
func (e *executor) groupOf(k groupKey) *group {
	i, ok := e.index[k]
	if !ok {
		i = len(e.groups)
		e.index[k] = i
		if i < cap(e.groups) {
			e.groups = e.groups[:i+1]
			g := &e.groups[i]
			g.script, g.calls, g.keys, g.args, g.cmd = k.script, g.calls[:0], g.keys[:0], g.args[:0], nil
		} else {
			e.groups = append(e.groups, group{script: k.script})
		}
	}
	return &e.groups[i]
}

// loadMissing loads the script of every group that met NOSCRIPT, each
// script once however many slots it has, failing the groups whose script
// would not load; it reports whether any group met NOSCRIPT.
func (e *executor) loadMissing(ctx context.Context, client goredis.UniversalClient) bool {
	var loaded map[*goredis.Script]error
	for i := range e.groups {
		g := &e.groups[i]
		if !isNoScript(g.cmd.Err()) {
			continue
		}
		if loaded == nil {
			loaded = map[*goredis.Script]error{}
		}
		err, ok := loaded[g.script]
		if !ok {
			err = g.script.Load(ctx, client).Err()
			loaded[g.script] = err
		}
		if err != nil {
			g.cmd.SetErr(fmt.Errorf("load script: %w", err))
		}
	}
	return loaded != nil
}

// deliver sets each grouped call's res from its group's reply, or its err
// when the call failed or replied the wrong count of numbers, and lets go
// of the calls and replies.
func (e *executor) deliver() {
	for i := range e.groups {
		g := &e.groups[i]
		r, err := g.cmd.Int64Slice()
		w := 0
		if len(g.calls) > 0 {
			w = g.calls[0].l.algo.width // one script, one width
		}
		if err == nil && len(r) != w*len(g.calls) {
			err = fmt.Errorf("script replied %d numbers for %d decisions", len(r), len(g.calls))
		}
		for j, c := range g.calls {
			if err != nil {
				c.err = err
			} else {
				copy(c.res[:], r[w*j:w*j+w])
			}
			g.calls[j] = nil
		}
		g.cmd = nil
	}
}

// send runs the groups that pick chooses in one pipeline.
func (e *executor) send(ctx context.Context, client goredis.UniversalClient, pick func(*group) bool) {
	_, _ = client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i := range e.groups {
			if g := &e.groups[i]; pick(g) {
				g.cmd = g.script.EvalSha(ctx, p, g.keys, g.args...)
			}
		}
		return nil
	})
}

// isNoScript reports whether err says the server does not have the script.
func isNoScript(err error) bool {
	return err != nil && (errors.Is(err, goredis.ErrNoScript) || goredis.HasErrorPrefix(err, "NOSCRIPT"))
}

// keySlot is key's Redis Cluster hash slot: the CRC16 (XMODEM) of its hash
// tag (what lies between its first "{" and the next "}", when not empty),
// or of the whole key, modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc & 16383)
}
