package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ratebench/ratebench/bench"
)

//go:embed scenarios/default.yaml
var defaultScenario []byte

// runScenario runs every cell of a scenario file ("default": the built-in
// comparison) into DIR/<cell>/. Every cell's workload and folder are
// checked before the first one runs.
func (e *env) runScenario(ctx context.Context, path, out string, noReport bool, b bounds) error {
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
		info, refKeys, err := inspect(ctx, &c.Config.Workload, b)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, c.Name, err)
		}
		targets, err := bench.MemoryTargets(c.Algorithms, c.Config.Policy, bench.Keys{N: c.Config.Workload.Keys}, c.Replicas)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", path, err)}
		}
		c.Config.Span, c.Config.Reference = info.Span, bench.Reference(c.Config.Policy, refKeys)
		runs[i] = measured{eng: simEngine, cfg: c.Config, targets: targets, seed: c.Seed, noReport: noReport}
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
	for i, c := range cells {
		fmt.Fprintf(e.stdout, "\n== %s: %s\n", c.Name, c.Config.Policy)
		if _, err := e.execute(ctx, runs[i]); err != nil {
			for _, r := range runs[i+1:] {
				r.out.abandon()
			}
			return err
		}
	}
	fmt.Fprintf(e.stdout, "\nall results: %s\n", top.path)
	return nil
}
