package bench

import (
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
// per key with its own state, through keyed when keys > 1. Unknown names
// and invalid policies are errors.
func MemoryTargets(names []string, p algorithms.Policy, keys, replicaCount int) ([]Target, error) {
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
			Theory: e.Theory(p), New: PerKey(e.New, p, keys),
		})
	}
	return targets, nil
}

// PerKey returns a constructor of one limiter for p: newLimiter itself for
// one key, or a keyed limiter giving each key its own state.
func PerKey(newLimiter func(algorithms.Policy) (algorithms.Limiter, error), p algorithms.Policy, keys int) func() (algorithms.Limiter, error) {
	if keys <= 1 {
		return func() (algorithms.Limiter, error) { return newLimiter(p) }
	}
	return func() (algorithms.Limiter, error) {
		// Room for twice the keys and a margin per shard, so that no key
		// is ever evicted (an eviction would forget state and depend on
		// the hash seed).
		return keyed.New(p, newLimiter, keyed.Options{MaxKeys: 2*keys + 64*64})
	}
}

// Reference returns the exact reference for disagreement: a sliding log
// per key under p.
func Reference(p algorithms.Policy, keys int) func() (algorithms.Limiter, error) {
	return PerKey(func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewSlidingLog(p)
	}, p, keys)
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
