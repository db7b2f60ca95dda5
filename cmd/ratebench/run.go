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
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/workload"
)

// runFlags are the flags of `ratebench run`.
type runFlags struct {
	algos, workload, mode, out, scenario            string
	rate, rateEnd, zipfS                            float64
	limit, burst, cost                              int64
	window, duration, burstEvery, on, off           time.Duration
	keys, replicas, workers, maxInFlight, burstSize int
	seed                                            uint64
	noReport                                        bool
	backend                                         backendFlags
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.algos, "algos", "", "comma-separated algorithms (default: all; see ratebench list)")
	fs.StringVar(&f.workload, "workload", "poisson", "workload: "+strings.Join(workload.Names(), ", ")+" (replay:FILE)")
	fs.Float64Var(&f.rate, "rate", 0, "arrivals per second (default: 1.5x the limit)")
	fs.Float64Var(&f.rateEnd, "rate-end", 0, "ramp: final rate (default: 3x the limit)")
	fs.Float64Var(&f.zipfS, "zipf-s", 0, "zipf: exponent s > 1 (default 1.1)")
	fs.Int64Var(&f.limit, "limit", 100, "limit L: cost units per window")
	fs.DurationVar(&f.window, "window", time.Second, "window W")
	fs.Int64Var(&f.burst, "burst", 0, "burst B (default: L)")
	fs.Int64Var(&f.cost, "cost", 1, "cost of each arrival")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "length of the run")
	fs.IntVar(&f.keys, "keys", 1, "distinct keys, each limited on its own")
	fs.IntVar(&f.replicas, "replicas", 1, "app replicas the arrivals are spread over, each with its own limiter state")
	fs.StringVar(&f.mode, "mode", "sim", "engine: sim (virtual time, deterministic) or live (real goroutines and clock, open loop)")
	fs.IntVar(&f.workers, "workers", bench.DefaultWorkers(), fmt.Sprintf("live mode: goroutines calling the limiters, at most %d", bench.MaxWorkers))
	fs.IntVar(&f.maxInFlight, "max-inflight", bench.DefaultMaxInFlight, "live mode: arrivals sent and not yet done above which new ones are dropped (and counted)")
	f.backend.register(fs)
	fs.Uint64Var(&f.seed, "seed", 1, "workload seed")
	fs.StringVar(&f.out, "out", "", "output folder (default results/<timestamp>-<workload>)")
	fs.StringVar(&f.scenario, "scenario", "", "YAML or JSON matrix of workloads x algorithms x policies ('default': the built-in comparison)")
	fs.IntVar(&f.burstSize, "burst-size", 0, "burst workload: arrivals per burst")
	fs.DurationVar(&f.burstEvery, "burst-every", 0, "burst workload: time between bursts")
	fs.DurationVar(&f.on, "on", 0, "burst workload: on period (with -off)")
	fs.DurationVar(&f.off, "off", 0, "burst workload: off period")
	fs.BoolVar(&f.noReport, "no-report", false, "write result.json only")
}

// policy validates the policy flags.
func (f *runFlags) policy() (algorithms.Policy, error) {
	p, err := algorithms.Policy{Limit: f.limit, Window: f.window, Burst: f.burst}.Validate()
	if err != nil {
		return p, usagef("%v", err)
	}
	if f.burst < 0 {
		return p, usagef("-burst %d must be >= 1", f.burst)
	}
	return p, nil
}

// spec builds and checks the workload, opening a replay file once so that
// a missing one is an error before anything is written.
func (f *runFlags) spec(p algorithms.Policy) (workload.Spec, error) {
	if math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || f.rate < 0 {
		return workload.Spec{}, usagef("-rate %v must be a positive number", f.rate)
	}
	if f.duration <= 0 && !strings.HasPrefix(f.workload, "replay:") {
		return workload.Spec{}, usagef("-duration %v must be > 0", f.duration)
	}
	if f.keys < 1 {
		return workload.Spec{}, usagef("-keys %d must be >= 1", f.keys)
	}
	rate := f.rate
	if rate == 0 {
		rate = 1.5 * p.Rate()
	}
	rateEnd := f.rateEnd
	if rateEnd == 0 {
		rateEnd = 3 * p.Rate()
	}
	s := workload.Spec{
		Name: f.workload, Rate: rate, RateEnd: rateEnd, Duration: f.duration, Keys: f.keys,
		ZipfS: f.zipfS, Cost: f.cost, Seed: f.seed, BurstSize: f.burstSize, BurstEvery: f.burstEvery,
		On: f.on, Off: f.off, Limit: p.Limit, Window: p.Window,
	}
	stream, err := workload.New(s)
	if err != nil {
		return s, usageError{err}
	}
	if c, ok := stream.(interface{ Close() error }); ok {
		c.Close()
	}
	return s, nil
}

// plan turns the flags into an engine config and its targets, and the
// function that releases the backend's clients.
func (f *runFlags) plan() (bench.Config, []bench.Target, func() error, error) {
	switch {
	case f.mode != "sim" && f.mode != "live":
		return bench.Config{}, nil, nil, usagef("-mode %q: want sim or live", f.mode)
	case f.replicas < 1:
		return bench.Config{}, nil, nil, usagef("-replicas %d must be >= 1", f.replicas)
	case f.workers < 1 || f.workers > bench.MaxWorkers:
		return bench.Config{}, nil, nil, usagef("-workers %d must be between 1 and %d", f.workers, bench.MaxWorkers)
	case f.maxInFlight < 1:
		return bench.Config{}, nil, nil, usagef("-max-inflight %d must be >= 1", f.maxInFlight)
	}
	p, err := f.policy()
	if err != nil {
		return bench.Config{}, nil, nil, err
	}
	s, err := f.spec(p)
	if err != nil {
		return bench.Config{}, nil, nil, err
	}
	var names []string
	if f.algos != "" {
		names = strings.Split(f.algos, ",")
	}
	targets, closeFn, err := f.backend.targets(names, p, f.keys, f.replicas, f.mode == "live", f.workers)
	if err != nil {
		return bench.Config{}, nil, nil, err
	}
	return bench.Config{Policy: p, Workload: s, Reference: bench.Reference(p, f.keys)}, targets, closeFn, nil
}

func (e *env) runCommand() *command {
	c := &command{name: "run", summary: "drive algorithms with a workload and write result.json and a report", fs: flag.NewFlagSet("run", flag.ContinueOnError)}
	var f runFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		if f.scenario != "" {
			if f.mode != "sim" {
				return usagef("-scenario runs in sim mode only; drop -mode %s", f.mode)
			}
			return e.runScenario(ctx, f.scenario, f.out, f.noReport)
		}
		cfg, targets, closeFn, err := f.plan()
		if err != nil {
			return err
		}
		defer closeFn()
		_, err = e.executeWith(ctx, f.engine(), cfg, targets, outDir(f.out, f.workload), f.seed, f.noReport)
		return err
	}
	return c
}

// outDir is dir, or results/<timestamp>-<name> with a file-safe name.
func outDir(dir, name string) string {
	if dir != "" {
		return dir
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == ':' || r == '\\' || r == '.' {
			return '-'
		}
		return r
	}, filepath.Base(name))
	return filepath.Join("results", time.Now().Format("20060102-150405")+"-"+name)
}

// engine is how execute runs the targets: the sim or the live engine.
type engine struct {
	mode string
	run  func(context.Context, bench.Config, []bench.Target) ([]bench.Run, error)
}

// engine returns the engine the flags ask for.
func (f *runFlags) engine() engine {
	if f.mode != "live" {
		return engine{"sim", bench.Simulate}
	}
	workers, maxInFlight := f.workers, f.maxInFlight
	return engine{"live", func(ctx context.Context, cfg bench.Config, targets []bench.Target) ([]bench.Run, error) {
		return bench.Live(ctx, bench.LiveConfig{Config: cfg, Workers: workers, MaxInFlight: maxInFlight}, targets)
	}}
}

// execute runs the sim engine, writes DIR/result.json (also after Ctrl-C,
// for what ran) and prints the summary table.
func (e *env) execute(ctx context.Context, cfg bench.Config, targets []bench.Target, dir string, seed uint64, noReport bool) (*bench.Result, error) {
	return e.executeWith(ctx, engine{"sim", bench.Simulate}, cfg, targets, dir, seed, noReport)
}

// executeWith is execute on the given engine; a live run's warnings go to
// stderr and to meta.warnings.
func (e *env) executeWith(ctx context.Context, eng engine, cfg bench.Config, targets []bench.Target, dir string, seed uint64, noReport bool) (*bench.Result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	meta := bench.NewMeta(eng.mode, seed, e.args)
	bars := newBars(e.stderr)
	cfg.Progress = bars.progress()
	start := time.Now()
	runs, err := eng.run(ctx, cfg, targets)
	bars.wait()
	meta.ElapsedNS = int64(time.Since(start))
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		return nil, err
	}
	meta.Interrupted = interrupted
	meta.Warnings = bench.LiveWarnings(runs)
	for _, w := range meta.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	res := bench.NewResult(meta, cfg, runs)
	if err := res.WriteFile(filepath.Join(dir, "result.json")); err != nil {
		return nil, err
	}
	if err := e.render(dir, res, noReport); err != nil {
		return res, err
	}
	e.liveSummary(runs)
	if interrupted {
		fmt.Fprintf(e.stderr, "interrupted: wrote what ran to %s\n", dir)
	}
	return res, nil
}

// liveSummary prints, for live runs, what the table does not show: the
// rates, drops and lateness of the sender, latency beside service time,
// and what the harness itself costs.
func (e *env) liveSummary(runs []bench.Run) {
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
	var cal *bench.Calibration
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
