package all_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
)

func TestEntries(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second, Burst: 50}
	seen := map[string]bool{}
	for _, e := range all.Entries() {
		if seen[e.Name] {
			t.Errorf("%s listed twice", e.Name)
		}
		seen[e.Name] = true
		if e.Describe == "" || e.TheoryText == "" {
			t.Errorf("%s: no description or theory text", e.Name)
		}
		if th := e.Theory(p); th < p.Limit || th > 2*p.Limit+p.Burst {
			t.Errorf("%s: theory %d outside [L, 2L+B]", e.Name, th)
		}
		l, err := e.New(p)
		if err != nil || l == nil {
			t.Fatalf("%s: New = %v, %v", e.Name, l, err)
		}
		if d, err := l.Allow(0, "k", 1); err != nil || !d.Allowed {
			t.Errorf("%s: first request = %+v, %v; want admitted", e.Name, d, err)
		}
		if l, err := e.New(algorithms.Policy{Window: time.Second}); l != nil || !errors.Is(err, algorithms.ErrInvalidPolicy) {
			t.Errorf("%s: New(zero limit) = %v, %v; want nil and ErrInvalidPolicy", e.Name, l, err)
		}
	}
	if _, err := all.Lookup("no-such"); err == nil {
		t.Error("Lookup(no-such) succeeded")
	}
}

func TestSlidingCounterTheory(t *testing.T) {
	e, _ := all.Lookup("sliding-counter")
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		want int64
	}{
		{"long window: 2L - 1", algorithms.Policy{Limit: 100, Window: time.Second}, 199},
		{"window of 1ns: L", algorithms.Policy{Limit: 1, Window: 1}, 1},
		{"window of 2L ns: 2L - 1", algorithms.Policy{Limit: 5, Window: 10}, 9},
	} {
		if got := e.Theory(tc.p); got != tc.want {
			t.Errorf("%s: theory %d, want %d", tc.name, got, tc.want)
		}
	}
}
