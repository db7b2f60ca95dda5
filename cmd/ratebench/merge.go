package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/outdir"
)

func (e *env) mergeCommand() *command {
	c := &command{name: "merge", summary: "merge run folders made on several machines (sums, HDR merge) into -out and render it; when every folder has its requests.csv, also the traces, on one clock, for the exact most admitted in any W",
		usage: "ratebench merge DIR... -out DIR [-check COND]",
		examples: []string{
			"ratebench merge results/host-a results/host-b -out results/all",
			"ratebench merge results/shard-* -out results/all -check 'burst_ratio<=1.05'",
		},
		notes: checkHelp(),
		fs:    flag.NewFlagSet("merge", flag.ContinueOnError)}
	out := c.fs.String("out", "", "output folder (required; not one of the inputs, nor inside or above one)")
	var checks checksFlag
	checks.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		if len(dirs) < 2 {
			return usagef("want at least two folders: ratebench merge DIR... -out DIR")
		}
		if *out == "" {
			return usagef("-out is required: ratebench merge DIR... -out DIR")
		}
		if err := checks.parse(nil); err != nil { // the runs' names come from the inputs
			return err
		}
		inputs := make([]result.Input, len(dirs))
		for i, d := range dirs {
			if err := apart(d, *out); err != nil {
				return err
			}
			res, err := readResult(d)
			if err != nil {
				return err
			}
			inputs[i] = result.Input{Name: filepath.Clean(d), Result: res}
		}
		res, err := result.Merge(inputs)
		if err != nil {
			return usageError{err}
		}
		res.Meta.Args = result.RecordedArgs(e.args)
		plan, why, err := planTraceMerge(dirs, inputs, res)
		if err != nil {
			return err
		}
		if err := checks.apply(res); err != nil { // a condition on an algorithm no input ran
			return err
		}
		o, err := prepareOut(*out, "", runFolder)
		if err != nil {
			return err
		}
		var tw *tracefile.Writer
		if plan != nil {
			var warns []result.Warning
			if tw, warns, err = mergeTraces(o, plan, res); err != nil {
				o.Abandon()
				return err
			}
			res.Meta.Warnings = append(res.Meta.Warnings, warns...)
			printWarnings(e.stderr, warns)
			fmt.Fprintln(e.stdout, "merge: the inputs' traces put on one clock: the most admitted in any W is exact")
		} else if res.Meta.Warned(result.WarnMaxLowerBound) {
			fmt.Fprintf(e.stderr, "warning: %s; here: %s\n", report.WarningText(result.Warning{Kind: result.WarnMaxLowerBound}), why)
		}
		_ = checks.apply(res) // again, on the traces' exact figures; its names passed above
		if err := e.endTrace(tw, o, e.write(o, res, false)); err != nil {
			return err
		}
		return e.checkOutcome(res)
	}
	return c
}

// planTraceMerge is tracefile.PlanMerge, with a malformed trace a usage
// error naming its line.
func planTraceMerge(dirs []string, inputs []result.Input, res *result.Result) (*tracefile.MergePlan, string, error) {
	plan, why, err := tracefile.PlanMerge(dirs, inputs, res)
	if errors.As(err, new(*tracefile.FormatError)) {
		return nil, "", usageError{err}
	}
	return plan, why, err
}

// mergeTraces writes the merged trace into o (in place once closed, see
// endTrace) and puts what it recounts there into res (see
// tracefile.MergePlan.Write), and returns its warnings. On an error
// nothing is left of the trace.
func mergeTraces(o *outDir, plan *tracefile.MergePlan, res *result.Result) (*tracefile.Writer, []result.Warning, error) {
	tw, err := startTrace(o, true)
	if err != nil {
		return nil, nil, err
	}
	warns, err := plan.Write(tw, res)
	if err != nil {
		tw.Abort()
		return nil, nil, err
	}
	return tw, warns, nil
}

// apart refuses an output folder that is the input folder in, inside it
// or above it, however the two are written (symbolic links, "..", a
// relative path): writing there would overwrite or mix with the input.
func apart(in, out string) error {
	a, err := outdir.Resolve(in)
	if err != nil {
		return usagef("%s: %v", in, err)
	}
	b, err := outdir.Resolve(out)
	if err != nil {
		return usagef("-out %s: %v", out, err)
	}
	switch {
	case a == b:
		return usagef("-out %s is the input %s", out, in)
	case outdir.Within(b, a):
		return usagef("-out %s is inside the input %s", out, in)
	case outdir.Within(a, b):
		return usagef("-out %s holds the input %s", out, in)
	}
	return nil
}
