package bench

import (
	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/bench/result"
)

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

// NewResult assembles a result.json from an engine's config and runs.
func NewResult(meta result.Meta, cfg Config, runs []result.Run) *result.Result {
	var w map[string]any
	if cfg.Workload != nil {
		w = cfg.Workload.Record()
	}
	return &result.Result{Meta: meta, Policy: result.PolicyOf(cfg.Policy), Workload: w, Runs: runs}
}
