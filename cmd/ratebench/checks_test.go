package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// TestRunCheck: -check's conditions on a boundary run of gcra and
// fixed-window (which lets 2x its limit through at the edge): each
// check's outcome on the terminal and in result.json, exit 0 when all
// pass, 1 when one fails, 2 and nothing written for a bad condition.
func TestRunCheck(t *testing.T) {
	for _, tc := range []struct {
		name, check string
		code        int
		passed      []bool // result.json's checks, in order; nil when nothing is written
		stdout      []string
		why         string
	}{
		{name: "one algorithm passes", check: "gcra.burst_ratio<=1.01", code: 0, passed: []bool{true},
			stdout: []string{"check PASS gcra.burst_ratio<=1.01: 1.00"}, why: "gcra admits at most L in any W"},
		{name: "every run, one fails", check: "burst_ratio<=1.05", code: 1, passed: []bool{true, false},
			stdout: []string{"check FAIL fixed-window.burst_ratio<=1.05: 2.00", "check PASS gcra.burst_ratio<=1.05"},
			why:    "fixed-window's boundary case is 2x; the failure is printed first"},
		{name: "rejected share", check: "GCRA.rejected_pct>=10, Fixed-Window.max_in_window>=200", code: 0, passed: []bool{true, true},
			stdout: []string{"check PASS gcra.rejected_pct>=10.00: 33.00", "check PASS fixed-window.max_in_window>=200: 200"},
			why:    "names in any case; gcra rejects 99 of the 300 offered, fixed-window admits 200 in one span W"},
		{name: "no such algorithm", check: "gcar.p99<1ms", code: 2, why: "refused before the run, with the closest name"},
		{name: "bad metric", check: "burst<=1", code: 2, why: "burst is not a metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			code, stdout, stderr := runCLI(t, dir, "run", "-algos", "gcra,fixed-window", "-workload", "boundary", "-limit", "100",
				"-duration", "3s", "-no-report", "-out", out, "-check", tc.check)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (%s); stderr %q", code, tc.code, tc.why, stderr)
			}
			if tc.passed == nil {
				if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, "-check") {
					t.Errorf("stderr %q: want one line naming -check", stderr)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a bad -check wrote %s", out)
				}
				return
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Checks) != len(tc.passed) {
				t.Fatalf("result.json checks %+v, want %d", res.Checks, len(tc.passed))
			}
			for i, c := range res.Checks {
				if c.Pass != tc.passed[i] {
					t.Errorf("check %+v: pass %v, want %v (%s)", c, c.Pass, tc.passed[i], tc.why)
				}
			}
			last := -1
			for _, want := range tc.stdout {
				i := strings.Index(stdout, want)
				if i < last {
					t.Errorf("stdout lacks %q after the lines before it:\n%s", want, stdout)
				}
				last = i
			}
			if tc.code == 1 && !strings.Contains(stderr, "1 of 2 checks failed") {
				t.Errorf("stderr %q: want the count of failed checks", stderr)
			}
		})
	}
}

// TestMergeCheck: merge evaluates -check on the merged runs, and refuses a
// condition on an algorithm none of its inputs ran, writing nothing.
func TestMergeCheck(t *testing.T) {
	base := t.TempDir()
	a := writeResult(t, filepath.Join(base, "host-a"), smallResult(5))
	b := writeResult(t, filepath.Join(base, "host-b"), smallResult(9))
	for _, tc := range []struct {
		name, check string
		code        int
	}{
		{name: "passes", check: "gcra.admitted>=24", code: 0},
		{name: "fails", check: "gcra.admitted>24", code: 1},
		{name: "unknown algorithm", check: "fixed-window.admitted>1", code: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(base, tc.name)
			code, _, stderr := cli(t, "merge", a, b, "-out", out, "-check", tc.check)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if tc.code == 2 {
				if err == nil {
					t.Error("a refused -check wrote result.json")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Checks) != 1 || res.Checks[0].Value != 24 || res.Checks[0].Pass != (tc.code == 0) {
				t.Errorf("checks %+v, want one of the merged 24 admitted", res.Checks)
			}
		})
	}
}
