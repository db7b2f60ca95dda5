package check

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// metric is one measure of a run a condition can test.
type metric struct {
	name    string
	latency bool // ns, and a VALUE may be a duration
	count   bool // a whole number, shown without decimals
	doc     string
	// value is the run's measure; false when the run has none (a latency
	// percentile of a run that recorded no latency).
	value func(r result.Run) (float64, bool)
}

// metrics are the metric names of Parse, in the order Metrics lists them.
var metrics = []metric{
	{name: "burst_ratio", doc: "most admitted in any span W over the limit L",
		value: func(r result.Run) (float64, bool) { return r.BurstRatio, true }},
	{name: "theory_ratio", doc: "most admitted in any span W over the algorithm's theoretical worst case",
		value: func(r result.Run) (float64, bool) { return r.TheoryRatio, true }},
	{name: "admitted", count: true, doc: "requests admitted",
		value: func(r result.Run) (float64, bool) { return float64(r.Admitted), true }},
	{name: "rejected", count: true, doc: "requests rejected",
		value: func(r result.Run) (float64, bool) { return float64(r.Rejected), true }},
	{name: "rejected_pct", doc: "rejected, percent of the requests offered",
		value: func(r result.Run) (float64, bool) { return pct(r.Rejected, r.Offered), true }},
	{name: "admitted_pct", doc: "admitted, percent of the requests offered",
		value: func(r result.Run) (float64, bool) { return pct(r.Admitted, r.Offered), true }},
	{name: "disagree_pct", doc: "decisions unlike the exact sliding log's, percent",
		value: func(r result.Run) (float64, bool) { return r.DisagreementPct, true }},
	{name: "jain", doc: "Jain's fairness index over the keys, 0 to 1",
		value: func(r result.Run) (float64, bool) { return r.JainFairness, true }},
	{name: "p50", latency: true, doc: "median decision latency, ns", value: latency(func(p *result.Percentiles) int64 { return p.P50 })},
	{name: "p90", latency: true, doc: "90th percentile latency, ns", value: latency(func(p *result.Percentiles) int64 { return p.P90 })},
	{name: "p99", latency: true, doc: "99th percentile latency, ns", value: latency(func(p *result.Percentiles) int64 { return p.P99 })},
	{name: "p999", latency: true, doc: "99.9th percentile latency, ns", value: latency(func(p *result.Percentiles) int64 { return p.P999 })},
	{name: "max_in_window", count: true, doc: "most admitted in any span W",
		value: func(r result.Run) (float64, bool) { return float64(r.MaxAdmittedInWindow), true }},
	{name: "throughput", doc: "admitted per second",
		value: func(r result.Run) (float64, bool) { return r.ThroughputPerS, true }},
}

// pct is 100 * n / of, 0 when of is 0.
func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// latency reads one percentile of a run's latency, absent without one.
func latency(f func(*result.Percentiles) int64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if r.Latency == nil || r.Latency.Count == 0 {
			return 0, false
		}
		return float64(f(r.Latency)), true
	}
}

// lookupMetric returns the metric called name, or nil.
func lookupMetric(name string) *metric {
	for i := range metrics {
		if metrics[i].name == name {
			return &metrics[i]
		}
	}
	return nil
}

// Metrics returns the metric names a condition may test, in a stable
// order.
func Metrics() []string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.name
	}
	return names
}

// MetricsHelp is one line per metric, "name  what it measures (unit)",
// for a command's -h.
func MetricsHelp() []string {
	lines := make([]string, len(metrics))
	for i, m := range metrics {
		lines[i] = fmt.Sprintf("%-13s %s", m.name, m.doc)
	}
	return lines
}

// Format writes v, a value of the named metric, as the terminal shows it:
// a duration for latencies, a whole number for counts, two decimals
// otherwise.
func Format(metricName string, v float64) string {
	m := lookupMetric(metricName)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case m != nil && m.latency:
		return time.Duration(v).String()
	case m != nil && m.count:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
