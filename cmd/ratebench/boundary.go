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

// why says, per algorithm, why the boundary attack gets what it gets.
var why = map[string]string{
	"token-bucket":        "a full bucket gives B at once, then refills L per W: at most B + L in any W",
	"gcra":                "the same as a token bucket: the TAT allows B at once, then one per W/L",
	"leaky-bucket":        "a meter with room for B, leaking L per W: the same as a token bucket",
	"leaky-queue":         "a queue serves one per W/L whatever arrives: at most L served in any W",
	"fixed-window":        "the counter restarts at each window edge, so L just before it and L just after both fit: 2L in a span far shorter than W",
	"sliding-log":         "it counts the exact trailing W, so the second L waits until the first has left the window",
	"sliding-counter":     "the previous window still weighs nearly L just after the edge, so the second L is refused",
	"fixed-window-first":  "its window opened at the key's first request, not at the edge, so both halves fall in one window; an attack timed on the opening (-align first-request) gets 2L - 1",
	"sliding-log-all":     "it counts the exact trailing W, rejected requests included: the second L is refused, and counted",
	"sliding-counter-all": "the previous window still weighs nearly L just after the edge, so the second L is refused, and counted",
	"token-bucket-debt":   "a token bucket (at most B + L); the rejected half also takes tokens, down to -B",
	"nginx-limit-req":     "a leaky bucket of burst+1 on a 1ms clock, draining L per W: at most B + L at W = 1s",
	"httprate":            "a sliding counter whose estimate is rounded: the previous window's L refuse the second half until they weigh below L - 1/2, W/2L after the edge, when one more fits; timed on the edges' last nanoseconds, 2L",
	"haproxy-req-rate":    "its period opened at the first request, not at the edge, and every request counts, so the second half is refused; timed on a period's last millisecond, L then L - floor(L/P) a period later: 2L when P > L",
	"x-rate":              "x/time/rate is a token bucket: at most B + L in any W",
	"uber":                "a pacer spaces requests by W/L (plus its slack)",
}

func (e *env) boundaryCommand() *command {
	c := &command{name: "boundary", summary: "run the window-boundary attack on every in-memory algorithm and explain the result",
		examples: []string{
			"ratebench boundary                                 # fixed-window lets 2x its limit through at the edge",
			"ratebench boundary -algos fixed-window,sliding-log -limit 50 -window 500ms",
		}, fs: flag.NewFlagSet("boundary", flag.ContinueOnError)}
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
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		p, err := pol.policy()
		if err != nil || pol.burst < 0 {
			return usagef("invalid policy: limit %d, window %v, burst %d", pol.limit, pol.window, pol.burst)
		}
		if windows < 2 {
			return usagef("-windows %d must be >= 2", windows)
		}
		var names []string // a shared backend's own default set
		if !backendFl.shared() {
			names = inMemoryNames()
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

// inMemoryNames lists the algorithms that are not peers.
func inMemoryNames() []string {
	var names []string
	for _, a := range all.Entries() {
		if !a.Peer {
			names = append(names, a.Name)
		}
	}
	return names
}

// explain prints what the attack did to each algorithm, and why.
func (e *env) explain(res *result.Result) {
	fmt.Fprintf(e.stdout, "\nThe attack: %d requests just before a window edge and %d just after, every few windows.\n", res.Policy.Limit, res.Policy.Limit)
	for i, line := range report.Reading(res) {
		fmt.Fprintf(e.stdout, "- %s\n  why: %s\n", line, why[res.Runs[i].Algorithm])
	}
}
