package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/bars"
)

// measured is one run to make, checked and ready: the engine, its config
// and targets, and the output folder.
type measured struct {
	eng      engine
	cfg      bench.Config
	targets  []bench.Target
	out      *outDir
	seed     uint64
	noReport bool
	trace    bool     // write requests.csv
	warnings []string // said before the run starts
	shard    shardRun // the part of the schedule played, and when
	checks   checksFlag
	progress string // -progress
}

// execute runs m, prints the summary table, then writes result.json and
// the report into m's folder (also after Ctrl-C, for what ran), and the
// outcome of its -check conditions. It returns errInterrupted after an
// interrupt, an error after writing when most decisions of a run failed
// or, failing that, an exitStatus of 1 when a check failed, or an error
// when writing failed (the table is printed all the same).
func (e *env) execute(ctx context.Context, m measured) (*result.Result, error) {
	for _, w := range m.warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	if m.eng.wall != nil {
		if d := m.eng.wall(m.cfg, m.targets); d > m.cfg.Span+time.Second {
			fmt.Fprintf(e.stderr, "this run takes about %v of wall time: each algorithm runs for the whole %v, one after the other, then the harness calibrates\n",
				d.Round(time.Second), m.cfg.Span)
		}
	}
	meta := result.NewMeta(m.eng.mode, m.seed, e.args)
	meta.Shard = m.shard.meta()
	tw, err := startTrace(m.out, m.trace)
	if err != nil {
		m.out.Abandon()
		return nil, err
	}
	if tw != nil {
		m.cfg.Trace = tw
	}
	if m.eng.mode == "live" && !m.shard.wait(ctx) {
		if tw != nil {
			tw.Abort()
		}
		m.out.Abandon()
		return nil, errInterrupted
	}
	passes := len(m.targets)
	if m.eng.mode == "live" {
		passes++ // the calibration, after the algorithms
	}
	ui := bars.New(e.stderr, passes, m.progress)
	m.cfg.Progress = bars.Progress(ui)
	start := time.Now()
	runs, err := m.eng.run(ctx, m.cfg, m.targets)
	bars.Wait(ui)
	meta.ElapsedNS = int64(time.Since(start))
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		if tw != nil {
			tw.Abort()
		}
		m.out.Abandon()
		return nil, err
	}
	meta.Interrupted = interrupted
	meta.Warnings = append(phraseAll(runs), m.shard.lagWarnings(runs)...)
	for _, w := range meta.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	res := bench.NewResult(meta, m.cfg, runs)
	if err := m.checks.apply(res); err != nil { // the names were checked before the run: write what ran regardless
		fmt.Fprintf(e.stderr, "warning: %v\n", err)
	}
	if e.beforeWrite != nil {
		e.beforeWrite()
	}
	if err := e.endTrace(tw, m.out, e.write(m.out, res, m.noReport)); err != nil {
		if interrupted {
			return res, fmt.Errorf("%w: %w", errInterrupted, err)
		}
		return res, err
	}
	e.liveSummary(runs)
	if interrupted {
		fmt.Fprintf(e.stderr, "interrupted: wrote what ran to %s\n", m.out.Path)
		return res, errInterrupted
	}
	failed := e.checkOutcome(res)
	if err := mostFailed(runs); err != nil {
		return res, err
	}
	return res, failed
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

// mostFailed returns an error naming the runs of which more than half the
// decisions were limiter errors (a backend down or broken), with the
// first error's text: the figures then describe the failure policy, not
// the limiter.
func mostFailed(runs []result.Run) error {
	var bad []string
	for _, r := range runs {
		if r.Offered > 0 && 2*r.Errors > r.Offered {
			bad = append(bad, fmt.Sprintf("%s: %d of %d decisions failed (%s)", r.Label(), r.Errors, r.Offered, r.FirstError))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errors.New("most decisions failed, so the results measure the failure policy, not the limiter: " + strings.Join(bad, "; "))
}

// liveSummary prints, for live runs, what the table does not show: the
// rates, drops and lateness of the sender, latency beside service time,
// and what the harness itself costs.
func (e *env) liveSummary(runs []result.Run) {
	ns := func(v int64) time.Duration { // three or four significant digits
		d := time.Duration(v)
		switch {
		case d >= time.Second:
			return d.Round(time.Millisecond)
		case d >= time.Millisecond:
			return d.Round(time.Microsecond)
		case d >= time.Microsecond:
			return d.Round(10 * time.Nanosecond)
		}
		return d
	}
	var cal *result.Calibration
	for _, r := range runs {
		l := r.Live
		if l == nil {
			continue
		}
		cal = l.Calibration
		fmt.Fprintf(e.stdout, "%s: sent %.0f/s of %.0f/s offered, %d dropped, %.2f%% late; latency p50 %v p99 %v; service p50 %v p99 %v\n",
			r.Algorithm, l.AchievedRatePerS, l.OfferedRatePerS, l.Dropped, l.LatePct,
			ns(r.Latency.P50), ns(r.Latency.P99), ns(l.Service.P50), ns(l.Service.P99))
	}
	if cal != nil {
		fmt.Fprintf(e.stdout, "harness: %.0fns per decision (median; mean %.0fns; a clock read costs %.0fns here, a decision takes two); a no-op limiter's latency p50 %v p99 %v, service p50 %v\n",
			cal.OverheadNS, cal.OverheadMeanNS, cal.ClockReadNS, ns(cal.Latency.P50), ns(cal.Latency.P99), ns(cal.Service.P50))
	}
}
