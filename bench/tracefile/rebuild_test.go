package tracefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// TestRebuild: a result rebuilt from a run's trace alone, against the
// run's policy, has the counts, maxima, series, per-key shares and a
// shaper's delays of the run that wrote the trace, says what a trace
// cannot tell, and reads nothing else from the folder; a malformed trace
// is a *FormatError naming its line, an empty one ErrNoRows.
func TestRebuild(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	orig := simFolder(t, src, 4, 2, 20, 500*time.Millisecond, 3*time.Second)
	must(t, os.Remove(filepath.Join(src, "result.json")))
	pol := algorithms.Policy{Limit: 20, Window: 500 * time.Millisecond, Burst: 20}
	for _, tc := range []struct {
		name      string
		edit      func(lines []string) []string // of requests.csv
		wantErr   string                        // in the error, when one is wanted
		wantNoRow bool                          // the error wraps ErrNoRows, not a *FormatError
	}{
		{name: "the run's trace"},
		{name: "a malformed row", wantErr: "requests.csv line 5: outcome",
			edit: func(lines []string) []string {
				lines[4] = strings.Replace(lines[4], "admitted", "maybe", 1)
				lines[4] = strings.Replace(lines[4], "rejected", "maybe", 1)
				return lines
			}},
		{name: "a header of another file", wantErr: "requests.csv line 1: header",
			edit: func(lines []string) []string { return append([]string{"at_ns,key"}, lines[1:]...) }},
		{name: "no rows", wantErr: "has no rows", wantNoRow: true,
			edit: func(lines []string) []string { return lines[:1] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src, filepath.Join(t.TempDir(), "trace-only"))
			if tc.edit != nil {
				rewriteTrace(t, dir, tc.edit)
			}
			res, err := tracefile.Rebuild(dir, pol, "the test's policy", []string{"ratebench", "report", dir})
			if tc.wantErr != "" {
				kind := errors.As(err, new(*tracefile.FormatError))
				if tc.wantNoRow {
					kind = errors.Is(err, tracefile.ErrNoRows)
				}
				if res != nil || err == nil || !kind || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("result %v, err %v: want no result and an error of its kind with %q", res != nil, err, tc.wantErr)
				}
				return
			}
			must(t, err)
			if _, err := os.Stat(filepath.Join(dir, "result.json")); err == nil {
				t.Error("Rebuild wrote result.json")
			}
			wantPolicy := result.PolicyJSON{Limit: 20, WindowNS: 500e6, Burst: 20}
			if res.Policy != wantPolicy || res.Meta.Mode != "trace" || len(res.Meta.Warnings) == 0 ||
				res.Meta.Warnings[0].Kind != result.WarnTraceOnly || res.Meta.Warnings[0].PolicyFrom != "the test's policy" {
				t.Errorf("policy %s, mode %q, warnings %+v: want %s, trace, and a trace-only warning that says whose policy it is", res.Policy, res.Meta.Mode, res.Meta.Warnings, wantPolicy)
			}
			compareRuns(t, res.Runs, orig.Runs)
		})
	}
}

// compareRuns checks that the rebuilt runs measure what the original
// runs did.
func compareRuns(t *testing.T, got, orig []result.Run) {
	t.Helper()
	if !slices.EqualFunc(got, orig, func(a, b result.Run) bool { return a.Algorithm == b.Algorithm }) {
		t.Fatalf("%d runs, want the %d of the original, in its order", len(got), len(orig))
	}
	for n, r := range got {
		o := orig[n]
		if r.Offered != o.Offered || r.Admitted != o.Admitted || r.Rejected != o.Rejected || r.Errors != o.Errors ||
			r.OfferedCost != o.OfferedCost || r.AdmittedCost != o.AdmittedCost || r.RejectedCost != o.RejectedCost {
			t.Errorf("%s: counts %d/%d/%d/%d, the run's %d/%d/%d/%d", r.Algorithm, r.Offered, r.Admitted, r.Rejected, r.Errors,
				o.Offered, o.Admitted, o.Rejected, o.Errors)
		}
		if r.MaxAdmittedInWindow != o.MaxAdmittedInWindow || r.MaxWindowEndNS != o.MaxWindowEndNS || r.MaxWindowSpanNS != o.MaxWindowSpanNS ||
			r.TheoryMaxInWindow != o.TheoryMaxInWindow || (r.OverTheorySpanNS == nil) != (o.OverTheorySpanNS == nil) {
			t.Errorf("%s: most in W %d at %d over %d (theory %d), the run's %d at %d over %d (theory %d)", r.Algorithm,
				r.MaxAdmittedInWindow, r.MaxWindowEndNS, r.MaxWindowSpanNS, r.TheoryMaxInWindow,
				o.MaxAdmittedInWindow, o.MaxWindowEndNS, o.MaxWindowSpanNS, o.TheoryMaxInWindow)
		}
		if r.Series.BinNS != o.Series.BinNS || !slices.Equal(r.Series.Admitted, o.Series.Admitted) || !slices.Equal(r.Series.Rejected, o.Series.Rejected) {
			t.Errorf("%s: series %+v, the run's %+v", r.Algorithm, r.Series, o.Series)
		}
		if !slices.Equal(r.Keys, o.Keys) || r.JainFairness != o.JainFairness {
			t.Errorf("%s: keys %+v (Jain %v), the run's %+v (%v)", r.Algorithm, r.Keys, r.JainFairness, o.Keys, o.JainFairness)
		}
	}
	if q, o := got[2], orig[2]; q.Latency == nil || q.Latency.Count != o.Latency.Count || q.Latency.P99 != o.Latency.P99 {
		t.Errorf("leaky-queue latency %+v, the run's delays %+v", q.Latency, o.Latency)
	}
}
