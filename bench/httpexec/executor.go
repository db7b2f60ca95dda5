package httpexec

import (
	"sync"
	"time"

	"github.com/ratebench/ratebench/bench"
)

// KindHTTP5xx is the error kind of a response with a 5xx status: the
// server failed, and the limiter decided nothing that can be seen.
const KindHTTP5xx = "http_5xx"

// Executor performs the requests of a live pass (bench.LiveExecutor)
// with a Client: each request on a goroutine of a pool that grows, as the
// load needs, up to the client's connections, so that a request never
// waits inside the client for a connection another goroutine holds. A 2xx
// response is an admission, a 429 a rejection, a 5xx or a transport error
// a failure, any other status neither. Safe for concurrent use.
type Executor struct {
	c     *Client
	queue chan call
	max   int

	mu      sync.Mutex
	running int // goroutines in the pool
	idle    int // of them, waiting for a call
	closed  bool
}

// call is one request handed to the pool.
type call struct {
	r    bench.Request
	done chan<- bench.Outcome
}

// NewExecutor returns an Executor of c for up to maxInFlight requests
// started and not ended at once (the engine's cap: Start never blocks
// below it), performed at most connections at a time.
func NewExecutor(c *Client, connections, maxInFlight int) *Executor {
	return &Executor{c: c, queue: make(chan call, max(maxInFlight, 1)), max: max(connections, 1)}
}

// Start implements bench.Executor.
func (e *Executor) Start(r bench.Request, done chan<- bench.Outcome) {
	e.mu.Lock()
	if e.idle == 0 && e.running < e.max && !e.closed {
		e.running++
		go e.serve()
	} else if e.idle > 0 {
		e.idle--
	}
	e.mu.Unlock()
	e.queue <- call{r: r, done: done}
}

// serve performs calls until Close.
func (e *Executor) serve() {
	for c := range e.queue {
		c.done <- e.do(c.r)
		e.mu.Lock()
		e.idle++
		e.mu.Unlock()
	}
}

// do performs one request and says what it was.
func (e *Executor) do(r bench.Request) bench.Outcome {
	o := bench.Outcome{Seq: r.Seq, Sent: time.Now()}
	resp := e.c.Do(r.Key, r.Policy)
	o.Done = time.Now()
	o.Status, o.RetryAfter, o.Attempts, o.Err = resp.Status, resp.RetryAfter, resp.Attempts, resp.Err
	if resp.Policy != "" {
		o.Policy, _ = ParsePolicy(resp.Policy)
	}
	switch s := resp.Status; {
	case resp.Kind != None:
		o.Class, o.Kind = bench.Failed, resp.Kind.String()
	case s >= 200 && s < 300:
		o.Class = bench.Admitted
	case s == 429:
		o.Class = bench.Rejected
	case s >= 500:
		o.Class, o.Kind = bench.Failed, KindHTTP5xx
	default:
		o.Class = bench.Other
	}
	return o
}

// Abort implements bench.Executor: the client ends the requests in flight.
func (e *Executor) Abort() { e.c.Abort() }

// Close ends the pool's goroutines once their calls are done; Start must
// not be called after it.
func (e *Executor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		close(e.queue)
	}
}
