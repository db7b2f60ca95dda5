package result_test

import (
	"slices"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// TestMergeSaysLowerBound: a merge of several inputs says its most
// admitted in any W is a lower bound, once however often the inputs were
// merged; SetRecounted replaces it, with the series and the common clock's
// zero, drops the warning and marks the merge traced; traces that count
// other totals than the results are refused.
func TestMergeSaysLowerBound(t *testing.T) {
	a, b := resulttest.Fixture(), resulttest.Fixture()
	m, err := result.Merge([]result.Input{{Name: "a", Result: a}, {Name: "b", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(m.Meta.Warnings, result.WarnMaxLowerBound); n != 1 {
		t.Fatalf("warnings %+v: want the lower bound said once", m.Meta.Warnings)
	}
	again, err := result.Merge([]result.Input{{Name: "m", Result: m}, {Name: "c", Result: resulttest.Fixture()}})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(again.Meta.Warnings, result.WarnMaxLowerBound); n != 1 {
		t.Errorf("a merge of a merge says the lower bound %d times, want once", n)
	}
	for n := range m.Runs {
		if i := result.RunIndex([]result.Input{{Result: a}, {Result: b}}, n, 1); b.Runs[i].Label() != m.Runs[n].Label() {
			t.Errorf("RunIndex(%d) = %d: %s, want %s", n, i, b.Runs[i].Label(), m.Runs[n].Label())
		}
	}

	over := int64(7)
	recounted := make([]result.Recounted, len(m.Runs))
	for n, r := range m.Runs {
		c := result.Run{Offered: r.Offered, Admitted: r.Admitted, Rejected: r.Rejected, Errors: r.Errors,
			MaxAdmittedInWindow: int64(300 + n), MaxWindowEndNS: int64(n), MaxWindowSpanNS: 9,
			OverTheorySpanNS: &over, Series: result.Series{BinNS: 5, Admitted: []int64{int64(n)}, Rejected: []int64{0}},
			KeyCount: 2, Keys: []result.KeyCount{{Key: "a", Offered: 1, Admitted: 1}, {Key: "b", Offered: 1}}, JainFairness: 0.5,
			DisagreementPct: 12.5, FalseAdmits: 3}
		recounted[n] = result.Recounted{StartUnixNS: 1e18, Run: c}
	}
	if err := m.SetRecounted(recounted[1:]); err == nil {
		t.Error("SetRecounted with a run short: no error")
	}
	off := slices.Clone(recounted)
	off[0].Run.Admitted++
	if err := m.SetRecounted(off); err == nil || m.Runs[1].MaxAdmittedInWindow == 301 {
		t.Errorf("SetRecounted of traces that admit one more than the results: error %v, run 1 changed: %v", err, m.Runs[1].MaxAdmittedInWindow == 301)
	}
	if err := m.SetRecounted(recounted); err != nil {
		t.Fatal(err)
	}
	if m.Meta.Warned(result.WarnMaxLowerBound) {
		t.Error("the lower-bound warning stayed")
	}
	if m.Meta.Merge == nil || !m.Meta.Merge.Traced || m.Meta.Merge.Inputs != 2 || m.Meta.Merge.Shards != 0 {
		t.Errorf("meta merge %+v, want a traced plain sum of 2 inputs", m.Meta.Merge)
	}
	summed := slices.Clone(m.Runs)
	for n, r := range m.Runs {
		if r.MaxAdmittedInWindow != int64(300+n) || r.MaxWindowEndNS != int64(n) || r.StartUnixNS != 1e18 ||
			r.OverTheorySpanNS == nil || *r.OverTheorySpanNS != 7 || r.Series.BinNS != 5 ||
			r.BurstRatio != float64(300+n)/float64(m.Policy.Limit) || r.KeyCount != 2 || len(r.Keys) != 2 ||
			r.JainFairness != 0.5 || r.DisagreementPct == 12.5 || r.FalseAdmits == 3 {
			t.Errorf("run %d: %+v", n, r)
		}
	}
	// Shards of one schedule share one exact log: their disagreement is
	// the recounted one; independent runs keep their own, summed above.
	m.Meta.Merge.Shards = 2
	if err := m.SetRecounted(recounted); err != nil {
		t.Fatal(err)
	}
	for n, r := range m.Runs {
		if r.DisagreementPct != 12.5 || r.FalseAdmits != 3 || summed[n].DisagreementPct == 12.5 {
			t.Errorf("shards' run %d: disagreement %v%%, %d false admits; want the recounted 12.5%%, 3", n, r.DisagreementPct, r.FalseAdmits)
		}
	}
}

func count(ws []result.Warning, k result.WarningKind) int {
	n := 0
	for _, w := range ws {
		if w.Kind == k {
			n++
		}
	}
	return n
}
