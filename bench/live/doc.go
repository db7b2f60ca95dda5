// Package live is the live engine: it runs a workload on the real clock,
// open loop (or closed, as wrk does), through the limiters of a target
// (Run) or an Executor such as an HTTP client (RunExecutor), with one
// scheduler, one pool of workers and one collector per pass. The
// collector hands each decision, in instant order, to a measure.Summary;
// the workers' histograms add the latency, lateness and the harness's
// own overhead (a calibration pass of a no-op limiter).
package live
