package tracefile

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
)

// ErrNoRows is returned by Rebuild for a trace without a row.
var ErrNoRows = errors.New("no rows")

// Rebuild builds a result from the trace (Name) in dir alone: one run per
// stretch of rows of one algorithm (two passes of one algorithm in a row
// are one run), counted as the engines count (see Summary) against the
// policy pol, which source names in the result's warning (where the policy
// came from: flags, a fit). args is the command line, recorded in the
// result's Meta. A trace that is not well formed is a *FormatError naming
// its line, one without rows an error wrapping ErrNoRows. It reads dir
// and writes nothing.
func Rebuild(dir string, pol algorithms.Policy, source string, args []string) (*result.Result, error) {
	path := filepath.Join(dir, Name)
	idx, err := Scan(path)
	switch {
	case err != nil:
		return nil, err
	case idx.Rows == 0:
		return nil, fmt.Errorf("%s has %w: nothing to report", path, ErrNoRows)
	}
	var end int64
	for _, s := range idx.Segments {
		end = max(end, s.End)
	}
	span := end + 1
	bin := bench.BinWidth(pol.Window, time.Duration(span))
	meta := result.NewMeta("trace", 0, args)
	meta.Warnings = []result.Warning{{Kind: result.WarnTraceOnly, PolicyFrom: source}}
	res := &result.Result{Meta: meta, Policy: result.PolicyOf(pol), Workload: map[string]any{"name": Name}}
	for _, seg := range idx.Segments {
		run, warn, err := rebuildRun(path, seg, pol, res.Policy, bin, span)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, run)
		if warn != nil {
			res.Meta.Warnings = append(res.Meta.Warnings, *warn)
		}
	}
	return res, nil
}

// rebuildRun counts one segment of the trace at path as one run, with a
// warning when its rows came out of send order.
func rebuildRun(path string, seg Segment, pol algorithms.Policy, pj result.PolicyJSON, bin, span int64) (result.Run, *result.Warning, error) {
	var theory int64
	served := false
	if a, err := all.Lookup(seg.Algorithm); err == nil && !seg.HTTP {
		theory, served = a.Theory(pol), a.Shaper
	}
	s := measure.New(measure.Counting{Policy: pj, Bin: bin, Theory: theory, Over: theory, Served: served, HTTP: seg.HTTP, Latency: true})
	err := MergeRows([]Part{{Path: path, First: seg.First, Count: seg.Count}}, func(r Row) error {
		s.Add(&r.Row)
		return nil
	})
	if err != nil {
		return result.Run{}, nil, err
	}
	run, err := s.Finish(span)
	if err != nil {
		return result.Run{}, nil, err
	}
	run.Algorithm, run.Replicas = seg.Algorithm, 1
	run.HTTP = nil // its header checks alone would read as an attack that counted no responses
	var warn *result.Warning
	if k := s.Reordered(); k > 0 {
		warn = &result.Warning{Kind: result.WarnReordered, Run: seg.Algorithm, N: k, Rows: Lookahead}
	}
	return run, warn, nil
}
