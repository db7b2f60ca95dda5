package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/engine"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/workload"
)

// Defaults of the bounds every measuring command takes.
const (
	// defaultMaxKeys bounds the distinct keys of a run: each costs tens
	// to hundreds of bytes per algorithm, in the limiter and the measures.
	defaultMaxKeys = 1 << 20
	// defaultMaxArrivals bounds the arrivals a run may expect: about a
	// minute of the sim engine, and far more than a live run can send.
	defaultMaxArrivals = 1e9
)

// runFlags are the flags of `ratebench run`.
type runFlags struct {
	algos, mode, scenario string
	cost                  int64
	replicas, workers     int
	maxInFlight           int
	trace                 bool
	policy                policyFlags
	wl                    workloadFlags
	bounds                boundsFlags
	output                outputFlags
	backend               backendFlags
	shard                 shardFlags
	checks                checksFlag
	progress              progressFlag
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.algos, "algos", "", "comma-separated algorithms, any case (default: all; see ratebench list)")
	aliasVar(fs, "algo", "algos")
	f.policy = defaultPolicy
	f.policy.register(fs, texts{"limit": "limit L: cost units per window"})
	fs.Int64Var(&f.cost, "cost", 1, "cost of each arrival, >= 1")
	f.wl = workloadFlags{name: "poisson"}
	f.wl.register(fs, texts{
		"workload": "workload: " + strings.Join(workload.Names(), ", ") + " (replay:FILE)",
		"rate":     "arrivals per second (default: 1.5x the limit)",
		"rate-end": "ramp: final rate (default: 3x the limit)",
		"duration": "length of the run (replay: the whole trace unless given)",
		"keys":     "distinct keys, each limited on its own (replay: the trace's own keys)",
	})
	f.bounds = defaultBounds
	f.bounds.register(fs, texts{
		"max-keys":     "most distinct keys a run may hold (-keys, or a trace's keys)",
		"on-full":      "a workload with more keys than -max-keys: reject it (exit 2), or evict-lossy (the limiters hold -max-keys keys and forget keys with state to take new ones, counted as lossy)",
		"max-arrivals": "refuse a run whose workload expects more arrivals than this",
	})
	fs.IntVar(&f.replicas, "replicas", 1, "app replicas behind a round-robin balancer: arrival i of the whole schedule goes to replica i mod N, each with its own limiter state (on a shared backend they share it)")
	fs.StringVar(&f.mode, "mode", "sim", "engine: sim (virtual time, deterministic) or live (real goroutines and clock, open loop)")
	fs.IntVar(&f.workers, "workers", live.DefaultWorkers(), fmt.Sprintf("live mode: goroutines calling the limiters, at most %d", live.MaxWorkers))
	fs.IntVar(&f.maxInFlight, "max-inflight", live.DefaultMaxInFlight, "live mode: arrivals sent and not yet done above which new ones are dropped (and counted)")
	f.backend.register(fs)
	fs.StringVar(&f.backend.prefix, "prefix", "", "Redis key prefix or SQLite scope of the limiters' state: processes with the same one share it, and a run inherits what an earlier one left under it (default: a fresh one per run; live shards on a shared backend: ratebench:shards:<-start-at in Unix ns>)")
	f.output.register(fs, texts{"out": "output folder: new, empty, or an earlier result's, whose outputs are replaced (default results/<timestamp>-<workload>)"})
	fs.StringVar(&f.scenario, "scenario", "", "YAML or JSON matrix of workloads x algorithms x policies ('default': the built-in comparison)")
	f.shard.register(fs)
	f.checks.register(fs)
	f.progress.register(fs)
	fs.BoolVar(&f.trace, "trace", false, "also write requests.csv: one row per request, in send order (replayable with -workload replay:FILE)")
}

// bounds are the limits every measuring command checks a workload
// against before it runs.
type bounds struct {
	maxKeys     int
	lossy       bool
	maxArrivals float64
	closed      bool // a closed loop: the arrivals give only keys, at the server's pace
}

// bounds checks -max-keys, -on-full and -max-arrivals.
func (f *boundsFlags) bounds() (bounds, error) {
	b := bounds{maxKeys: f.maxKeys, maxArrivals: f.maxArrivals}
	switch {
	case f.maxKeys < 1:
		return b, usagef("-max-keys %d must be >= 1", f.maxKeys)
	case f.onFull != "reject" && f.onFull != "evict-lossy":
		return b, usagef("-on-full %q: want reject or evict-lossy", f.onFull)
	case !(f.maxArrivals >= 1) || math.IsInf(f.maxArrivals, 0):
		return b, usagef("-max-arrivals %v must be a number >= 1", f.maxArrivals)
	}
	b.lossy = f.onFull == "evict-lossy"
	return b, nil
}

// canonical puts -algos and -workload in their own names, refusing
// unknown ones with the closest.
func (f *runFlags) canonical() error {
	names, err := algoNames(f.algos)
	if err != nil {
		return err
	}
	f.algos = strings.Join(names, ",")
	f.wl.name, err = workloadName(f.wl.name)
	return err
}

// spec builds and checks the workload; the rates default to 1.5x and 3x
// p's.
func (f *runFlags) spec(p algorithms.Policy) (workload.Spec, error) {
	if r := f.wl.rate; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 || (r == 0 && f.wl.rateSet) {
		return workload.Spec{}, usagef("-rate %v must be a positive number of arrivals per second (leave it out for 1.5x the limit)", r)
	}
	if err := f.wl.check(); err != nil {
		return workload.Spec{}, err
	}
	if f.cost < 1 {
		return workload.Spec{}, usagef("-cost %d must be >= 1", f.cost)
	}
	rate, rateEnd := f.wl.rate, f.wl.rateEnd
	if rate == 0 {
		rate = 1.5 * p.Rate()
	}
	if rateEnd == 0 {
		rateEnd = 3 * p.Rate()
	}
	return f.wl.spec(workload.Spec{Rate: rate, RateEnd: rateEnd, Cost: f.cost, Limit: p.Limit, Window: p.Window})
}

// source makes the Source of s: a bad field is a usage error that names
// its flag.
func source(s workload.Spec) (workload.Source, error) {
	src, err := s.Source()
	if err != nil {
		return nil, workloadError(err)
	}
	return src, nil
}

// inspect reads what the workload holds (a trace: the whole file, once)
// and checks it against the bounds: a bad trace row, too many keys or too
// many arrivals are usage errors. For a trace, its Source's Keys becomes
// its own key count, as info.Keys says for every workload. refKeys bounds
// the distinct keys, for the exact reference.
func inspect(ctx context.Context, src workload.Source, b bounds) (info workload.Info, refKeys int, err error) {
	trace, replay := src.(*workload.Replay)
	info, err = workload.Inspect(ctx, src, b.maxKeys)
	switch {
	case errors.Is(err, workload.ErrInvalid):
		return info, 0, workloadError(err)
	case err != nil:
		return info, 0, err
	case info.Arrivals > b.maxArrivals && !b.closed:
		return info, 0, usagef("the workload expects about %.4g arrivals, more than -max-arrivals %.4g: lower -rate or -duration, or raise -max-arrivals", info.Arrivals, b.maxArrivals)
	case replay && info.KeysOver && !b.lossy:
		return info, 0, usagef("%s has more than %d distinct keys, and -max-keys is %d: raise -max-keys, or choose -on-full evict-lossy", trace.Record()["name"], b.maxKeys, b.maxKeys)
	case !replay && info.Keys > b.maxKeys && !b.lossy:
		return info, 0, usagef("-keys %d is more than -max-keys %d: raise -max-keys, or choose -on-full evict-lossy", info.Keys, b.maxKeys)
	}
	refKeys = info.Keys
	if replay {
		trace.Keys = info.Keys
		if info.KeysOver { // every key seen once at most: the arrivals bound them
			refKeys = int(min(info.Arrivals, math.MaxInt32))
		}
	}
	return info, refKeys, nil
}

// costWarnings says when the cost is more than an algorithm can ever admit
// at once (B for buckets, L for windows), so that it rejects every
// request (see all.NeverAdmit).
func costWarnings(names []string, cost int64, p algorithms.Policy) []string {
	over := all.NeverAdmit(names, cost, p)
	if len(over) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("-cost %d is more than %s can ever admit at once (burst %d, limit %d): they will reject every request",
		cost, strings.Join(over, ", "), p.Burst, p.Limit)}
}

// plan checks the flags, reads the workload and prepares the output
// folder, then connects the targets: everything a run needs, with nothing
// written unless it returns without an error.
func (f *runFlags) plan(ctx context.Context) (measured, func() error, error) {
	switch {
	case f.mode != "sim" && f.mode != "live":
		return measured{}, nil, usagef("-mode %q: want sim or live", f.mode)
	case f.replicas < 1:
		return measured{}, nil, usagef("-replicas %d must be >= 1", f.replicas)
	case f.workers < 1 || f.workers > live.MaxWorkers:
		return measured{}, nil, usagef("-workers %d must be between 1 and %d", f.workers, live.MaxWorkers)
	case f.maxInFlight < 1:
		return measured{}, nil, usagef("-max-inflight %d must be >= 1", f.maxInFlight)
	}
	b, err := f.bounds.bounds()
	if err != nil {
		return measured{}, nil, err
	}
	p, err := f.policy.policy()
	if err != nil {
		return measured{}, nil, err
	}
	s, err := f.spec(p)
	if err != nil {
		return measured{}, nil, err
	}
	sh, err := f.shard.resolve(f.mode == "live")
	if err != nil {
		return measured{}, nil, err
	}
	if err := f.backend.check(); err != nil {
		return measured{}, nil, err
	}
	if err := f.sharedState(sh); err != nil {
		return measured{}, nil, err
	}
	src, err := source(s)
	if err != nil {
		return measured{}, nil, err
	}
	info, refKeys, err := inspect(ctx, src, b)
	if err != nil {
		return measured{}, nil, err
	}
	var names []string
	if f.algos != "" {
		names = strings.Split(f.algos, ",")
	}
	if err := f.checks.parse(orAll(names)); err != nil {
		return measured{}, nil, err
	}
	if err := f.progress.check(); err != nil {
		return measured{}, nil, err
	}
	out, err := prepareOut(f.output.out, f.wl.name, runFolder)
	if err != nil {
		return measured{}, nil, err
	}
	targets, closeFn, err := f.backend.targets(names, p, info.Keys, f.replicas, f.mode == "live", f.workers, b)
	if err != nil {
		out.Abandon()
		return measured{}, nil, err
	}
	m := measured{
		eng:      f.engine(sh.at),
		cfg:      bench.Config{Policy: p, Workload: src, Span: info.Span, Reference: backend.Reference(p, refKeys), Shard: sh.sh},
		targets:  targets,
		out:      out,
		seed:     f.wl.seed,
		noReport: f.output.noReport,
		trace:    f.trace,
		warnings: append(append(costWarnings(names, f.cost, p), sh.balance(src)...), rateUnused(src, s.Rate, f.wl.rateSet)...),
		shard:    sh,
		checks:   f.checks,
		progress: f.progress.mode,
	}
	return m, closeFn, nil
}

// rateUnused is a warning when -rate was given to a workload that sets
// its own arrivals (boundary, bursts of -burst-size, a replay), which
// would otherwise pass in silence.
func rateUnused(src workload.Source, rate float64, rateSet bool) []string {
	p := src.Record()
	if _, uses := p["rate"]; uses || !rateSet {
		return nil
	}
	name := p["name"]
	if _, replay := src.(*workload.Replay); replay {
		name = "replay" // its Record names the trace too
	}
	return []string{fmt.Sprintf("-rate %g is not used: the %s workload sets its own arrivals", rate, name)}
}

// sharedState checks -prefix against the backend and the shard, and names
// the state of live shards on a shared backend after -start-at unless
// -prefix names it, so that shards started together share one state and
// never an earlier run's. Sim shards on a shared backend are refused: each
// plays its virtual instants as fast as it can, so one shard's would reach
// the shared state out of order with another's.
func (f *runFlags) sharedState(sh shardRun) error {
	shared := f.backend.shared()
	switch {
	case f.backend.prefix != "" && !shared:
		return usagef("-prefix names state on a shared backend; -backend %s keeps it in the process", f.backend.backend)
	case shared && f.mode == "sim" && !sh.sh.Whole():
		return usagef("-shard %s: sim shards on a shared backend would reach its state with their virtual instants out of order; use -mode live, or -backend memory", sh.sh)
	case shared && !sh.sh.Whole() && f.backend.prefix == "":
		f.backend.prefix = fmt.Sprintf("ratebench:shards:%d", sh.at.UnixNano())
	}
	return nil
}

func (e *env) runCommand() *command {
	c := &command{name: "run", summary: "drive algorithms with a workload and write result.json and a report",
		usage: "ratebench run [-algos A,B] [-workload W] [-limit L -window W] [-mode sim|live] [-check COND] [-out DIR]",
		examples: []string{
			"ratebench run -algos gcra,fixed-window -workload boundary        # the 2x at a window edge",
			"ratebench run -scenario default                                   # every algorithm, four workloads (make run)",
			"ratebench run -algos gcra -mode live -backend redis://127.0.0.1:6379 -check 'p99<2ms'",
		},
		notes: checkHelp(), noArgs: true, fs: flag.NewFlagSet("run", flag.ContinueOnError)}
	var f runFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		f.wl.given(c.fs)
		if err := f.canonical(); err != nil {
			return err
		}
		if f.scenario != "" {
			if f.mode != "sim" {
				return usagef("-scenario runs in sim mode only; drop -mode %s", f.mode)
			}
			if f.trace {
				return usagef("-trace writes one run's requests; it does not go with -scenario")
			}
			if isSet(c.fs, "shard") || isSet(c.fs, "start-at") {
				return usagef("-shard and -start-at split one run's schedule; they do not go with -scenario")
			}
			if isSet(c.fs, "prefix") {
				return usagef("-prefix names one run's shared state; it does not go with -scenario")
			}
			b, err := f.bounds.bounds()
			if err != nil {
				return err
			}
			return e.runScenario(ctx, f.scenario, f.output.out, f.output.noReport, b, f.checks)
		}
		m, closeFn, err := f.plan(ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		_, err = e.execute(ctx, m)
		return err
	}
	return c
}

// engine is the run's engine; a live run's first pass starts at start
// when it is not zero, and every later pass in its slot after it.
func (f *runFlags) engine(start time.Time) engine.Engine {
	if f.mode != "live" {
		return engine.Sim
	}
	return engine.Live(f.workers, f.maxInFlight, start)
}
