package bench

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// TestOverTheorySpan: a run that admits more than its theory records the
// shortest span holding the excess, and one within its theory none.
func TestOverTheorySpan(t *testing.T) {
	p := algorithms.Policy{Limit: 5, Window: time.Second}
	for _, tc := range []struct {
		name   string
		theory int64
		want   *time.Duration
	}{
		// 10 admits 100ms apart: 6 (more than 5) take 500ms.
		{name: "above", theory: 5, want: ptr(500 * time.Millisecond)},
		// All 10 in 900ms: none more than 10 in any W.
		{name: "within", theory: 10},
		// Unknown theory: nothing looked for.
		{name: "unknown", theory: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt := call.Target{Name: "admit-all", Theory: tc.theory, New: func() (algorithms.Limiter, error) { return admitAll{}, nil }}
			cfg := Config{Policy: p, Workload: &workload.Constant{Rate: 10, Duration: time.Second, Keys: 1, Cost: 1}}
			runs, err := Simulate(context.Background(), cfg, []call.Target{tgt})
			if err != nil {
				t.Fatal(err)
			}
			got := runs[0].OverTheorySpanNS
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("span %v, want none", time.Duration(*got))
			case tc.want != nil && (got == nil || time.Duration(*got) != *tc.want):
				t.Errorf("span %v, want %v", got, *tc.want)
			case runs[0].AboveTheory(int64(p.Window)) != (tc.want != nil):
				t.Errorf("AboveTheory %v", runs[0].AboveTheory(int64(p.Window)))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// admitAll admits every request.
type admitAll struct{}

func (admitAll) Allow(time.Duration, string, int64) (algorithms.Decision, error) {
	return algorithms.Decision{Allowed: true}, nil
}
