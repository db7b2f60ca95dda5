package bench

import (
	"github.com/ratebench/ratebench/bench/result"
)

// NewResult assembles a result.json from an engine's config and runs.
func NewResult(meta result.Meta, cfg Config, runs []result.Run) *result.Result {
	var w map[string]any
	if cfg.Workload != nil {
		w = cfg.Workload.Record()
	}
	return &result.Result{Meta: meta, Policy: result.PolicyOf(cfg.Policy), Workload: w, Runs: runs}
}
