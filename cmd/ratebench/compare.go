package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/outdir"
)

func (e *env) compareCommand() *command {
	c := &command{name: "compare", summary: "render two run folders side by side with their differences (compare.html)",
		usage: "ratebench compare A B [-out DIR]",
		examples: []string{
			"ratebench compare results/sim-gcra results/attack-gcra     # does the service do what the simulation said?",
			"ratebench compare results/before results/after -out results/before-vs-after",
		},
		fs: flag.NewFlagSet("compare", flag.ContinueOnError)}
	out := c.fs.String("out", "", "output folder (default: compare-<A>-vs-<B> beside A)")
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
			dir = outdir.CompareDir(dirs[0], dirs[1])
		}
		for _, in := range dirs {
			if err := apart(in, dir); err != nil {
				return err
			}
		}
		o, err := prepareOut(dir, "", compareFolder)
		if err != nil {
			return err
		}
		// The folders name the sides as given, and the page shows the
		// command line as given: relative paths stay relative.
		opts := report.CompareOptions{NameA: filepath.Clean(dirs[0]), NameB: filepath.Clean(dirs[1]), Args: e.args}
		fmt.Fprintln(e.stdout, report.CompareFinding(a, b, "A", "B"))
		if err := report.CompareTable(e.stdout, a, b, opts); err != nil {
			return err
		}
		if err := report.Compare(o.Path, a, b, opts); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "compare: %s\n", filepath.Join(o.Path, report.CompareFile))
		return nil
	}
	return c
}
