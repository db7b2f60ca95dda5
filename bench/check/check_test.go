package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		want       []Cond
		wantErr    string // a part of the error; "" for none
	}{
		{name: "three", expr: "burst_ratio<=1.05, rejected_pct>=20, p99<2ms", want: []Cond{
			{Expr: "burst_ratio<=1.05", Metric: "burst_ratio", Op: "<=", Threshold: 1.05},
			{Expr: "rejected_pct>=20", Metric: "rejected_pct", Op: ">=", Threshold: 20},
			{Expr: "p99<2ms", Metric: "p99", Op: "<", Threshold: float64(2 * time.Millisecond)},
		}},
		{name: "per algorithm, any case", expr: " GCRA.Burst_Ratio <= 1.01 ", want: []Cond{
			{Expr: "GCRA.Burst_Ratio <= 1.01", Algo: "gcra", Metric: "burst_ratio", Op: "<=", Threshold: 1.01},
		}},
		{name: "latency in ns", expr: "p50==1500", want: []Cond{{Expr: "p50==1500", Metric: "p50", Op: "==", Threshold: 1500}}},
		{name: "empty", expr: " ", wantErr: "empty"},
		{name: "empty between commas", expr: "p99<2ms,,admitted>1", wantErr: "empty condition"},
		{name: "no operator", expr: "burst_ratio 1.05", wantErr: "no comparison"},
		{name: "bad operator", expr: "burst_ratio=<1.05", wantErr: `"=<" is not a comparison`},
		{name: "unknown metric", expr: "burst_rato<=1", wantErr: "did you mean burst_ratio?"},
		{name: "duration for a ratio", expr: "burst_ratio<2ms", wantErr: "only p50, p90, p99 and p999 take one"},
		{name: "not a number", expr: "admitted>lots", wantErr: `"lots" is not a number`},
		{name: "infinite", expr: "admitted>Inf", wantErr: "not a finite number"},
		{name: "no value", expr: "p99<", wantErr: "no value"},
		{name: "no algorithm", expr: ".p99<1ms", wantErr: "no algorithm before the dot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.expr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error %v, want one containing %q", tc.expr, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error of more than one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.expr, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("condition %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// twoRuns is a result of gcra and fixed-window on one workload.
func twoRuns() *result.Result {
	return &result.Result{Runs: []result.Run{
		{Algorithm: "gcra", Offered: 150, Admitted: 100, Rejected: 50, BurstRatio: 1,
			Latency: &result.Percentiles{P99: 900, Count: 150}},
		{Algorithm: "fixed-window", Offered: 150, Admitted: 120, Rejected: 30, BurstRatio: 2,
			Latency: &result.Percentiles{P99: 3_000_000, Count: 150}},
	}}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		want       []bool // each check's Pass, in order
		wantErr    string
	}{
		{name: "every run", expr: "burst_ratio<=1.05", want: []bool{true, false}},
		{name: "one algorithm", expr: "gcra.burst_ratio<=1.05", want: []bool{true}},
		{name: "one algorithm, any case", expr: "Fixed-Window.rejected_pct>=20", want: []bool{true}},
		{name: "latency", expr: "p99<2ms", want: []bool{true, false}},
		{name: "counts", expr: "admitted>=100, rejected==50", want: []bool{true, true, true, false}},
		{name: "no such run", expr: "gcar.p99<1ms", wantErr: "did you mean gcra?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds, err := Parse(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			checks, err := Evaluate(conds, twoRuns())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) != len(tc.want) {
				t.Fatalf("%d checks, want %d: %+v", len(checks), len(tc.want), checks)
			}
			fails := 0
			for i, c := range checks {
				if c.Pass != tc.want[i] {
					t.Errorf("check %d %+v: pass %v, want %v", i, c, c.Pass, tc.want[i])
				}
				if !tc.want[i] {
					fails++
				}
			}
			if got := Failed(checks); got != fails {
				t.Errorf("Failed = %d, want %d", got, fails)
			}
		})
	}
}

func TestEvaluateNoLatency(t *testing.T) {
	res := twoRuns()
	res.Runs[0].Latency = nil
	conds, err := Parse("gcra.p99<1s")
	if err != nil {
		t.Fatal(err)
	}
	checks, err := Evaluate(conds, res)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].Pass {
		t.Errorf("a run without latency passed a latency check: %+v", checks)
	}
}

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		c    result.Check
		want string
	}{
		{c: result.Check{Run: "gcra", Metric: "burst_ratio", Op: "<=", Threshold: 1.05, Value: 1, Pass: true},
			want: "check PASS gcra.burst_ratio<=1.05: 1.00"},
		{c: result.Check{Run: "fixed-window", Metric: "p99", Op: "<", Threshold: 2e6, Value: 3e6},
			want: "check FAIL fixed-window.p99<2ms: 3ms"},
		{c: result.Check{Run: "gcra", Metric: "admitted", Op: ">=", Threshold: 100, Value: 100, Pass: true},
			want: "check PASS gcra.admitted>=100: 100"},
	} {
		if got := Line(tc.c); got != tc.want {
			t.Errorf("Line = %q, want %q", got, tc.want)
		}
	}
}

func ExampleParse() {
	conds, _ := Parse("gcra.burst_ratio<=1.05, p99<2ms")
	for _, c := range conds {
		fmt.Printf("%q on %q: %s %s %g\n", c.Metric, c.Algo, c.Metric, c.Op, c.Threshold)
	}
	// Output:
	// "burst_ratio" on "gcra": burst_ratio <= 1.05
	// "p99" on "": p99 < 2e+06
}

// TestLines: the failures come first, each side in its own order.
func TestLines(t *testing.T) {
	tests := []struct {
		name   string
		checks []result.Check
		want   []string // each line's prefix
	}{
		{name: "none", checks: nil, want: []string{}},
		{name: "all pass", checks: []result.Check{
			{Run: "a", Metric: "admitted", Op: ">=", Threshold: 1, Value: 2, Pass: true},
			{Run: "b", Metric: "admitted", Op: ">=", Threshold: 1, Value: 2, Pass: true},
		}, want: []string{"check PASS a.", "check PASS b."}},
		{name: "failures first", checks: []result.Check{
			{Run: "a", Metric: "admitted", Op: ">=", Threshold: 1, Value: 2, Pass: true},
			{Run: "b", Metric: "admitted", Op: ">=", Threshold: 5, Value: 2},
			{Run: "c", Metric: "admitted", Op: ">=", Threshold: 1, Value: 2, Pass: true},
			{Run: "d", Metric: "admitted", Op: ">=", Threshold: 5, Value: 2},
		}, want: []string{"check FAIL b.", "check FAIL d.", "check PASS a.", "check PASS c."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Lines(tc.checks)
			if len(got) != len(tc.want) {
				t.Fatalf("%d lines, want %d: %q", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("line %d %q, want it to start %q", i, got[i], w)
				}
			}
		})
	}
}
