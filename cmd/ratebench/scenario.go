package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/check"
	"github.com/ratebench/ratebench/report"
)

//go:embed scenarios/default.yaml
var defaultScenario []byte

// runScenario runs every cell of a scenario file ("default": the built-in
// comparison) into DIR/<cell>/. Every cell's workload and folder are
// checked before the first one runs.
func (e *env) runScenario(ctx context.Context, path, out string, noReport bool, b bounds, checks checksFlag) error {
	data := defaultScenario
	if path != "default" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return usageError{err}
		}
	}
	s, err := parseScenario(data)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	cells, err := s.cells()
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	runs := make([]measured, len(cells))
	for i, c := range cells {
		info, refKeys, err := inspect(ctx, c.Source, b) // a trace's Source takes its own count of keys
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, c.Name, err)
		}
		targets, err := backend.MemoryTargets(c.Algorithms, c.Config.Policy, backend.Keys{N: info.Keys}, c.Replicas)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", path, err)}
		}
		c.Config.Span, c.Config.Reference = info.Span, backend.Reference(c.Config.Policy, refKeys)
		if err := checks.parse(orAll(c.Algorithms)); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		runs[i] = measured{eng: simEngine, cfg: c.Config, targets: targets, seed: c.Seed, noReport: noReport, checks: checks}
	}
	name := s.Name
	if name == "" {
		name = filepath.Base(path)
	}
	top, err := prepareOut(out, name, scenarioFolder)
	if err != nil {
		return err
	}
	for i, c := range cells {
		if runs[i].out, err = top.sub(c.Name); err != nil {
			for _, r := range runs[:i] {
				r.out.abandon()
			}
			top.abandon()
			return err
		}
	}
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
				r.out.abandon()
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
	fmt.Fprintf(e.stdout, "\nall results: %s\n", top.path)
	if !noReport {
		if err := report.WriteIndex(top.path, "ratebench: "+name, version(), index); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "pages:       %s\n", filepath.Join(top.path, report.IndexFile))
	}
	if failed > 0 {
		return exitStatus{1, fmt.Errorf("%d of %d checks failed", failed, total)}
	}
	return nil
}
