package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ErrClosed is returned by decisions sent through a closed Batcher.
var ErrClosed = errors.New("redis: batcher closed")

// Batcher sends the scripts of concurrent decisions together, as one
// pipeline per round trip, instead of one round trip each: a few dispatch
// goroutines each take every decision waiting when they are free and send
// them in one write (natural batching: a lone decision goes at once, with
// no added wait). Every decision is still its own EVALSHA, atomic on its
// own; only the transport is shared. Scripts missing from the server's cache
// (NOSCRIPT, e.g. after a restart) are loaded and the decisions that got it
// sent again (they did not run). The deadline of each decision is honored
// by its caller; a pipeline itself is bounded by Timeout. The zero value is
// not usable; use NewBatcher. Safe for concurrent use.
type Batcher struct {
	client  goredis.UniversalClient
	calls   chan *call
	max     int
	timeout time.Duration
	done    chan struct{}
	mu      sync.RWMutex // held to send, so that Close sees every call sent
	closed  bool
	wg      sync.WaitGroup
}

// BatchOptions tune a Batcher. The zero value is usable.
type BatchOptions struct {
	// Dispatchers is the number of pipelines in flight at once (each on
	// its own connection); 0 means 2.
	Dispatchers int
	// MaxBatch bounds the decisions in one pipeline; 0 means 128.
	MaxBatch int
	// Timeout bounds one pipeline's round trip; 0 means 5s.
	Timeout time.Duration
}

// call is one decision waiting for its batch.
type call struct {
	script *goredis.Script
	keys   []string
	args   []any
	res    []int64
	err    error
	done   chan struct{} // buffered: the dispatcher never blocks on it
}

var calls = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// NewBatcher starts a batcher's dispatchers on client. Close stops them.
func NewBatcher(client goredis.UniversalClient, opts BatchOptions) *Batcher {
	b := &Batcher{
		client:  client,
		calls:   make(chan *call, 1024),
		max:     opts.MaxBatch,
		timeout: opts.Timeout,
		done:    make(chan struct{}),
	}
	if b.max <= 0 {
		b.max = 128
	}
	if b.timeout <= 0 {
		b.timeout = 5 * time.Second
	}
	n := opts.Dispatchers
	if n <= 0 {
		n = 2
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
			c.res, c.err = nil, ErrClosed
			c.done <- struct{}{}
		default:
			return nil
		}
	}
}

// run sends one script through the batcher and waits for its reply or for
// ctx.
func (b *Batcher) run(ctx context.Context, script *goredis.Script, keys []string, args []any) ([]int64, error) {
	c := calls.Get().(*call)
	c.script, c.keys, c.args = script, keys, args
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, ErrClosed
	}
	select {
	case b.calls <- c:
	case <-ctx.Done():
		b.mu.RUnlock()
		return nil, ctx.Err()
	}
	b.mu.RUnlock()
	select {
	case <-c.done:
		res, err := c.res, c.err
		*c = call{done: c.done}
		calls.Put(c)
		return res, err
	case <-ctx.Done():
		return nil, ctx.Err() // c is the dispatcher's now; it is dropped
	}
}

func (b *Batcher) dispatch() {
	batch := make([]*call, 0, b.max)
	cmds := make([]*goredis.Cmd, 0, b.max)
	for {
		select {
		case c := <-b.calls:
			batch = append(batch[:0], c)
		case <-b.done:
			return
		}
	more:
		for len(batch) < b.max {
			select {
			case c := <-b.calls:
				batch = append(batch, c)
			default:
				break more
			}
		}
		cmds = b.send(batch, cmds[:0])
		for i, c := range batch {
			c.res, c.err = cmds[i].Int64Slice()
			c.done <- struct{}{}
			batch[i], cmds[i] = nil, nil
		}
	}
}

// send runs the batch as one pipeline, and once more those that met
// NOSCRIPT after loading their scripts.
func (b *Batcher) send(batch []*call, cmds []*goredis.Cmd) []*goredis.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	b.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, c := range batch {
			cmds = append(cmds, c.script.EvalSha(ctx, p, c.keys, c.args...))
		}
		return nil
	})
	var again []int
	for i, cmd := range cmds {
		if goredis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return cmds
	}
	loaded := map[*goredis.Script]error{}
	for _, i := range again {
		s := batch[i].script
		if _, ok := loaded[s]; !ok {
			loaded[s] = s.Load(ctx, b.client).Err()
		}
	}
	b.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, i := range again {
			if err := loaded[batch[i].script]; err != nil {
				cmds[i].SetErr(fmt.Errorf("load script: %w", err))
				continue
			}
			cmds[i] = batch[i].script.EvalSha(ctx, p, batch[i].keys, batch[i].args...)
		}
		return nil
	})
	return cmds
}
