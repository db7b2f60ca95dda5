package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/suggest"
)

// algorithms are the names a condition's ALGO matches in run r: its
// algorithm, or for an HTTP run the server's algorithm when it was given.
func algorithms(r result.Run) []string {
	names := []string{strings.ToLower(r.Algorithm)}
	if r.HTTP != nil && r.HTTP.ServerAlgorithm != "" {
		names = append(names, strings.ToLower(r.HTTP.ServerAlgorithm))
	}
	return names
}

// Known checks that every condition's ALGO is one of names (the
// algorithms a run will measure, compared case-insensitively), before the
// run: the error names the condition, the closest names and every name.
func Known(conds []Cond, names []string) error {
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(strings.TrimSpace(n))
	}
	for _, c := range conds {
		if c.Algo != "" && !contains(lower, c.Algo) {
			return fmt.Errorf("%q: no run of algorithm %q%s; the runs: %s", c.Expr, c.Algo, suggest.DidYouMean(c.Algo, lower), strings.Join(lower, ", "))
		}
	}
	return nil
}

// Evaluate evaluates every condition on every run of res it applies to,
// in the order of conds then of the runs. A run without the measure (no
// latency recorded) fails its condition with Value 0. It returns an error,
// and no checks, when a condition names an algorithm none of res's runs
// has.
func Evaluate(conds []Cond, res *result.Result) ([]result.Check, error) {
	var names []string
	for _, r := range res.Runs {
		for _, n := range algorithms(r) {
			if !contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if err := Known(conds, names); err != nil {
		return nil, err
	}
	labels := res.Labels()
	var out []result.Check
	for _, c := range conds {
		m := lookupMetric(c.Metric)
		for i, r := range res.Runs {
			if c.Algo != "" && !contains(algorithms(r), c.Algo) {
				continue
			}
			v, ok := m.value(r)
			out = append(out, result.Check{Expr: c.Expr, Run: labels[i], Metric: c.Metric, Op: c.Op,
				Threshold: c.Threshold, Value: v, Pass: ok && c.Holds(v)})
		}
	}
	return out, nil
}

// Failed counts the checks that did not pass.
func Failed(checks []result.Check) int {
	n := 0
	for _, c := range checks {
		if !c.Pass {
			n++
		}
	}
	return n
}

// Line is how a terminal shows check c: "check PASS gcra.burst_ratio<=1.05: 1.00".
// The condition is the run's label, the metric, the operator and the
// value as the threshold reads in the metric's unit.
func Line(c result.Check) string {
	verdict := "PASS"
	if !c.Pass {
		verdict = "FAIL"
	}
	return fmt.Sprintf("check %s %s.%s%s%s: %s", verdict, c.Run, c.Metric, c.Op, Format(c.Metric, c.Threshold), Format(c.Metric, c.Value))
}

// Lines are checks' Lines, the failures first, each side in its order.
func Lines(checks []result.Check) []string {
	sorted := slices.Clone(checks)
	slices.SortStableFunc(sorted, func(a, b result.Check) int {
		switch {
		case a.Pass == b.Pass:
			return 0
		case !a.Pass:
			return -1
		}
		return 1
	})
	out := make([]string, len(sorted))
	for i, c := range sorted {
		out[i] = Line(c)
	}
	return out
}
