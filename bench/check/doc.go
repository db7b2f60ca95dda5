// Package check parses and evaluates pass/fail conditions on a result,
// for CI: `ratebench run -check 'burst_ratio<=1.05, gcra.p99<2ms'` exits 1
// when one fails.
//
// An expression is a comma-separated list of conditions
//
//	[ALGO.]METRIC OP VALUE
//
// OP is one of <, <=, >, >=, ==. VALUE is a number, or for the latency
// metrics (p50, p90, p99, p999) either a number of nanoseconds or a
// duration with its unit (2ms, 150us, 1.5s). A condition without ALGO
// applies to every run of the result; with ALGO, only to the runs of that
// algorithm (case-insensitive). See Metrics for the metric names and
// their units.
package check
