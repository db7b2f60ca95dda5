package result_test

import (
	"slices"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// TestMergeSaysLowerBound: a merge of several inputs says its most
// admitted in any W is a lower bound, once however often the inputs were
// merged; SetExactMax replaces it, with the series and the common clock's
// zero, and drops the warning.
func TestMergeSaysLowerBound(t *testing.T) {
	a, b := resulttest.Fixture(), resulttest.Fixture()
	m, err := result.Merge([]result.Input{{Name: "a", Result: a}, {Name: "b", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(m.Meta.Warnings, result.MaxLowerBound); n != 1 {
		t.Fatalf("warnings %q: want the lower bound said once", m.Meta.Warnings)
	}
	again, err := result.Merge([]result.Input{{Name: "m", Result: m}, {Name: "c", Result: resulttest.Fixture()}})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(again.Meta.Warnings, result.MaxLowerBound); n != 1 {
		t.Errorf("a merge of a merge says the lower bound %d times, want once", n)
	}
	for n := range m.Runs {
		if i := result.RunIndex([]result.Input{{Result: a}, {Result: b}}, n, 1); b.Runs[i].Label() != m.Runs[n].Label() {
			t.Errorf("RunIndex(%d) = %d: %s, want %s", n, i, b.Runs[i].Label(), m.Runs[n].Label())
		}
	}

	over := int64(7)
	maxima := make([]result.ExactMax, len(m.Runs))
	for n := range maxima {
		maxima[n] = result.ExactMax{StartUnixNS: 1e18, MaxAdmittedInWindow: int64(300 + n), MaxWindowEndNS: int64(n), MaxWindowSpanNS: 9,
			OverTheorySpanNS: &over, Series: result.Series{BinNS: 5, Admitted: []int64{int64(n)}, Rejected: []int64{0}}}
	}
	if err := m.SetExactMax(maxima[1:]); err == nil {
		t.Error("SetExactMax with a maximum short: no error")
	}
	if err := m.SetExactMax(maxima); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(m.Meta.Warnings, result.MaxLowerBound) {
		t.Error("the lower-bound warning stayed")
	}
	for n, r := range m.Runs {
		if r.MaxAdmittedInWindow != int64(300+n) || r.MaxWindowEndNS != int64(n) || r.StartUnixNS != 1e18 ||
			r.OverTheorySpanNS == nil || *r.OverTheorySpanNS != 7 || r.Series.BinNS != 5 ||
			r.BurstRatio != float64(300+n)/float64(m.Policy.Limit) {
			t.Errorf("run %d: %+v", n, r)
		}
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, s := range xs {
		if s == x {
			n++
		}
	}
	return n
}
