package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ratebench/ratebench/bench"
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
		// Without result.json (a requests.csv alone) the fit still runs,
		// with windows' phases relative to the trace's start; `report`
		// can then build the page against the fitted policy.
		res, err := readResult(dir)
		alone := err != nil && !exists(filepath.Join(dir, "result.json"))
		if err != nil && !alone {
			return err
		}
		reqs, err := fitRequests(filepath.Join(dir, tracefile.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return usagef("%s has no %s: attack writes one unless -no-trace, run with -trace", dir, tracefile.Name)
		case errors.As(err, new(*tracefile.FormatError)):
			return usageError{err}
		case err != nil:
			return err
		}
		var opts fit.Options
		if !alone {
			opts.StartUnixNS = res.Runs[0].StartUnixNS
		}
		f, err := fit.Run(reqs, opts)
		if err != nil {
			return err
		}
		if err := f.WriteFile(dir); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "The service %s.\n", f.Sentence())
		if alone {
			fmt.Fprintf(e.stdout, "fit:     %s (no result.json: `ratebench report %s` builds the page from the trace and this fit)\n", filepath.Join(dir, fit.File), dir)
			return nil
		}
		if s := report.AdvertisedReading(res, f); s != "" {
			fmt.Fprintln(e.stdout, s)
		}
		fmt.Fprintf(e.stdout, "fit:     %s\n", filepath.Join(dir, fit.File))
		return e.writeReport(dir, res)
	}
	return c
}

// exists reports whether path exists (an error other than "not there"
// counts as existing, so that it is reported when read).
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// fitRequests reads the answered requests of a requests.csv for the fit:
// the first algorithm's rows (a trace holds its passes one after the
// other), failed ones left out, in send order.
func fitRequests(path string) ([]fit.Request, error) {
	r, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var reqs []fit.Request
	var first string
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return reqs, nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case row.Seq == 0:
			first = row.Algorithm
		case row.Algorithm != first:
			return reqs, nil // the next pass
		}
		if row.Outcome == bench.Failed {
			continue
		}
		reqs = append(reqs, fit.Request{Sent: row.Sent, Done: row.Done, Key: row.Key, Source: row.Source, Admitted: row.Outcome == bench.Admitted})
	}
}
