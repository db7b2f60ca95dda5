// Package live is the live engine: it runs a workload on the real clock,
// open loop (or closed, as wrk does), through the limiters of a target
// (Run) or an Executor such as an HTTP client (RunExecutor), with one
// scheduler, one pool of workers and one collector per pass. The
// collector hands each decision, in instant order, to a measure.Summary;
// the workers' histograms add the latency, lateness and the harness's
// own overhead (a calibration pass of a no-op limiter).
//
// Calls run one way. Run (or RunExecutor) builds a livePass, which makes
// the dispatch, the workers, the collector and the leaves they share
// (clock, gauges, stopSignal, policyBoard, holds; shared.go), then in
// order starts the workers and the collector's loop, schedules the
// arrivals into the dispatch on its own goroutine, closes the dispatch,
// waits for the workers' results, has the collector feed what is left,
// and turns it all into a Run (liveMeasures, answers). A worker takes jobs
// from the dispatch and only sends plain values: decision chunks to the
// collector's channel, its result to the pass's, its floor and count to
// its gauge. The collector only reads chunks and gauges (and nudges an
// idle worker through its gauge's kick). No stage holds the pass or
// another stage, and the dispatch and the leaves call nothing.
package live
