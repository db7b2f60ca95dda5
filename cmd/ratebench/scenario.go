package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/check"
	"github.com/ratebench/ratebench/bench/engine"
	"github.com/ratebench/ratebench/bench/scenario"
	"github.com/ratebench/ratebench/report"
)

// scenarioPlan is a scenario ready to run: its name, its cells and each
// one's run, into top/<cell>/.
type scenarioPlan struct {
	name  string
	top   *outDir
	cells []scenario.Cell
	runs  []measured
}

// planScenario reads a scenario file ("default": the built-in
// comparison) and checks every cell's workload and targets, and the
// output folders, before the first one runs.
func planScenario(ctx context.Context, path, out string, noReport bool, b bounds, checks checksFlag) (*scenarioPlan, error) {
	name, cells, err := scenario.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	runs := make([]measured, len(cells))
	for i, c := range cells {
		info, refKeys, err := inspect(ctx, c.Source, b) // a trace's Source takes its own count of keys
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, c.Name, err)
		}
		targets, err := backend.MemoryTargets(c.Algorithms, c.Config.Policy, backend.Keys{N: info.Keys}, c.Replicas)
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", path, err)}
		}
		c.Config.Span, c.Config.Reference = info.Span, backend.Reference(c.Config.Policy, refKeys)
		if err := checks.parse(orAll(c.Algorithms)); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		runs[i] = measured{eng: engine.Sim, cfg: c.Config, targets: targets, seed: c.Seed, noReport: noReport, checks: checks}
	}
	top, err := prepareOut(out, name, scenarioFolder)
	if err != nil {
		return nil, err
	}
	for i, c := range cells {
		if runs[i].out, err = subOut(top, c.Name); err != nil {
			for _, r := range runs[:i] {
				r.out.Abandon()
			}
			top.Abandon()
			return nil, err
		}
	}
	return &scenarioPlan{name: name, top: top, cells: cells, runs: runs}, nil
}

// runScenario runs every cell of a scenario file into DIR/<cell>/ (see
// planScenario), then says each one's finding and writes the index page.
func (e *env) runScenario(ctx context.Context, path, out string, noReport bool, b bounds, checks checksFlag) error {
	p, err := planScenario(ctx, path, out, noReport, b, checks)
	if err != nil {
		return err
	}
	top, cells, runs := p.top, p.cells, p.runs
	failed, total := 0, 0
	var index []report.IndexEntry
	for i, c := range cells {
		fmt.Fprintf(e.stdout, "\n== %s: %s\n", c.Name, c.Config.Policy)
		res, err := e.execute(ctx, runs[i])
		if st := (exitStatus{}); errors.As(err, &st) && res != nil && check.Failed(res.Checks) > 0 {
			err = nil // the other workloads' checks are as much worth running
		}
		if err != nil {
			for _, r := range runs[i+1:] {
				r.out.Abandon()
			}
			return err
		}
		failed, total = failed+check.Failed(res.Checks), total+len(res.Checks)
		index = append(index, report.IndexEntry{Name: c.Name, Href: c.Name + "/" + report.HTMLFile, Finding: report.Finding(res)})
	}
	// The takeaway: each workload's finding, last, where a terminal
	// leaves the reader.
	fmt.Fprintln(e.stdout, "\ntakeaway:")
	for _, x := range index {
		fmt.Fprintf(e.stdout, "  %s: %s\n", x.Name, x.Finding)
	}
	fmt.Fprintf(e.stdout, "\nall results: %s\n", top.Path)
	if !noReport {
		if err := report.WriteIndex(top.Path, "ratebench: "+p.name, version(), index); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "pages:       %s\n", filepath.Join(top.Path, report.IndexFile))
	}
	if failed > 0 {
		return exitStatus{1, fmt.Errorf("%d of %d checks failed", failed, total)}
	}
	return nil
}
