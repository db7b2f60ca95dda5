package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/fit"
	"github.com/ratebench/ratebench/report"
)

func (e *env) fitCommand() *command {
	c := &command{name: "fit", summary: "tell which algorithm, policy and scope DIR's service behaves like, from its requests.csv (writes fit.json and the page)",
		fs: flag.NewFlagSet("fit", flag.ContinueOnError)}
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		if len(dirs) != 1 {
			return usagef("want one folder: ratebench fit DIR")
		}
		dir := dirs[0]
		res, err := readResult(dir)
		if err != nil {
			return err
		}
		reqs, err := fit.ReadFile(filepath.Join(dir, tracefile.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return usagef("%s has no %s: attack writes one unless -no-trace, run with -trace", dir, tracefile.Name)
		case err != nil:
			return usagef("%v", err)
		}
		f, err := fit.Run(reqs, fit.Options{StartUnixNS: res.Runs[0].StartUnixNS})
		if err != nil {
			return err
		}
		if err := f.WriteFile(dir); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "The service %s.\n", f.Sentence())
		if s := report.AdvertisedReading(res, f); s != "" {
			fmt.Fprintln(e.stdout, s)
		}
		fmt.Fprintf(e.stdout, "fit:     %s\n", filepath.Join(dir, fit.File))
		return e.writeReport(dir, res)
	}
	return c
}
