package bench

import (
	"container/heap"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// TraceRow is one request of a run, a row of requests.csv. Times are
// since the pass's start: its wall-clock start in a live run
// (result.Run.StartUnixNS), the virtual zero in a simulation. A field not
// known is -1 (RetryAfter, Remaining, ResetAfter), 0 (Status) or "".
type TraceRow struct {
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
}

// Tracer receives the rows of a run (Config.Trace): pass after pass, each
// pass's in send order. It is called from one goroutine at a time; it may
// keep a row's strings, which are never changed.
type Tracer interface {
	Row(TraceRow)
}

// tee hands each row to every tracer in turn.
type tee []Tracer

func (t tee) Row(r TraceRow) {
	for _, x := range t {
		x.Row(r)
	}
}

// traceOrder puts a live pass's rows back in send order: they come in the
// order their decisions were handed over, and are released once every
// earlier one has come. Owned by the collector.
type traceOrder struct {
	t    Tracer
	next int64
	rows rowHeap
}

// add takes rows and releases those whose turn has come.
func (o *traceOrder) add(rows []TraceRow) {
	for _, r := range rows {
		heap.Push(&o.rows, r)
	}
	for len(o.rows) > 0 && o.rows[0].Seq == o.next {
		o.t.Row(heap.Pop(&o.rows).(TraceRow))
		o.next++
	}
}

// flush releases the rows left, in order, skipping the requests that
// never ended (given up on after an interrupt).
func (o *traceOrder) flush() {
	for len(o.rows) > 0 {
		o.t.Row(heap.Pop(&o.rows).(TraceRow))
	}
}

// rowHeap orders rows by Seq.
type rowHeap []TraceRow

func (h rowHeap) Len() int           { return len(h) }
func (h rowHeap) Less(i, j int) bool { return h[i].Seq < h[j].Seq }
func (h rowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)        { *h = append(*h, x.(TraceRow)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// decisionRow is the trace row of a limiter's decision.
func decisionRow(seq int64, algo string, intended, sent, done time.Duration, key string, d algorithms.Decision, err error) TraceRow {
	r := TraceRow{Seq: seq, Algorithm: algo, Intended: intended, Sent: sent, Done: done, Key: key,
		Outcome: Admitted, Attempts: 1, RetryAfter: -1, Remaining: d.Remaining, ResetAfter: d.ResetAfter}
	switch {
	case err != nil:
		r.Outcome, r.ErrorKind, r.Remaining, r.ResetAfter = Failed, errorKind(err), -1, -1
	case !d.Allowed:
		r.Outcome, r.RetryAfter = Rejected, d.RetryAfter
	}
	return r
}

// outcomeRow is the trace row of an executor's outcome.
func outcomeRow(f *flying, o *Outcome, algo string, sent, done time.Duration) TraceRow {
	r := TraceRow{Seq: f.seq, Algorithm: algo, Intended: f.at, Sent: sent, Done: done, Key: f.key, Source: o.Source,
		Status: o.Status, Outcome: o.Class, Attempts: o.Attempts, RetryAfter: -1, Remaining: o.Remaining, ResetAfter: o.ResetAfter}
	if o.RetryAfter >= 0 {
		r.RetryAfter = time.Duration(o.RetryAfter) * time.Second
	}
	if o.Class == Failed {
		r.ErrorKind = o.Kind
	}
	return r
}
