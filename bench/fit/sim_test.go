package fit_test

import (
	"context"
	"testing"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/workload"
)

// requests collects a simulation's trace as a fit reads it.
type requests []fit.Request

func (r *requests) Row(row call.Row) {
	*r = append(*r, fit.Request{Sent: row.Sent, Done: row.Done, Key: row.Key, Admitted: row.Outcome == call.Admitted})
}

// simTrace runs algo with p over spec in the simulator and returns its
// trace.
func simTrace(t testing.TB, algo string, p algorithms.Policy, spec workload.Source) []fit.Request {
	t.Helper()
	e, err := all.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	var reqs requests
	cfg := bench.Config{Policy: p, Workload: spec, Trace: &reqs}
	target := call.Target{Name: algo, New: func() (algorithms.Limiter, error) { return e.New(p) }}
	if _, err := bench.Simulate(context.Background(), cfg, []call.Target{target}); err != nil {
		t.Fatal(err)
	}
	return reqs
}
