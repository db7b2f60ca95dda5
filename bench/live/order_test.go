package live

import (
	"slices"
	"testing"

	"github.com/ratebench/ratebench/bench/call"
)

type seqTracer []int64

func (s *seqTracer) Row(r call.Row) { *s = append(*s, r.Seq) }

// TestTraceOrder: rows that come out of order leave in order, each as soon
// as every earlier one came; flush releases the rest, gaps and all.
func TestTraceOrder(t *testing.T) {
	var got seqTracer
	o := traceOrder{t: &got}
	rows := func(seqs ...int64) []call.Row {
		var rs []call.Row
		for _, s := range seqs {
			rs = append(rs, call.Row{Seq: s})
		}
		return rs
	}
	steps := []struct {
		add  []int64
		want []int64 // released so far
	}{
		{add: []int64{1, 3}, want: nil},
		{add: []int64{0}, want: []int64{0, 1}},
		{add: []int64{4, 2}, want: []int64{0, 1, 2, 3, 4}},
		{add: []int64{7, 5}, want: []int64{0, 1, 2, 3, 4, 5}},
	}
	for i, s := range steps {
		o.add(rows(s.add...))
		if !slices.Equal(got, s.want) {
			t.Fatalf("step %d: released %v, want %v", i, got, s.want)
		}
	}
	o.flush() // 6 never ended
	if want := []int64{0, 1, 2, 3, 4, 5, 7}; !slices.Equal(got, want) {
		t.Errorf("after flush %v, want %v", got, want)
	}
	if len(o.rows) != 0 {
		t.Errorf("%d rows held after flush", len(o.rows))
	}
}
