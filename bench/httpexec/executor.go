package httpexec

import (
	"slices"
	"sync"
	"time"

	"github.com/ratebench/ratebench/bench/call"
)

// The error kinds of a response that is neither an admission nor a
// rejection: the server failed (5xx), or answered something else (a
// redirect, a 404).
const (
	KindHTTP5xx = "http_5xx"
	KindHTTP4xx = "http_4xx"
	KindHTTP3xx = "http_3xx"
	KindHTTP1xx = "http_1xx"
)

// DefaultRejectStatuses are the statuses a limiter rejects with unless
// told otherwise: 429 Too Many Requests.
var DefaultRejectStatuses = []int{429}

// Executor performs the requests of a live pass (live.RunExecutor)
// with a Client: each request on a goroutine of a pool that grows, as the
// load needs, up to the client's connections, so that a request never
// waits inside the client for a connection another goroutine holds. A
// response with a reject status (429 unless told otherwise) is a
// rejection, a 2xx an admission, and anything else a failure: a
// transport error, or a status counted under its class (http_5xx,
// http_4xx, ...). Safe for concurrent use.
type Executor struct {
	c      *Client
	queue  chan queued
	max    int
	reject []int

	mu      sync.Mutex
	running int // goroutines in the pool
	idle    int // of them, waiting for a call
	closed  bool
}

// queued is one request handed to the pool.
type queued struct {
	r    call.Request
	done chan<- call.Outcome
}

// NewExecutor returns an Executor of c for up to maxInFlight requests
// started and not ended at once (the engine's cap: Start never blocks
// below it), performed at most connections at a time. A response whose
// status is in reject is a rejection by the limiter; nil means
// DefaultRejectStatuses.
func NewExecutor(c *Client, connections, maxInFlight int, reject []int) *Executor {
	if reject == nil {
		reject = DefaultRejectStatuses
	}
	return &Executor{c: c, queue: make(chan queued, max(maxInFlight, 1)), max: max(connections, 1), reject: reject}
}

// NewChecker implements call.CheckedExecutor: a HeaderCheck for one
// pass's answers.
func (e *Executor) NewChecker() call.Checker { return NewHeaderCheck() }

// Start implements call.Executor.
func (e *Executor) Start(r call.Request, done chan<- call.Outcome) {
	e.mu.Lock()
	if e.idle == 0 && e.running < e.max && !e.closed {
		e.running++
		go e.serve()
	} else if e.idle > 0 {
		e.idle--
	}
	e.mu.Unlock()
	e.queue <- queued{r: r, done: done}
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
func (e *Executor) do(r call.Request) call.Outcome {
	o := call.Outcome{Seq: r.Seq, Sent: time.Now()}
	resp := e.c.Do(r.Key, r.Policy)
	o.Done = time.Now()
	o.Status, o.RetryAfter, o.Attempts, o.Err = resp.Status, resp.RetryAfter, resp.Attempts, resp.Err
	o.Remaining, o.ResetAfter, o.Source = resp.Quota.Remaining, resp.Quota.ResetAfter, resp.Source
	o.Policy = resp.Advertised
	switch s := resp.Status; {
	case resp.Kind != None:
		o.Class, o.Kind = call.Failed, resp.Kind.String()
	case slices.Contains(e.reject, s):
		o.Class = call.Rejected
	case s >= 200 && s < 300:
		o.Class = call.Admitted
	default:
		o.Class, o.Kind = call.Failed, StatusKind(s)
	}
	return o
}

// StatusKind is the error kind of a status that is neither an admission
// nor a rejection.
func StatusKind(s int) string {
	switch {
	case s >= 500:
		return KindHTTP5xx
	case s >= 400:
		return KindHTTP4xx
	case s >= 300:
		return KindHTTP3xx
	}
	return KindHTTP1xx
}

// Abort implements call.Executor: the client ends the requests in flight.
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
