package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/engine"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/bars"
	"github.com/ratebench/ratebench/report/summary"
)

// measured is one run to make, checked and ready: the engine, its config
// and targets, and the output folder.
type measured struct {
	eng      engine.Engine
	cfg      bench.Config
	targets  []call.Target
	out      *outDir
	seed     uint64
	noReport bool
	trace    bool     // write requests.csv
	warnings []string // said before the run starts
	shard    shardRun // the part of the schedule played, and when
	checks   checksFlag
	progress string // -progress
}

// measurement is one measuring command's run, for measure: run, attack
// and probe each say how to run their engine, write what it measured
// and judge the outcome; measure does the rest the same way for all.
type measurement struct {
	out      *outDir
	trace    bool                       // write requests.csv
	wait     func(context.Context) bool // when set, waits for the start (-start-at); false: interrupted
	passes   int                        // for the progress display; 0: not known
	progress string                     // -progress
	checks   *checksFlag                // evaluated on the result before it is written, when set
	quiet    bool                       // the result's warnings are not said on stderr
	// run runs the engine with tr (nil: no trace) and p as its tracer
	// and progress. It returns the result to write, its Meta.Warnings
	// set (Elapsed and Interrupted are measure's), or nil when nothing
	// is to be written (a failure before anything was measured).
	run func(ctx context.Context, tr call.Tracer, p call.Progress) (*result.Result, error)
	// write writes res into out (before the trace is put in place).
	write func(res *result.Result) error
	// summary, when set, prints what the table does not show.
	summary func(res *result.Result)
	// outcome is the exit after a run that was not interrupted: err is
	// the run's own error, if it still wrote a result.
	outcome func(res *result.Result, err error) error
}

// measure is the one pipeline of the measuring commands: it starts the
// trace, waits for the start, runs m with its progress shown, then (also
// after Ctrl-C, for what ran) says the result's warnings, evaluates its
// checks, writes it with its trace, prints the summary, and returns
// errInterrupted after an interrupt, else m's outcome. A run that fails
// before measuring anything leaves nothing behind. The result is
// returned once written, even with an error (the writing's).
func (e *env) measure(ctx context.Context, m measurement) (*result.Result, error) {
	tw, err := startTrace(m.out, m.trace)
	if err != nil {
		m.out.Abandon()
		return nil, err
	}
	discard := func() {
		if tw != nil {
			tw.Abort()
		}
		m.out.Abandon()
	}
	if m.wait != nil && !m.wait(ctx) {
		discard()
		return nil, errInterrupted
	}
	var tr call.Tracer
	if tw != nil {
		tr = tw
	}
	ui := bars.New(e.stderr, m.passes, m.progress)
	start := time.Now()
	res, err := m.run(ctx, tr, bars.Progress(ui))
	bars.Wait(ui)
	if res == nil {
		discard()
		if err == nil {
			err = errors.New("nothing measured")
		}
		return nil, err
	}
	res.Meta.ElapsedNS = int64(time.Since(start))
	interrupted := errors.Is(err, context.Canceled)
	res.Meta.Interrupted = interrupted
	if !m.quiet {
		printWarnings(e.stderr, res.Meta.Warnings)
	}
	if m.checks != nil {
		if cerr := m.checks.apply(res); cerr != nil { // the names were checked before the run: write what ran regardless
			fmt.Fprintf(e.stderr, "warning: %v\n", cerr)
		}
	}
	if e.beforeWrite != nil {
		e.beforeWrite()
	}
	if werr := e.endTrace(tw, m.out, m.write(res)); werr != nil {
		if interrupted {
			return res, fmt.Errorf("%w: %w", errInterrupted, werr)
		}
		return res, werr
	}
	if m.summary != nil {
		m.summary(res)
	}
	if interrupted {
		fmt.Fprintf(e.stderr, "interrupted: wrote what ran to %s\n", m.out.Path)
		return res, errInterrupted
	}
	return res, m.outcome(res, err)
}

// warn says each warning on stderr.
func (e *env) warn(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
}

// execute runs m on its engine through measure, printing the summary
// table and writing result.json and the report into m's folder. Past an
// interrupt, it returns an error when most decisions of a run failed
// or, failing that, an exitStatus of 1 when a check failed.
func (e *env) execute(ctx context.Context, m measured) (*result.Result, error) {
	e.warn(m.warnings)
	if d := m.eng.WallTime(m.cfg, m.targets); d > m.cfg.Span+time.Second {
		fmt.Fprintf(e.stderr, "this run takes about %v of wall time: each algorithm runs for the whole %v, one after the other, then the harness calibrates\n",
			d.Round(time.Second), m.cfg.Span)
	}
	meta := result.NewMeta(m.eng.Mode(), m.seed, e.args)
	meta.Shard = m.shard.meta()
	passes := len(m.targets)
	var wait func(context.Context) bool
	if m.eng.Mode() == "live" {
		passes++ // the calibration, after the algorithms
		wait = m.shard.wait
	}
	return e.measure(ctx, measurement{
		out: m.out, trace: m.trace, wait: wait, passes: passes, progress: m.progress, checks: &m.checks,
		run: func(ctx context.Context, tr call.Tracer, p call.Progress) (*result.Result, error) {
			cfg := m.cfg
			cfg.Trace, cfg.Progress = tr, p
			runs, err := m.eng.Run(ctx, cfg, m.targets)
			if err != nil && !errors.Is(err, context.Canceled) {
				return nil, err
			}
			meta.Warnings = append(result.Warnings(runs), m.shard.lagWarnings(runs)...)
			return bench.NewResult(meta, cfg, runs), err
		},
		write:   func(res *result.Result) error { return e.write(m.out, res, m.noReport) },
		summary: func(res *result.Result) { summary.Live(e.stdout, res.Runs) },
		outcome: func(res *result.Result, _ error) error {
			failed := e.checkOutcome(res)
			if err := result.MostFailed(res.Runs); err != nil {
				return err
			}
			return failed
		},
	})
}

// write prints res's finding and summary table, then writes res into
// out: result.json and, unless noReport, its report. They come first so
// that a run whose folder cannot be written still shows what it
// measured. A probe's finding is its fit's sentence, which it prints
// itself.
func (e *env) write(out *outDir, res *result.Result, noReport bool) error {
	if res.Probe == nil {
		fmt.Fprintln(e.stdout, report.Finding(res))
	}
	if err := report.Table(e.stdout, res); err != nil {
		return err
	}
	if err := out.WriteResult(res); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "results: %s\n", filepath.Join(out.Path, resultFile))
	if noReport {
		return nil
	}
	return e.writeReport(out.Path, res)
}

// writeReport writes the charts, series.csv, .hgrm files and report.html
// and says where the page is.
func (e *env) writeReport(dir string, res *result.Result) error {
	var opts report.Options
	if f, err := fit.ReadResult(dir); err == nil { // a fit of this run: its section of the page
		opts.Fit = f
	}
	if err := report.Write(dir, res, opts); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "report:  %s\n", filepath.Join(dir, report.HTMLFile))
	return nil
}
