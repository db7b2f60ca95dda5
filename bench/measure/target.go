package measure

import (
	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// For says how an engine's pass of t under p counts, in series bins of
// bin ns; exec for a pass through an Executor, whose failures are neither
// admitted nor rejected.
func For(t call.Target, p algorithms.Policy, bin int64, exec bool) Counting {
	theory := result.Run{Backend: t.Backend, Replicas: max(t.Replicas, 1), TheoryMaxInWindow: t.Theory}
	return Counting{Policy: result.PolicyOf(p), Bin: bin, Theory: t.Theory, Over: theory.TheoryFor(),
		Served: t.Shaper, HTTP: exec, FailOpen: t.FailOpen}
}

// Name puts into run what its target and its first error say, which rows
// do not carry.
func Name(run *result.Run, t call.Target, firstErr error) {
	run.Algorithm, run.Backend, run.Replicas = t.Name, t.Backend, max(t.Replicas, 1)
	if firstErr != nil {
		run.FirstError = firstErr.Error()
	}
}
