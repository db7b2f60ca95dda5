package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/engine"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/workload"
)

func (e *env) boundaryCommand() *command {
	c := &command{name: "boundary", summary: "run the window-boundary attack on every in-memory algorithm and explain the result",
		examples: []string{
			"ratebench boundary                                 # fixed-window lets 2x its limit through at the edge",
			"ratebench boundary -algos fixed-window,sliding-log -limit 50 -window 500ms",
		}, noArgs: true, fs: flag.NewFlagSet("boundary", flag.ContinueOnError)}
	var (
		windows   int
		algos     string
		pol       = defaultPolicy
		output    outputFlags
		backendFl backendFlags
	)
	backendFl.register(c.fs)
	pol.register(c.fs, texts{"limit": "limit L per window"})
	c.fs.IntVar(&windows, "windows", 10, "length of the run in windows")
	c.fs.StringVar(&algos, "algos", "", "comma-separated algorithms, any case (default: every in-memory one)")
	aliasVar(c.fs, "algo", "algos")
	output.register(c.fs, texts{"out": "output folder (default results/<timestamp>-boundary)"})
	c.run = func(ctx context.Context, args []string) error {
		p, err := pol.policy()
		if err != nil || pol.burst < 0 {
			return usagef("invalid policy: limit %d, window %v, burst %d", pol.limit, pol.window, pol.burst)
		}
		if windows < 2 {
			return usagef("-windows %d must be >= 2", windows)
		}
		var names []string // a shared backend's own default set
		if !backendFl.shared() {
			names = all.InMemoryNames()
		}
		if algos != "" {
			if names, err = algoNames(algos); err != nil {
				return err
			}
		}
		if p.Window > math.MaxInt64/time.Duration(windows) {
			return usagef("-windows %d of %v is too long a run", windows, p.Window)
		}
		spec := workload.Spec{Name: "boundary", Limit: p.Limit, Window: p.Window, Duration: time.Duration(windows) * p.Window, Keys: 1, Cost: 1, Rate: p.Rate()}
		if err := backendFl.check(); err != nil {
			return err
		}
		bd := bounds{maxKeys: 1, maxArrivals: defaultMaxArrivals}
		src, err := source(spec)
		if err != nil {
			return err
		}
		info, _, err := inspect(ctx, src, bd)
		if err != nil {
			return err
		}
		o, err := prepareOut(output.out, "boundary", runFolder)
		if err != nil {
			return err
		}
		targets, closeFn, err := backendFl.targets(names, p, 1, 1, false, 1, bd)
		if err != nil {
			o.Abandon()
			return err
		}
		defer closeFn()
		cfg := bench.Config{Policy: p, Workload: src, Span: info.Span, Reference: backend.Reference(p, 1)}
		res, err := e.execute(ctx, measured{eng: engine.Sim, cfg: cfg, targets: targets, out: o, noReport: output.noReport})
		if res != nil && err == nil {
			e.explain(res)
		}
		return err
	}
	return c
}

// explain prints what the attack did to each algorithm, and why.
func (e *env) explain(res *result.Result) {
	for _, line := range report.BoundaryExplanation(res) {
		fmt.Fprintln(e.stdout, line)
	}
}
