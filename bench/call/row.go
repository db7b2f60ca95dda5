package call

import (
	"context"
	"errors"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// Row is one request of a run, a row of requests.csv. Times are
// since the pass's start: its wall-clock start in a live run
// (result.Run.StartUnixNS), the virtual zero in a simulation. A field not
// known is -1 (RetryAfter, Remaining, ResetAfter), 0 (Status) or "".
type Row struct {
	// Seq is the request's number in its pass, from 0: the order it was
	// sent in.
	Seq       int64
	Algorithm string
	// Intended is when the workload said to send it, Sent when it really
	// left (the limiter was called, the request was written), Done when
	// its decision or answer came (for a shaper, when it is served).
	Intended, Sent, Done time.Duration
	Key                  string
	Source               string // the local address it left from, for HTTP
	Status               int    // the HTTP status, 0 without one
	Outcome              Class  // Admitted, Rejected or Failed
	Attempts             int    // times it was sent: 1 for a limiter call, 0 or more for HTTP
	RetryAfter           time.Duration
	Remaining            int64 // the quota left, as the decision or the response said
	ResetAfter           time.Duration
	ErrorKind            string
	// Cost is what the request weighed (Arrival.Cost); 0 counts as 1.
	// requests.csv holds it only in an optional last column its writer
	// does not write.
	Cost int64
	// TableFull marks a rejection by a full key table, not by the
	// algorithm (Decision.TableFull); requests.csv does not hold it.
	TableFull bool
}

// Tracer receives the rows of a run (Config.Trace): pass after pass, each
// pass's in send order. It is called from one goroutine at a time; it may
// keep a row's strings, which are never changed.
type Tracer interface {
	Row(Row)
}

// Decided sets the fields of a limiter decision's row that a
// measure.Summary counts, in place: the simulator fills one row per
// arrival, and a copy of a whole row per arrival would cost it more than
// its counting. sent is when the limiter was called, done when the
// request is served (sent, but for a shaper's admission). A non-nil err
// makes the row a failure, of err's kind; otherwise it is what Ruled sets.
func (r *Row) Decided(sent, done time.Duration, key string, cost int64, d algorithms.Decision, err error) {
	if err == nil {
		r.Ruled(sent, done, key, cost, &d)
		return
	}
	r.Sent, r.Done, r.Key, r.Cost = sent, done, key, cost
	r.Outcome, r.ErrorKind, r.TableFull = Failed, ErrorKind(err), false
}

// Ruled is Decided for a call that returned a decision, not an error: the
// simulator's loop, where nearly every call does. Naming an error's kind
// takes a call, which keeps Decided from being inlined, and a call per
// arrival would copy the decision onto the stack; Ruled is small enough to
// inline, and reads d in place (a Decision is too big to live in
// registers, and a copy per arrival shows too). It does not keep d.
func (r *Row) Ruled(sent, done time.Duration, key string, cost int64, d *algorithms.Decision) {
	r.Sent, r.Done, r.Key, r.Cost = sent, done, key, cost
	r.Outcome, r.ErrorKind, r.TableFull = Admitted, "", false
	if !d.Allowed {
		r.Outcome, r.TableFull = Rejected, d.TableFull
	}
}

// Traced sets the rest of a limiter decision's row, which only a trace
// holds. The pass's own fields stay as they are: Algorithm, Source,
// Status and Attempts (1 for a limiter call).
func (r *Row) Traced(seq int64, intended time.Duration, d algorithms.Decision, err error) {
	r.Seq, r.Intended, r.RetryAfter, r.Remaining, r.ResetAfter = seq, intended, -1, d.Remaining, d.ResetAfter
	switch {
	case err != nil:
		r.Remaining, r.ResetAfter = -1, -1
	case !d.Allowed:
		r.RetryAfter = d.RetryAfter
	}
}

// ErrorKind names the class of a limiter's or an executor's error for
// result.json's error kinds: an error that names its own (an ErrorKind()
// string method, as an executor's failed outcome does) by that name.
func ErrorKind(err error) string {
	var k interface{ ErrorKind() string }
	switch {
	case errors.As(err, &k):
		return k.ErrorKind()
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
