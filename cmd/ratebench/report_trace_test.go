package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// TestReportFromTrace: report on a folder with a requests.csv and no
// result.json builds result.json from the trace, against the policy of
// -limit/-window or of fit.json's best fit, with the counts and maxima of
// the run that wrote the trace (as tracefile.Rebuild counts them, tested
// there); without a policy, with half of one, beside a result.json, or
// with a malformed row, it is bad input: one line, exit 2, the folder
// left as it was.
func TestReportFromTrace(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	code, _, stderr := cli(t, "run", "-trace", "-algos", "gcra,fixed-window,leaky-queue", "-keys", "2", "-limit", "20", "-window", "500ms",
		"-duration", "3s", "-workload", "poisson", "-seed", "4", "-no-report", "-out", src)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	orig, err := result.ReadFile(filepath.Join(src, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantPolicy := result.PolicyJSON{Limit: 20, WindowNS: 500e6, Burst: 20}
	for _, tc := range []struct {
		name       string
		args       []string
		fit        *fit.Result                   // written as fit.json when set
		withResult bool                          // keep the run's result.json
		edit       func(lines []string) []string // of requests.csv
		wantCode   int
		want       string // in stderr when the code is 2
	}{
		{name: "policy from -limit and -window", args: []string{"-limit", "20", "-window", "500ms"}},
		{name: "policy from fit.json", fit: &fit.Result{Best: fit.Fit{Algorithm: "gcra", Limit: 20, WindowNS: 500e6, Burst: 20, Scope: fit.ScopeKey}}},
		{name: "no policy", wantCode: 2, want: "no policy"},
		{name: "a fit without a policy (a shaper's)", fit: &fit.Result{Shaper: true, RatePerS: 40}, wantCode: 2, want: "no policy"},
		{name: "-limit without -window", args: []string{"-limit", "20"}, wantCode: 2, want: "-window"},
		{name: "policy flags beside a result.json", args: []string{"-limit", "20", "-window", "500ms"}, withResult: true, wantCode: 2, want: "has a result.json"},
		{name: "a malformed row", args: []string{"-limit", "20", "-window", "500ms"}, wantCode: 2, want: "requests.csv line 5: outcome",
			edit: func(lines []string) []string {
				lines[4] = strings.Replace(lines[4], "admitted", "maybe", 1)
				lines[4] = strings.Replace(lines[4], "rejected", "maybe", 1)
				return lines
			}},
		{name: "a header of another file", args: []string{"-limit", "20", "-window", "500ms"}, wantCode: 2, want: "requests.csv line 1: header",
			edit: func(lines []string) []string { return append([]string{"at_ns,key"}, lines[1:]...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trace-only")
			copyDir(t, src, dir)
			if !tc.withResult {
				must(t, os.Remove(filepath.Join(dir, "result.json")))
			}
			if tc.fit != nil {
				must(t, tc.fit.WriteFile(dir))
			}
			if tc.edit != nil {
				rewriteTrace(t, dir, tc.edit)
			}
			before := snapshot(t, dir)
			code, stdout, stderr := cli(t, append([]string{"report", dir}, tc.args...)...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.wantCode, stderr)
			}
			if tc.wantCode != 0 {
				if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
					t.Errorf("stderr %q, stdout %q: want one line with %q and nothing on stdout", stderr, stdout, tc.want)
				}
				if after := snapshot(t, dir); after != before {
					t.Errorf("bad input changed the folder:\n%s\nwas:\n%s", after, before)
				}
				return
			}
			res, err := result.ReadFile(filepath.Join(dir, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Policy != wantPolicy || res.Meta.Mode != "trace" || len(res.Meta.Warnings) == 0 {
				t.Errorf("policy %s, mode %q, warnings %+v: want %s, trace, and a word on what a trace cannot tell", res.Policy, res.Meta.Mode, res.Meta.Warnings, wantPolicy)
			}
			if got, want := labels(res.Runs), labels(orig.Runs); !slices.Equal(got, want) {
				t.Fatalf("runs %q, want %q", got, want)
			}
			for n, r := range res.Runs { // the counting itself is tracefile.Rebuild's, tested there
				if o := orig.Runs[n]; r.Admitted != o.Admitted || r.MaxAdmittedInWindow != o.MaxAdmittedInWindow {
					t.Errorf("%s: %d admitted, most in W %d; the run's %d, %d", r.Algorithm, r.Admitted, r.MaxAdmittedInWindow, o.Admitted, o.MaxAdmittedInWindow)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
				t.Error(err)
			}
			if !strings.Contains(stderr, "built from requests.csv") {
				t.Errorf("stderr %q: want a warning saying the result was built from the trace", stderr)
			}
			// The result written, report re-renders from it as from any run.
			if code, _, stderr := cli(t, "report", dir); code != 0 {
				t.Errorf("report again: exit %d: %s", code, stderr)
			}
		})
	}
	// A folder with neither file says what it lacks.
	code, _, stderr = cli(t, "report", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "has no result.json") || !strings.Contains(stderr, tracefile.Name) {
		t.Errorf("empty folder: exit %d, %q", code, stderr)
	}
}

func labels(runs []result.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Algorithm
	}
	return out
}

// TestFitThenReportFromTraceAlone: fit on a folder that holds only a
// requests.csv writes fit.json (and no page), and report then builds the
// page against the fitted policy, its fit section included.
func TestFitThenReportFromTraceAlone(t *testing.T) {
	base := t.TempDir()
	src, dir := filepath.Join(base, "src"), filepath.Join(base, "alone")
	if code, _, stderr := cli(t, "run", "-trace", "-algos", "fixed-window", "-limit", "30", "-window", "1s",
		"-duration", "6s", "-workload", "poisson", "-rate", "60", "-seed", "2", "-no-report", "-out", src); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(filepath.Join(src, tracefile.Name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tracefile.Name), trace, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "fit", dir)
	if code != 0 || !strings.Contains(stdout, "behaves like fixed-window of 30 per 1s") || !strings.Contains(stdout, "no result.json") {
		t.Fatalf("fit: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		t.Error("fit without result.json wrote a page")
	}
	if code, _, stderr := cli(t, "report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	res, err := result.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Policy.Limit != 30 || res.Policy.WindowNS != int64(time.Second) {
		t.Errorf("policy %s, want the fitted 30 per 1s", res.Policy)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "What the service behaves like") {
		t.Errorf("report.html has no fit section (%v)", err)
	}
}
