package bench

import (
	"container/heap"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
)

// tee hands each row to every tracer in turn.
type tee []call.Tracer

func (t tee) Row(r call.Row) {
	for _, x := range t {
		x.Row(r)
	}
}

// traceOrder puts a live pass's rows back in send order: they come in the
// order their decisions were handed over, and are released once every
// earlier one has come. Owned by the collector.
type traceOrder struct {
	t    call.Tracer
	next int64
	rows rowHeap
}

// add takes rows and releases those whose turn has come.
func (o *traceOrder) add(rows []call.Row) {
	for _, r := range rows {
		heap.Push(&o.rows, r)
	}
	for len(o.rows) > 0 && o.rows[0].Seq == o.next {
		o.t.Row(heap.Pop(&o.rows).(call.Row))
		o.next++
	}
}

// flush releases the rows left, in order, skipping the requests that
// never ended (given up on after an interrupt).
func (o *traceOrder) flush() {
	for len(o.rows) > 0 {
		o.t.Row(heap.Pop(&o.rows).(call.Row))
	}
}

// rowHeap orders rows by Seq.
type rowHeap []call.Row

func (h rowHeap) Len() int           { return len(h) }
func (h rowHeap) Less(i, j int) bool { return h[i].Seq < h[j].Seq }
func (h rowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)        { *h = append(*h, x.(call.Row)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// decisionRow makes r the row of a limiter's decision, in place (a copy
// of a whole row per arrival would cost the simulator more than its
// counting): decided, then traced. The pass's own fields stay as they
// are: Algorithm, Source, Status and Attempts (1 for a limiter call).
func decisionRow(r *call.Row, seq int64, intended, sent, done time.Duration, key string, cost int64, d algorithms.Decision, err error) {
	decided(r, sent, done, key, cost, d, err)
	traced(r, seq, intended, d, err)
}

// decided sets the fields of a decision's row that a measure.Summary
// counts; the simulator sets no others unless it writes a trace.
func decided(r *call.Row, sent, done time.Duration, key string, cost int64, d algorithms.Decision, err error) {
	r.Sent, r.Done, r.Key, r.Cost = sent, done, key, cost
	r.Outcome, r.ErrorKind, r.TableFull = call.Admitted, "", false
	switch {
	case err != nil:
		r.Outcome, r.ErrorKind = call.Failed, errorKind(err)
	case !d.Allowed:
		r.Outcome, r.TableFull = call.Rejected, d.TableFull
	}
}

// traced sets the rest of a decision's row, which only a trace holds.
func traced(r *call.Row, seq int64, intended time.Duration, d algorithms.Decision, err error) {
	r.Seq, r.Intended, r.RetryAfter, r.Remaining, r.ResetAfter = seq, intended, -1, d.Remaining, d.ResetAfter
	switch {
	case err != nil:
		r.Remaining, r.ResetAfter = -1, -1
	case !d.Allowed:
		r.RetryAfter = d.RetryAfter
	}
}

// outcomeRow is the trace row of an executor's outcome.
func outcomeRow(f *flying, o *call.Outcome, algo string, sent, done time.Duration) call.Row {
	r := call.Row{Seq: f.seq, Algorithm: algo, Intended: f.at, Sent: sent, Done: done, Key: f.key, Source: o.Source,
		Status: o.Status, Outcome: o.Class, Attempts: o.Attempts, RetryAfter: -1, Remaining: o.Remaining, ResetAfter: o.ResetAfter}
	if o.RetryAfter >= 0 {
		r.RetryAfter = time.Duration(o.RetryAfter) * time.Second
	}
	if o.Class == call.Failed {
		r.ErrorKind = o.Kind
	}
	return r
}
