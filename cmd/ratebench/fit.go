package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/probe"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/outdir"
)

// fitFlags are the flags of `ratebench fit`.
type fitFlags struct {
	limit  int64
	window time.Duration
	out    string
}

func (e *env) fitCommand() *command {
	c := &command{name: "fit", summary: "tell which algorithm, policy and scope DIR's service behaves like, from its requests.csv (writes fit.json and the page)",
		usage: "ratebench fit DIR [-limit L] [-window W] [-out DIR]",
		examples: []string{
			"ratebench fit results/20261202-101500-attack",
			"ratebench fit -window 1500ms results/probe         # a window you believe in, tried first",
			"ratebench fit -out results/refit results/probe     # the refit beside the original",
		},
		fs: flag.NewFlagSet("fit", flag.ContinueOnError)}
	var f fitFlags
	c.fs.Int64Var(&f.limit, "limit", 0, "what you believe the limit L is: with -window, its rate is tried first (optional)")
	durationVar(c.fs, &f.window, "window", 0, "what you believe the window W is: tried first (optional)")
	c.fs.StringVar(&f.out, "out", "", "write fit.json, result.json, requests.csv and the page here instead of updating DIR: new, empty, or an earlier result's")
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		switch {
		case len(dirs) != 1:
			return usagef("want one folder: %s", c.usage)
		case f.limit < 0 || f.window < 0:
			return usagef("-limit and -window must be >= 0 (0: unknown)")
		case f.limit > 0 && f.window == 0:
			return usagef("-limit %d needs -window: a limit is per a window", f.limit)
		}
		return e.fit(dirs[0], f)
	}
	return c
}

// fit fits dir's trace and writes the fit (and, for a probe's folder, its
// result with the new verdict) into dir, or into f.out.
func (e *env) fit(dir string, f fitFlags) error {
	// Without result.json (a requests.csv alone) the fit still runs,
	// with windows' phases relative to the trace's start; `report` can
	// then build the page against the fitted policy.
	res, err := readResult(dir)
	alone := err != nil && !exists(filepath.Join(dir, "result.json"))
	if err != nil && !alone {
		return err
	}
	trace := filepath.Join(dir, tracefile.Name)
	reqs, err := tracefile.FitRequests(trace)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("%s has no %s: attack and probe write one unless -no-trace, run with -trace", dir, tracefile.Name)
	case errors.As(err, new(*tracefile.FormatError)):
		return usageError{err}
	case err != nil:
		return err
	}
	var opts fit.Options
	if !alone {
		opts.StartUnixNS = res.Runs[0].StartUnixNS
	}
	if f.window > 0 {
		opts.Windows = []time.Duration{f.window}
	}
	if f.limit > 0 {
		opts.RatesPerS = []float64{float64(f.limit) / f.window.Seconds()}
	}
	var out *outDir
	if f.out != "" {
		if out, err = prepareOut(f.out, "fit", runFolder); err != nil {
			return err
		}
	}
	fr, err := fit.Run(reqs, opts)
	if err != nil {
		out.Abandon()
		return err
	}
	if !alone && res.Probe != nil {
		probe.SetFit(res.Probe, fr)
	}
	fmt.Fprintf(e.stdout, "The service %s.\n", fr.Sentence())
	if !alone {
		if s := report.AdvertisedReading(res, fr); s != "" {
			fmt.Fprintln(e.stdout, s)
		}
	}
	to := dir
	if out != nil {
		to = out.Path
		if err := e.copyFitted(out, res, trace); err != nil {
			out.Abandon()
			return err
		}
	}
	var withFit *result.Result // a probe's result, with its new verdict, beside the fit
	if out == nil && !alone && res.Probe != nil {
		withFit = res
	}
	if err := outdir.WriteFit(to, fr, withFit); err != nil {
		out.Abandon()
		return err
	}
	fmt.Fprintf(e.stdout, "fit:     %s\n", filepath.Join(to, fit.File))
	if alone {
		fmt.Fprintf(e.stdout, "(no result.json: `ratebench report %s` builds the page from the trace and this fit)\n", to)
		return nil
	}
	return e.writeReport(to, res)
}

// copyFitted writes res (if any) and the trace into a new output folder.
func (e *env) copyFitted(out *outDir, res *result.Result, trace string) error {
	if res != nil {
		if err := out.WriteResult(res); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		return err
	}
	return result.WriteFileAtomic(filepath.Join(out.Path, tracefile.Name), b)
}

// exists reports whether path exists (an error other than "not there"
// counts as existing, so that it is reported when read).
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
