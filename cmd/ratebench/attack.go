package main

import (
	"context"
	"errors"
	"flag"
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report/summary"
	"github.com/ratebench/ratebench/workload"
)

// headerFlags collects repeated -header "Name: value" flags.
type headerFlags struct{ h http.Header }

func (f *headerFlags) String() string { return "" }

func (f *headerFlags) Set(s string) error {
	name, value, err := httpexec.ParseHeader(s)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), httpexec.ErrBadRequest.Error()+": "))
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, value)
	return nil
}

// attackFlags are the flags of `ratebench attack`.
type attackFlags struct {
	body, algo               string
	cpus, maxInFlight        int
	honor, connsSet, noTrace bool
	policy                   policyFlags
	wl                       workloadFlags
	bounds                   boundsFlags
	http                     clientFlags
	output                   outputFlags
	shard                    shardFlags
	checks                   checksFlag
	progress                 progressFlag
}

// Defaults of attack's flags.
const (
	defaultAttackInFlight = 10000
	maxAttackInFlight     = 1 << 20
)

func (f *attackFlags) register(fs *flag.FlagSet) {
	f.http.conns = httpexec.DefaultConnections
	f.http.register(fs, texts{
		"header":        "a request header, \"Name: value\" (repeatable)",
		"key-header":    "the header that carries each request's key, e.g. X-API-Key (the server limits by it)",
		"connections":   "most connections, opened as the load needs them; with -source-addrs, in all, split evenly across the addresses (at least one each)",
		"reject-status": "comma-separated statuses that mean rejected by the limiter, e.g. 429,503; other non-2xx statuses are errors",
		"client":        "HTTP client: fasthttp (HTTP/1.1, http only; the default for http) or net/http (the default for https; HTTP/2)",
		"source-addrs": "local addresses the requests leave from, so that a server limiting by client IP sees several clients: " +
			"a range 127.0.0.2-127.0.0.9 (or 127.0.0.2-9), a list 127.0.0.2,127.0.0.3,::1, or both; key kN always leaves from address N mod their number " +
			"(another key: by its hash), each address with connections of its own; all must be bound, and reach the server, before the attack starts",
	})
	fs.StringVar(&f.body, "body", "", "a file whose content is sent as every request's body")
	f.wl = workloadFlags{name: "constant", rate: 100}
	f.wl.register(fs, texts{
		"workload": "arrivals: " + strings.Join(workload.Names(), ", ") + " (replay:FILE)",
		"rate":     "requests per second; 0: as fast as -connections connections go, each sending when answered (closed loop, like wrk)",
		"rate-end": "ramp: final rate (default: 3x -rate)",
		"duration": "length of the attack (replay: the whole trace unless given)",
		"keys":     "distinct keys (k0, k1, ...), sent in -key-header; with -source-addrs and no -keys, one per address",
	})
	f.bounds = defaultBounds
	f.bounds.register(fs, texts{
		"max-keys":     "most distinct keys an attack may send (-keys, or a trace's keys): each is measured on its own",
		"max-arrivals": "refuse an attack whose workload expects more requests than this",
	})
	fs.IntVar(&f.maxInFlight, "max-inflight", defaultAttackInFlight, "requests sent or waiting for a connection, and not answered, above which arrivals are dropped and counted")
	fs.BoolVar(&f.honor, "honor-retry-after", false, "after a 429 with Retry-After, hold back that key's arrivals until then (counted as held back)")
	f.policy.register(fs, texts{
		"limit":  "the server's limit L, for the report (default: from its RateLimit-Policy header)",
		"window": "the server's window W (default: from its RateLimit-Policy header)",
		"burst":  "the server's burst B (default: L)",
	})
	fs.StringVar(&f.algo, "algo", "", "the server's algorithm, any case, for the theory in the report (default: unknown)")
	aliasVar(fs, "algos", "algo")
	f.shard.register(fs)
	f.checks.register(fs)
	f.progress.register(fs)
	fs.IntVar(&f.cpus, "cpus", 0, "CPUs the attack uses (GOMAXPROCS; default: all)")
	f.output.register(fs, texts{"out": "output folder: new, empty, or an earlier result's, whose outputs are replaced (default results/<timestamp>-attack)"})
	fs.BoolVar(&f.noTrace, "no-trace", false, "do not write requests.csv (one row per request, in send order)")
}

// attack is one attack, checked: the client and the engine's config.
type attack struct {
	client   *httpexec.Client
	reject   []int
	cfg      live.Config
	target   call.Target
	http     clientFlags // how the requests are sent, for the result
	algo     string
	shard    shardRun
	warnings []string // said before the attack starts
	checks   checksFlag
	progress string // -progress
}

// check checks the flags, parses -source-addrs and, with them and no
// -keys, makes -keys one per address; every error is a usage error.
func (f *attackFlags) check() error {
	var err error
	if f.algo, err = oneAlgo(f.algo); err != nil {
		return err
	}
	if f.wl.name, err = workloadName(f.wl.name); err != nil {
		return err
	}
	if err := f.http.check(); err != nil {
		return err
	}
	sources := f.http.sources
	if sources != nil && !f.wl.keysSet && !f.wl.replay() {
		f.wl.keys = len(sources)
	}
	if err := f.wl.check(); err != nil {
		return err
	}
	if _, err := f.bounds.bounds(); err != nil {
		return err
	}
	rate, keys, p := f.wl.rate, f.wl.keys, f.policy
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0:
		return usagef("-rate %v must be a positive number (or 0 for a closed loop)", rate)
	case rate == 0 && !f.connsSet:
		return usagef("-rate 0 (a closed loop, as fast as the server answers) needs -connections N, e.g. -connections 32")
	case keys > 1 && f.http.keyHeader == "" && sources == nil:
		return usagef("-keys %d needs -key-header NAME: the keys travel in that header (or -source-addrs: each key leaves from one address)", keys)
	case sources != nil && !f.wl.replay() && keys < len(sources):
		return usagef("-keys %d would send from only %d of the %d -source-addrs: give -keys %d or more, or leave -keys out (one key per address)",
			keys, keys, len(sources), len(sources))
	case f.maxInFlight < 1 || f.maxInFlight > maxAttackInFlight:
		return usagef("-max-inflight %d must be between 1 and %d", f.maxInFlight, maxAttackInFlight)
	case f.cpus < 0:
		return usagef("-cpus %d must be >= 1 (0: all)", f.cpus)
	case p.limit < 0 || p.window < 0 || p.burst < 0:
		return usagef("-limit, -window and -burst must be >= 0 (0: from the server's RateLimit-Policy)")
	case f.wl.name == "boundary" && (p.limit == 0 || p.window == 0):
		return usagef("the boundary workload needs the server's limit and window: give -limit and -window")
	case rate == 0 && f.honor:
		return usagef("-honor-retry-after needs a rate: a closed loop (-rate 0) cannot hold requests back")
	case rate == 0 && !slices.Contains([]string{"constant", "poisson", "zipf"}, f.wl.name):
		return usagef("a closed loop (-rate 0) takes only its keys from a workload: constant, poisson or zipf, not %s", f.wl.name)
	}
	if err := f.progress.check(); err != nil {
		return err
	}
	_, err = parseStatuses(f.http.rejectStatus)
	return err
}

// parseStatuses parses -reject-status (see httpexec.ParseStatuses); an
// error is a usage error.
func parseStatuses(s string) ([]int, error) {
	out, err := httpexec.ParseStatuses(s)
	if err != nil {
		return nil, usagef("-reject-status %q: %s", s, strings.TrimPrefix(err.Error(), httpexec.ErrBadRequest.Error()+": "))
	}
	return out, nil
}

// spec is the attack's workload: its arrivals give the instants (the keys
// only, in a closed loop) of requests of one unit each.
func (f *attackFlags) spec() (workload.Spec, error) {
	s := workload.Spec{Rate: f.wl.rate, RateEnd: f.wl.rateEnd, Limit: f.policy.limit, Window: f.policy.window, Cost: 1}
	if s.RateEnd == 0 {
		s.RateEnd = 3 * f.wl.rate
	}
	if f.wl.rate == 0 {
		s.Rate = 1e9 // a closed loop ignores the instants: they only need to outrun the server
	}
	return f.wl.spec(s)
}

// plan checks the flags, reads the workload and builds the client; it
// connects to nothing.
func (f *attackFlags) plan(ctx context.Context) (*attack, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	// The attack's one run is named http, or -algo's when given.
	if err := f.checks.parse([]string{"http", f.algo}); err != nil {
		return nil, err
	}
	spec, err := f.spec()
	if err != nil {
		return nil, err
	}
	sh, err := f.shard.resolve(true)
	if err != nil {
		return nil, err
	}
	src, err := source(spec)
	if err != nil {
		return nil, err
	}
	closed := f.wl.rate == 0
	info, _, err := inspect(ctx, src, bounds{maxKeys: f.bounds.maxKeys, maxArrivals: f.bounds.maxArrivals, closed: closed})
	if err != nil {
		return nil, err
	}
	hc := f.http.config()
	if f.body != "" {
		if hc.Body, err = os.ReadFile(f.body); err != nil {
			return nil, usagef("-body: %v", err)
		}
	}
	client, err := f.http.newClient(hc)
	if err != nil {
		return nil, err
	}
	a := &attack{client: client, http: f.http, algo: f.algo, checks: f.checks, progress: f.progress.mode,
		shard: sh, warnings: append(sh.balance(src), rateUnused(src, spec.Rate, f.wl.rateSet && !closed)...)}
	a.reject, _ = parseStatuses(f.http.rejectStatus) // checked
	p := algorithms.Policy{Limit: f.policy.limit, Window: f.policy.window, Burst: f.policy.burst}
	a.cfg = live.Config{
		Config:      bench.Config{Policy: p, Workload: src, Span: info.Span},
		MaxInFlight: f.maxInFlight, Closed: closed, Connections: f.http.conns, HonorRetryAfter: f.honor,
	}
	a.cfg.Shard, a.cfg.StartAt = sh.sh, sh.at
	if b, ok := src.(*workload.Boundary); ok && b.Align != workload.AlignFirstRequest {
		a.cfg.AlignStart = p.Window // windows start at multiples of W since the epoch
	}
	a.target = call.Target{Name: "http", Backend: hostOf(f.http.url), Replicas: 1}
	if f.algo != "" {
		e, _ := all.Lookup(f.algo)
		a.cfg.Theory = e.Theory
	}
	return a, nil
}

func (e *env) attackCommand() *command {
	c := &command{name: "attack", summary: "load-test an HTTP endpoint in an open loop and write result.json and a report",
		usage: "ratebench attack -url URL [-rate R] [-duration D] [-workload W] [-connections N] [-check COND] [-out DIR]",
		examples: []string{
			"ratebench attack -url http://127.0.0.1:8080/ -rate 300 -duration 10s",
			"ratebench attack -url http://127.0.0.1:8080/ -workload boundary -limit 100 -window 1s",
			"ratebench attack -url http://127.0.0.1:8080/ -check 'rejected_pct>=20, p99<50ms'   # exit 1 when one fails",
		},
		notes:  checkHelp(),
		noArgs: true, fs: flag.NewFlagSet("attack", flag.ContinueOnError)}
	var f attackFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		f.connsSet = isSet(c.fs, "connections")
		f.wl.given(c.fs)
		a, err := f.plan(ctx)
		if err != nil {
			return err
		}
		defer a.client.Close()
		// The server is checked before anything is written: one
		// connection from each source address (or from the system's
		// choice), opened and closed, nothing sent.
		if err := a.client.Check(ctx); err != nil {
			return usageError{err}
		}
		out, err := prepareOut(f.output.out, "attack", runFolder)
		if err != nil {
			return err
		}
		if f.cpus > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.cpus))
		}
		return e.attack(ctx, a, out, f.wl.seed, f.output.noReport, !f.noTrace)
	}
	return c
}

// attack runs the attack on the live engine through measure, printing
// the summary table and writing result.json and the report into out.
func (e *env) attack(ctx context.Context, a *attack, out *outDir, seed uint64, noReport, trace bool) error {
	meta := result.NewMeta("http", seed, e.args)
	meta.Shard = a.shard.meta()
	e.warn(a.warnings)
	var pol algorithms.Policy
	_, err := e.measure(ctx, measurement{
		out: out, trace: trace, wait: a.shard.wait, passes: 1, progress: a.progress, checks: &a.checks,
		run: func(ctx context.Context, tr call.Tracer, p call.Progress) (*result.Result, error) {
			cfg := a.cfg
			cfg.Trace, cfg.Progress = tr, p
			exec := httpexec.NewExecutor(a.client, cfg.Connections, cfg.MaxInFlight, a.reject)
			run, used, err := live.RunExecutor(ctx, cfg, a.target, exec)
			exec.Close()
			if err != nil && !errors.Is(err, context.Canceled) {
				return nil, err
			}
			pol = used
			h := run.HTTP
			a.http.stamp(h, a.client)
			h.Connections, h.ServerAlgorithm, h.RejectStatuses = a.client.Dials(), a.algo, a.reject
			runs := []result.Run{run}
			meta.Warnings = append(result.Warnings(runs), a.shard.lagWarnings(runs)...)
			w := cfg.Workload.Record()
			w["url"] = a.http.url
			return &result.Result{Meta: meta, Policy: result.PolicyOf(pol), Workload: w, Runs: runs}, err
		},
		write:   func(res *result.Result) error { return e.write(out, res, noReport) },
		summary: func(res *result.Result) { summary.Attack(e.stdout, res.Runs[0], pol) },
		outcome: func(res *result.Result, _ error) error { return e.checkOutcome(res) },
	})
	return err
}

// hostOf is an attack's backend name: its URL's host.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return strings.TrimSuffix(u.Host, ":")
}
