package main

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
)

func (e *env) reportCommand() *command {
	c := &command{name: "report", summary: "re-render DIR's charts, CSV, .hgrm and report.html from DIR/result.json, without re-running; without one, build it from DIR/requests.csv",
		usage: "ratebench report DIR [flags]",
		examples: []string{"ratebench report results/20261202-101500-boundary",
			"ratebench report -limit 100 -window 1s traces/   # a folder with only a requests.csv"},
		fs: flag.NewFlagSet("report", flag.ContinueOnError)}
	var pf traceFlags
	pf.register(c.fs, texts{
		"limit":  "without result.json: the limit L the trace was made under (default: fit.json's best fit)",
		"window": "without result.json: the window W the trace was made under (default: fit.json's best fit)",
		"burst":  "without result.json: the burst (default: the limit, or fit.json's)",
	})
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		if len(dirs) != 1 {
			return usagef("want one folder: ratebench report DIR")
		}
		dir := dirs[0]
		pf.given = isSet(c.fs, "limit") || isSet(c.fs, "window") || isSet(c.fs, "burst")
		if _, err := os.Stat(filepath.Join(dir, resultFile)); !errors.Is(err, fs.ErrNotExist) {
			if pf.given {
				return usagef("-limit, -window and -burst are for a folder without %s, built from its %s: %s has a %s", resultFile, tracefile.Name, dir, resultFile)
			}
			res, err := readResult(dir)
			if err != nil {
				return err
			}
			return e.render(dir, res)
		}
		trace := filepath.Join(dir, tracefile.Name)
		if _, err := os.Stat(trace); errors.Is(err, fs.ErrNotExist) {
			return usagef("%s has no result.json (nor a %s to build one from)", dir, tracefile.Name)
		}
		res, err := e.resultFromTrace(dir, pf)
		if err != nil {
			return err
		}
		if err := res.WriteFile(filepath.Join(dir, resultFile)); err != nil {
			return err
		}
		printWarnings(e.stderr, res.Meta.Warnings)
		return e.render(dir, res)
	}
	return c
}

// traceFlags are report's policy flags, for a folder with a trace alone.
type traceFlags struct {
	policyFlags
	given bool // one of them was given
}

// tracePolicy is the policy a trace in dir is measured against: the flags'
// when given (-limit and -window both), else the best fit of dir's
// fit.json; the string says which ("flags" or "fit", as
// result.Warning.PolicyFrom). Without either there is no policy, and no
// result: a usage error says so.
func tracePolicy(dir string, pf traceFlags) (algorithms.Policy, string, error) {
	if pf.given {
		if pf.limit <= 0 || pf.window <= 0 {
			return algorithms.Policy{}, "", usagef("give both -limit and -window (> 0): the policy %s was made under", tracefile.Name)
		}
		p, err := pf.policy()
		return p, "flags", err
	}
	p, ok, err := tracefile.FitPolicy(dir)
	switch {
	case err != nil:
		return p, "", usagef("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	case ok:
		return p, "fit", nil
	}
	return algorithms.Policy{}, "", usagef("%s has no result.json, and no policy to measure its %s against (no -limit/-window, no usable %s): give -limit N -window D, the policy it was made under",
		dir, tracefile.Name, fit.File)
}

// resultFromTrace builds a result from dir's requests.csv alone (see
// tracefile.Rebuild) against the policy of tracePolicy. A malformed or
// empty trace is a usage error, found before anything is written.
func (e *env) resultFromTrace(dir string, pf traceFlags) (*result.Result, error) {
	pol, source, err := tracePolicy(dir, pf)
	if err != nil {
		return nil, err
	}
	res, err := tracefile.Rebuild(dir, pol, source, e.args)
	if errors.As(err, new(*tracefile.FormatError)) || errors.Is(err, tracefile.ErrNoRows) {
		return nil, usageError{err}
	}
	return res, err
}

// readResult reads DIR/result.json; a missing or invalid one is a usage
// error of one line.
func readResult(dir string) (*result.Result, error) {
	res, err := result.ReadFile(filepath.Join(dir, "result.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s has no result.json", dir)
	case err != nil:
		return nil, usagef("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return res, nil
}

// positional parses fs over args, also after positional arguments (as in
// `merge A B -out C`), and returns the positional ones; everything after
// "--" is positional.
func positional(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err}
		}
		rest := fs.Args()
		if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}
