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
// comparison) into DIR/<cell>/.
func (e *env) runScenario(ctx context.Context, path, out string, noReport bool) error {
	data := defaultScenario
	if path != "default" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return usageError{err}
		}
	}
	s, err := bench.ParseScenario(data)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	cells, err := s.Cells()
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	name := s.Name
	if name == "" {
		name = filepath.Base(path)
	}
	dir := outDir(out, name)
	for _, c := range cells {
		fmt.Fprintf(e.stdout, "\n== %s: %s\n", c.Name, c.Config.Policy)
		if _, err := e.execute(ctx, c.Config, c.Targets, filepath.Join(dir, c.Name), c.Seed, noReport); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	fmt.Fprintf(e.stdout, "\nall results: %s\n", dir)
	return nil
}
