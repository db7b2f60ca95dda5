package live

import (
	"container/heap"
	"time"

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
