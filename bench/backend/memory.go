package backend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/bench/call"
)

// Keys sizes the per-key state of in-memory targets. It is a plain value.
type Keys struct {
	// N is how many distinct keys the workload uses: each gets its own
	// state, through keyed when N > 1.
	N int
	// Max bounds the keys one limiter holds; 0 means no bound: room for
	// all N. Above it, with Lossy, a limiter holds Max keys and forgets
	// keys with state to take new ones (counted in Run.LossyEvictions);
	// without Lossy, N above Max is an error wrapping ErrTooManyKeys.
	Max   int
	Lossy bool
}

// ErrTooManyKeys is wrapped by the error of MemoryTargets for more keys
// than Keys.Max without lossy eviction.
var ErrTooManyKeys = errors.New("backend: more keys than the key table may hold")

// options returns the keyed options for k: room for every key (twice
// the keys and a margin per shard, because keyed splits its bound evenly
// over its shards and a shard that fills up refuses keys), or, above Max
// with Lossy, Max keys that evict when full.
func (k Keys) options() keyed.Options {
	if k.Max > 0 && k.N > k.Max && k.Lossy {
		return keyed.Options{MaxKeys: k.Max, OnFull: keyed.EvictLossy}
	}
	return keyed.Options{MaxKeys: 2*k.N + 64*64}
}

// MemoryTargets builds in-memory targets for the named algorithms (all of
// algorithms/all when names is empty) under policy p, sized for keys: each
// replica limits per key with its own state. Unknown names, invalid
// policies and too many keys are errors.
func MemoryTargets(names []string, p algorithms.Policy, keys Keys, replicaCount int) ([]call.Target, error) {
	if keys.Max > 0 && keys.N > keys.Max && !keys.Lossy {
		return nil, fmt.Errorf("%w: %d keys, at most %d", ErrTooManyKeys, keys.N, keys.Max)
	}
	if len(names) == 0 {
		names = all.Names()
	}
	if _, err := p.Validate(); err != nil {
		return nil, err
	}
	targets := make([]call.Target, 0, len(names))
	for _, name := range names {
		e, err := all.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		targets = append(targets, call.Target{
			Name: e.Name, Backend: "memory", Replicas: replicaCount, Shaper: e.Shaper,
			Theory: e.Theory(p), New: perKey(e.New, p, keys),
		})
	}
	return targets, nil
}

// perKey returns a constructor of one limiter for p: newLimiter itself for
// one key, or a keyed limiter giving each key its own state.
func perKey(newLimiter func(algorithms.Policy) (algorithms.Limiter, error), p algorithms.Policy, keys Keys) func() (algorithms.Limiter, error) {
	if keys.N <= 1 {
		return func() (algorithms.Limiter, error) { return newLimiter(p) }
	}
	opts := keys.options()
	return func() (algorithms.Limiter, error) { return keyed.New(p, newLimiter, opts) }
}

// Reference returns the exact reference for disagreement: a sliding log
// per key under p, with room for keys keys (an upper bound of the
// workload's distinct keys): the reference never forgets one.
func Reference(p algorithms.Policy, keys int) func() (algorithms.Limiter, error) {
	return perKey(func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingLog(p)
	}, p, Keys{N: keys})
}
