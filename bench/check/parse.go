package check

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/suggest"
)

// Ops are the comparison operators of a condition.
var Ops = []string{"<", "<=", ">", ">=", "=="}

// Cond is one parsed condition.
type Cond struct {
	// Expr is the condition as written, without surrounding space.
	Expr string
	// Algo is the algorithm the condition is limited to, lower-case; ""
	// for every run.
	Algo string
	// Metric is one of Metrics().
	Metric string
	// Op is one of Ops.
	Op string
	// Threshold is VALUE in the metric's unit: ns for latencies.
	Threshold float64
}

// Holds reports whether v Op Threshold.
func (c Cond) Holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Threshold
	case "<=":
		return v <= c.Threshold
	case ">":
		return v > c.Threshold
	case ">=":
		return v >= c.Threshold
	case "==":
		return v == c.Threshold
	}
	return false
}

// Parse parses a comma-separated list of conditions (see the package
// doc). Its errors are one line naming the bad condition; it returns at
// least one condition or an error.
func Parse(expr string) ([]Cond, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("empty: want conditions such as 'burst_ratio<=1.05, p99<2ms'")
	}
	var out []Cond
	for _, part := range strings.Split(expr, ",") {
		c, err := parseCond(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// parseCond parses one [ALGO.]METRIC OP VALUE.
func parseCond(s string) (Cond, error) {
	if s == "" {
		return Cond{}, errors.New("an empty condition between commas")
	}
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return Cond{}, fmt.Errorf("%q has no comparison: want METRIC OP VALUE, OP one of %s", s, strings.Join(Ops, " "))
	}
	j := i
	for j < len(s) && strings.ContainsRune("<>=!", rune(s[j])) {
		j++
	}
	op := s[i:j]
	if !contains(Ops, op) {
		return Cond{}, fmt.Errorf("%q: %q is not a comparison (want one of %s)", s, op, strings.Join(Ops, " "))
	}
	lhs, rhs := strings.TrimSpace(s[:i]), strings.TrimSpace(s[j:])
	c := Cond{Expr: s, Op: op}
	name := strings.ToLower(lhs)
	if k := strings.LastIndexByte(name, '.'); k >= 0 {
		c.Algo, name = name[:k], name[k+1:]
		if c.Algo == "" {
			return Cond{}, fmt.Errorf("%q: no algorithm before the dot", s)
		}
	}
	if name == "" {
		return Cond{}, fmt.Errorf("%q has no metric before %s", s, op)
	}
	m := lookupMetric(name)
	if m == nil {
		return Cond{}, fmt.Errorf("%q: unknown metric %q%s; metrics: %s", s, name, suggest.DidYouMean(name, Metrics()), strings.Join(Metrics(), ", "))
	}
	c.Metric = m.name
	v, err := parseValue(rhs, m.latency)
	if err != nil {
		return Cond{}, fmt.Errorf("%q: %w", s, err)
	}
	c.Threshold = v
	return c, nil
}

// parseValue parses a finite number or, for a latency, a duration in ns.
func parseValue(s string, latency bool) (float64, error) {
	if s == "" {
		return 0, errors.New("no value after the comparison")
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q is not a finite number", s)
		}
		return v, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if !latency {
			return 0, fmt.Errorf("%q is a duration; only p50, p90, p99 and p999 take one", s)
		}
		return float64(d), nil
	}
	if latency {
		return 0, fmt.Errorf("%q is not a number or a duration such as 2ms or 150us", s)
	}
	return 0, fmt.Errorf("%q is not a number", s)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
