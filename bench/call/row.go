package call

import "time"

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
