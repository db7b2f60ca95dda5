package call

import (
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/result"
)

// Executor performs the requests of a live pass somewhere other than in an
// in-process limiter: an HTTP client, say. The pass's workers call Start,
// which must not block: the executor later sends the Outcome of every
// request it started on the channel it was given, exactly once, from any
// goroutine, whatever happens (an error and an abort are outcomes too).
// Implementations are safe for concurrent use.
type Executor interface {
	Start(r Request, done chan<- Outcome)
	// Abort ends the requests in flight at once, for an interrupt: their
	// outcomes still come, as failures, and so do those of any request
	// started afterwards.
	Abort()
}

// Checker judges what the answers of a pass claimed about the limiter,
// from the pass's rows in send order (a Tracer): httpexec.HeaderCheck
// judges HTTP rate-limit fields. Not safe for concurrent use.
type Checker interface {
	Tracer
	// Result is what the rows so far said of the claims.
	Result() *result.HeaderStats
}

// CheckedExecutor is an Executor whose answers make claims a Checker can
// judge: the live engine judges each pass with a NewChecker of its own.
type CheckedExecutor interface {
	Executor
	NewChecker() Checker
}

// Request is one arrival handed to an Executor.
type Request struct {
	Seq  uint64 // the worker's number for it, given back in Outcome.Seq
	Key  string
	Cost int64
	// Policy asks for the policy the limiter advertises (Outcome.Policy):
	// set while the pass does not know it yet.
	Policy bool
}

// Class is what an Outcome counts as.
type Class uint8

// The classes of an Outcome.
const (
	// Admitted: the limiter let the request through (an HTTP 2xx).
	Admitted Class = iota + 1
	// Rejected: the limiter refused it (an HTTP 429).
	Rejected
	// Failed: no decision came, only an error (a transport error, a 5xx
	// or another status that is neither an admission nor a rejection):
	// counted in Run.Errors under Outcome.Kind. Every request is exactly
	// one of the three: offered = admitted + rejected + errors.
	Failed
)

// Retry-After values an Outcome may carry besides whole seconds.
const (
	NoRetryAfter  = -1 // the response had no Retry-After
	BadRetryAfter = -2 // the response had one that could not be read
)

// Outcome is how a request an Executor started ended. It is a plain value.
type Outcome struct {
	Seq uint64
	// Sent is when the request really left (after any wait for a
	// connection), Done when its answer or failure came.
	Sent, Done time.Time
	Class      Class
	// Kind names the error of a Failed outcome for Run.ErrorKinds, e.g.
	// "timeout", "connection_refused", "http_5xx"; "canceled" marks one
	// ended by Abort, which has no latency.
	Kind string
	// Status is the HTTP status, 0 without a response; RetryAfter the
	// Retry-After in whole seconds, or NoRetryAfter or BadRetryAfter.
	Status     int
	RetryAfter int32
	// Attempts is how many times the request was written to the network:
	// a client that re-sends on its own makes it more than 1.
	Attempts int
	// Policy is what the response advertised, when Request.Policy asked
	// and it said; zero otherwise. Its Window is 0 when the response gave
	// a limit alone (X-RateLimit-Limit): the config's window then serves.
	Policy algorithms.Policy
	// Remaining and ResetAfter are the quota left and the time until it
	// is full again, as the response's rate-limit fields said; -1 when
	// they did not say.
	Remaining  int64
	ResetAfter time.Duration
	// Source is the local address the request left from, "" when not
	// known.
	Source string
	Err    error
}

// KindCanceled is the Kind of an outcome ended by an interrupt.
const KindCanceled = "canceled"
