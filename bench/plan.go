package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// Version is ratebench's version as written to result.json.
const Version = "0.1.0"

// MemoryTargets builds in-memory targets for the named algorithms (all of
// algorithms/all when names is empty) under policy p: each replica limits
// per key with its own state, through keyed when keys > 1, with room for
// every key. Unknown names and invalid policies are errors.
func MemoryTargets(names []string, p algorithms.Policy, keys, replicaCount int) ([]Target, error) {
	return memoryTargets(names, p, keyRoom(keys, 0, false), replicaCount)
}

// ErrTooManyKeys is wrapped by the error of BackendTargets for a workload
// with more keys than BackendOptions.MaxKeys, when lossy eviction was not
// chosen.
var ErrTooManyKeys = errors.New("bench: more keys than the key table may hold")

// keyTable is how a per-key limiter of a run is sized.
type keyTable struct {
	keys int           // distinct keys of the workload
	opts keyed.Options // the table's bound and what it does when full
}

// keyRoom sizes the per-key tables for keys distinct keys. With maxKeys 0,
// or keys within it, every key fits: twice the keys and a margin per
// shard, because keyed splits its bound evenly over its shards and a shard
// that fills up refuses keys. Above maxKeys (lossy only) the table holds
// maxKeys keys and evicts keys with state when full, counted as lossy.
func keyRoom(keys, maxKeys int, lossy bool) keyTable {
	if maxKeys > 0 && keys > maxKeys && lossy {
		return keyTable{keys: keys, opts: keyed.Options{MaxKeys: maxKeys, OnFull: keyed.EvictLossy}}
	}
	return keyTable{keys: keys, opts: keyed.Options{MaxKeys: 2*keys + 64*64}}
}

func memoryTargets(names []string, p algorithms.Policy, keys keyTable, replicaCount int) ([]Target, error) {
	if len(names) == 0 {
		names = all.Names()
	}
	if _, err := p.Validate(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	targets := make([]Target, 0, len(names))
	for _, name := range names {
		e, err := all.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		targets = append(targets, Target{
			Name: e.Name, Backend: "memory", Replicas: replicaCount, Shaper: e.Shaper,
			Theory: e.Theory(p), New: perKey(e.New, p, keys),
		})
	}
	return targets, nil
}

// PerKey returns a constructor of one limiter for p: newLimiter itself for
// one key, or a keyed limiter giving each of keys keys its own state, with
// room for all of them (none is ever forgotten or refused).
func PerKey(newLimiter func(algorithms.Policy) (algorithms.Limiter, error), p algorithms.Policy, keys int) func() (algorithms.Limiter, error) {
	return perKey(newLimiter, p, keyRoom(keys, 0, false))
}

func perKey(newLimiter func(algorithms.Policy) (algorithms.Limiter, error), p algorithms.Policy, keys keyTable) func() (algorithms.Limiter, error) {
	if keys.keys <= 1 {
		return func() (algorithms.Limiter, error) { return newLimiter(p) }
	}
	return func() (algorithms.Limiter, error) { return keyed.New(p, newLimiter, keys.opts) }
}

// Reference returns the exact reference for disagreement: a sliding log
// per key under p, with room for keys keys (an upper bound of the
// workload's distinct keys): the reference never forgets one.
func Reference(p algorithms.Policy, keys int) func() (algorithms.Limiter, error) {
	return PerKey(func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingLog(p)
	}, p, keys)
}

// lossyEvictions sums what the per-key tables among lims forgot.
func lossyEvictions(lims []algorithms.Limiter) int64 {
	var n int64
	for _, l := range lims {
		if k, ok := l.(*keyed.Limiter); ok {
			n += k.Stats().LossyEvictions
		}
	}
	return n
}

// NewMeta describes this process for result.json.
func NewMeta(mode string, seed uint64, args []string) Meta {
	v := Version
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return Meta{
		Version: v, Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Seed: seed, Mode: mode, StartedAt: time.Now().UTC(), Args: args,
	}
}

// Hostname is the host name for result.json, or "unknown".
func Hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

// NewResult assembles a result.json from an engine's config and runs.
func NewResult(meta Meta, cfg Config, runs []Run) *Result {
	w := cfg.Workload.Params()
	w["name"] = cfg.Workload.Name
	return &Result{Meta: meta, Policy: PolicyOf(cfg.Policy), Workload: w, Runs: runs}
}
