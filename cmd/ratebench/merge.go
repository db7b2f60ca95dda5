package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/report"
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
				o.abandon()
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

// tracePlan is how merge combines the inputs' traces: for each merged run,
// the inputs' rows and how they count.
type tracePlan struct {
	runs []tracedRun
}

// tracedRun is one merged run's share of a tracePlan.
type tracedRun struct {
	parts []tracefile.Part
	count tracefile.Counting
	start int64 // the common clock's zero, Unix ns (0 for simulations)
	span  int64 // ns of the common clock the inputs' series cover
	label string
}

// planTraceMerge plans the merge of the traces of the input folders dirs
// into res, the Merge of inputs. It returns nil and why when they cannot
// be merged (a folder without requests.csv, a trace that does not match
// its result.json, starts not on one clock, costs a trace does not hold),
// and an error for a trace that is not a well-formed requests.csv (a
// usage error naming its line), before anything is written.
func planTraceMerge(dirs []string, inputs []result.Input, res *result.Result) (*tracePlan, string, error) {
	paths := make([]string, len(dirs))
	for i, d := range dirs {
		paths[i] = filepath.Join(d, tracefile.Name)
		if _, err := os.Stat(paths[i]); err != nil {
			return nil, fmt.Sprintf("%s has no %s", d, tracefile.Name), nil
		}
	}
	// first[i][j] is the first row of run j of input i: a trace holds its
	// passes one after the other, one row per request offered.
	first := make([][]int64, len(dirs))
	http := make([][]bool, len(dirs))
	for i, p := range paths {
		idx, err := tracefile.Scan(p)
		if err != nil {
			if errors.As(err, new(*tracefile.FormatError)) {
				return nil, "", usageError{err}
			}
			return nil, "", err
		}
		runs := inputs[i].Result.Runs
		var offered int64
		for _, r := range runs {
			offered += r.Offered
			if r.OfferedCost != r.Offered || idx.CostNot1 {
				return nil, fmt.Sprintf("%s's requests cost other than 1, which merged traces do not record", dirs[i]), nil
			}
		}
		if idx.Rows != offered {
			return nil, fmt.Sprintf("%s has %d rows for the %d requests its result.json offered", p, idx.Rows, offered), nil
		}
		first[i], http[i] = make([]int64, len(runs)), make([]bool, len(runs))
		var row int64
		for j, r := range runs {
			first[i][j] = row
			for _, s := range idx.Segments {
				if s.First >= row+r.Offered || s.First+s.Count <= row {
					continue
				}
				if s.Algorithm != r.Algorithm {
					return nil, fmt.Sprintf("%s's rows %d to %d are of %s, not of its run %s", p, row+1, row+r.Offered, s.Algorithm, r.Label()), nil
				}
				http[i][j] = http[i][j] || s.HTTP
			}
			row += r.Offered
		}
	}
	plan := &tracePlan{}
	for n, m := range res.Runs {
		tr := tracedRun{label: m.Label(), start: math.MaxInt64}
		var zero, clocked, isHTTP bool
		keys := 0 // an upper bound of the distinct keys, for the reference
		for i := range inputs {
			j := result.RunIndex(inputs, n, i)
			r := inputs[i].Result.Runs[j]
			keys += max(r.KeyCount, 1)
			tr.start = min(tr.start, r.StartUnixNS)
			zero, clocked = zero || r.StartUnixNS == 0, clocked || r.StartUnixNS != 0
			isHTTP = isHTTP || r.HTTP != nil || http[i][j]
		}
		if zero && clocked {
			return nil, fmt.Sprintf("%s: some inputs have no start time (a simulation) and others do: their traces cannot be put on one clock", m.Label()), nil
		}
		for i, in := range inputs {
			// Only a simulation's zero is shared (virtual); a run without
			// its start (a result built from a trace) has a zero of its own.
			if in.Result.Runs[result.RunIndex(inputs, n, i)].StartUnixNS == 0 && in.Result.Meta.Mode != "sim" {
				return nil, fmt.Sprintf("%s: %s's run has no start time: its trace cannot be put on the others' clock", m.Label(), dirs[i]), nil
			}
		}
		bin := m.Series.BinNS
		if bin <= 0 {
			return nil, fmt.Sprintf("%s has no series bin width", m.Label()), nil
		}
		for i := range inputs {
			j := result.RunIndex(inputs, n, i)
			r := inputs[i].Result.Runs[j]
			shift := r.StartUnixNS - tr.start
			tr.parts = append(tr.parts, tracefile.Part{Path: paths[i], First: first[i][j], Count: r.Offered, Shift: shift})
			tr.span = max(tr.span, shift+int64(max(len(r.Series.Admitted), len(r.Series.Rejected)))*bin)
		}
		served := false
		if a, err := all.Lookup(m.Algorithm); err == nil && !isHTTP {
			served = a.Shaper
		}
		tr.count = tracefile.Counting{Policy: res.Policy, Bin: bin, Theory: m.TheoryMaxInWindow, Over: m.TheoryFor(),
			Served: served, HTTP: isHTTP, FailOpen: m.FailOpen}
		// Only shards share one exact log. As in the engines, an HTTP
		// run's instants are send instants, not the server's: it has no
		// disagreement to recount.
		if res.Policy.Limit > 0 && !isHTTP && res.Meta.Merge != nil && res.Meta.Merge.Shards > 0 {
			ref, err := backend.Reference(res.Policy.Policy(), keys)()
			if err != nil {
				return nil, "", fmt.Errorf("merge: reference: %w", err)
			}
			tr.count.Reference = ref
		}
		plan.runs = append(plan.runs, tr)
	}
	return plan, "", nil
}

// mergeTraces writes the merged trace into o (in place once closed, see
// endTrace), each run's rows in send order on the common clock, and puts
// what it recounts there into res (result.SetRecounted): the exact most
// admitted in any W, the series, per-key shares and the disagreement with
// the exact log over every input's requests, and returns its warnings. On
// an error nothing is left of the trace.
func mergeTraces(o *outDir, plan *tracePlan, res *result.Result) (*tracefile.Writer, []result.Warning, error) {
	tw, err := startTrace(o, true)
	if err != nil {
		return nil, nil, err
	}
	var warns []result.Warning
	recounted := make([]result.Recounted, len(plan.runs))
	for n, tr := range plan.runs {
		s := tracefile.NewSummary(tr.count)
		err := tracefile.MergeRows(tr.parts, func(r tracefile.Row) error {
			tw.Row(r.Row)
			s.Add(r)
			return nil
		})
		if err != nil {
			tw.Abort()
			return nil, nil, err
		}
		run, err := s.Finish(tr.span)
		if err != nil {
			tw.Abort()
			return nil, nil, err
		}
		recounted[n] = result.Recounted{StartUnixNS: tr.start, Run: run}
		if k := s.Reordered(); k > 0 {
			warns = append(warns, result.Warning{Kind: result.WarnMergeReordered, Run: tr.label, N: int64(k), Rows: tracefile.Lookahead})
		}
	}
	if err := res.SetRecounted(recounted); err != nil {
		tw.Abort()
		return nil, nil, err
	}
	return tw, warns, nil
}

// apart refuses an output folder that is the input folder in, inside it
// or above it, however the two are written (symbolic links, "..", a
// relative path): writing there would overwrite or mix with the input.
func apart(in, out string) error {
	a, err := resolve(in)
	if err != nil {
		return usagef("%s: %v", in, err)
	}
	b, err := resolve(out)
	if err != nil {
		return usagef("-out %s: %v", out, err)
	}
	switch {
	case a == b:
		return usagef("-out %s is the input %s", out, in)
	case within(b, a):
		return usagef("-out %s is inside the input %s", out, in)
	case within(a, b):
		return usagef("-out %s holds the input %s", out, in)
	}
	return nil
}

// resolve returns the absolute path of p with every symbolic link of its
// longest existing prefix resolved; the part that does not exist yet is
// appended as written.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		} else if !os.IsNotExist(err) {
			return "", err
		}
		if filepath.Dir(dir) == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within reports whether path p lies inside folder dir (both resolved).
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
