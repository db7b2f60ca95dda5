package report

import (
	"strings"
	"testing"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench/result"
)

// TestBoundaryWhyCoversEveryAlgorithm: `ratebench boundary` explains
// every algorithm it can run.
func TestBoundaryWhyCoversEveryAlgorithm(t *testing.T) {
	for _, name := range all.Names() {
		if boundaryWhy[name] == "" {
			t.Errorf("%s has no boundary explanation", name)
		}
	}
}

func TestBoundaryExplanation(t *testing.T) {
	res := &result.Result{
		Policy: result.PolicyJSON{Limit: 100, WindowNS: 1e9, Burst: 100},
		Runs: []result.Run{
			{Algorithm: "fixed-window", TheoryMaxInWindow: 200, Replicas: 1, MaxAdmittedInWindow: 200, BurstRatio: 2, MaxWindowSpanNS: 2e7, MaxWindowEndNS: 1.01e9},
			{Algorithm: "sliding-log", TheoryMaxInWindow: 100, Replicas: 1, MaxAdmittedInWindow: 100, BurstRatio: 1, MaxWindowSpanNS: 1e9, MaxWindowEndNS: 2e9},
		},
	}
	tests := []struct {
		name string
		line int
		want []string
	}{
		{name: "heading", line: 0, want: []string{"\nThe attack: 100 requests just before a window edge and 100 just after"}},
		{name: "fixed-window", line: 1, want: []string{"- fixed-window admitted 2.00x", "\n  why: the counter restarts at each window edge"}},
		{name: "sliding-log", line: 2, want: []string{"- sliding-log admitted 1.00x", "\n  why: it counts the exact trailing W"}},
	}
	got := BoundaryExplanation(res)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(got), got)
	}
	for _, tc := range tests {
		for _, w := range tc.want {
			if !strings.Contains(got[tc.line], w) {
				t.Errorf("%s: line %q lacks %q", tc.name, got[tc.line], w)
			}
		}
	}
}
