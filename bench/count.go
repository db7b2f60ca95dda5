package bench

import (
	"context"
	"errors"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
)

// counting says how a pass of t under p is counted, in series bins of bin
// ns; exec for a pass through an Executor, whose failures are neither
// admitted nor rejected.
func counting(t call.Target, p algorithms.Policy, bin int64, exec bool) measure.Counting {
	theory := result.Run{Backend: t.Backend, Replicas: max(t.Replicas, 1), TheoryMaxInWindow: t.Theory}
	return measure.Counting{Policy: result.PolicyOf(p), Bin: bin, Theory: t.Theory, Over: theory.TheoryFor(),
		Served: t.Shaper, HTTP: exec, FailOpen: t.FailOpen}
}

// named puts into run what its target and first error say, which rows do
// not carry.
func named(run *result.Run, t call.Target, firstErr error) {
	run.Algorithm, run.Backend, run.Replicas = t.Name, t.Backend, max(t.Replicas, 1)
	if firstErr != nil {
		run.FirstError = firstErr.Error()
	}
}

// errorKind names the class of a limiter's or an executor's error for
// result.json.
func errorKind(err error) string {
	var k kindError
	switch {
	case errors.As(err, &k):
		return k.kind
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, algorithms.ErrInvalidCost):
		return "invalid_cost"
	case errors.Is(err, algorithms.ErrBackend):
		return "backend"
	}
	return "other"
}
