package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/report"
)

func (e *env) compareCommand() *command {
	c := &command{name: "compare", summary: "render two run folders side by side with their differences (compare.html)",
		fs: flag.NewFlagSet("compare", flag.ContinueOnError)}
	out := c.fs.String("out", "", "output folder (default A/compare-<name of B>)")
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		if len(dirs) != 2 {
			return usagef("want two folders: ratebench compare A B [-out DIR]")
		}
		a, err := readResult(dirs[0])
		if err != nil {
			return err
		}
		b, err := readResult(dirs[1])
		if err != nil {
			return err
		}
		dir := *out
		if dir == "" {
			dir = compareDir(dirs[0], dirs[1])
		}
		opts := report.CompareOptions{NameA: filepath.Clean(dirs[0]), NameB: filepath.Clean(dirs[1])}
		if err := report.Compare(dir, a, b, opts); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "compare: %s\n", filepath.Join(dir, report.CompareFile))
		return nil
	}
	return c
}

// compareDir is the default output of `compare A B`: A/compare-<name of B>.
func compareDir(a, b string) string {
	name := filepath.Base(filepath.Clean(b))
	if abs, err := filepath.Abs(b); err == nil && (name == "." || name == ".." || name == string(filepath.Separator)) {
		name = filepath.Base(abs)
	}
	return filepath.Join(a, "compare-"+name)
}
