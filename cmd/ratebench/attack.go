package main

import (
	"context"
	"errors"
	"flag"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

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
	url, method, body, workload, keyHeader, out, algo, client string
	rejectStatus, sourceAddrs                                 string
	sources                                                   []netip.Addr // -source-addrs, parsed by check
	header                                                    headerFlags
	rate, rateEnd, zipfS                                      float64
	duration, timeout, window, burstEvery, on, off            time.Duration
	keys, maxInFlight, conns, burstSize, cpus, maxKeys        int
	limit, burst                                              int64
	maxArrivals                                               float64
	seed                                                      uint64
	honor, noReport, insecure, connsSet, durationSet, noTrace bool
	keysSet, rateSet                                          bool
	phase                                                     phaseFlags
	shard                                                     shardFlags
	checks                                                    checksFlag
	progress                                                  progressFlag
}

// Defaults of attack's flags.
const (
	defaultAttackInFlight = 10000
	maxAttackInFlight     = 1 << 20
)

func (f *attackFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "the http:// or https:// URL every request goes to (required)")
	fs.StringVar(&f.method, "method", http.MethodGet, "request method")
	fs.Var(&f.header, "header", "a request header, \"Name: value\" (repeatable)")
	fs.StringVar(&f.body, "body", "", "a file whose content is sent as every request's body")
	fs.StringVar(&f.workload, "workload", "constant", "arrivals: "+strings.Join(workload.Names(), ", ")+" (replay:FILE)")
	fs.Float64Var(&f.rate, "rate", 100, "requests per second; 0: as fast as -connections connections go, each sending when answered (closed loop, like wrk)")
	fs.Float64Var(&f.rateEnd, "rate-end", 0, "ramp: final rate (default: 3x -rate)")
	fs.Float64Var(&f.zipfS, "zipf-s", 0, "zipf: exponent s > 1 (default 1.1)")
	durationVar(fs, &f.duration, "duration", 10*time.Second, "length of the attack (replay: the whole trace unless given)")
	fs.IntVar(&f.keys, "keys", 1, "distinct keys (k0, k1, ...), sent in -key-header; with -source-addrs and no -keys, one per address")
	fs.IntVar(&f.maxKeys, "max-keys", defaultMaxKeys, "most distinct keys an attack may send (-keys, or a trace's keys): each is measured on its own")
	fs.Float64Var(&f.maxArrivals, "max-arrivals", defaultMaxArrivals, "refuse an attack whose workload expects more requests than this")
	fs.StringVar(&f.keyHeader, "key-header", "", "the header that carries each request's key, e.g. X-API-Key (the server limits by it)")
	fs.IntVar(&f.maxInFlight, "max-inflight", defaultAttackInFlight, "requests sent or waiting for a connection, and not answered, above which arrivals are dropped and counted")
	fs.IntVar(&f.conns, "connections", httpexec.DefaultConnections, "most connections, opened as the load needs them; with -source-addrs, in all, split evenly across the addresses (at least one each)")
	durationVar(fs, &f.timeout, "timeout", httpexec.DefaultTimeout, "bound on each request, connection included")
	fs.BoolVar(&f.honor, "honor-retry-after", false, "after a 429 with Retry-After, hold back that key's arrivals until then (counted as held back)")
	fs.Int64Var(&f.limit, "limit", 0, "the server's limit L, for the report (default: from its RateLimit-Policy header)")
	durationVar(fs, &f.window, "window", 0, "the server's window W (default: from its RateLimit-Policy header)")
	fs.Int64Var(&f.burst, "burst", 0, "the server's burst B (default: L)")
	fs.StringVar(&f.algo, "algo", "", "the server's algorithm, any case, for the theory in the report (default: unknown)")
	aliasVar(fs, "algos", "algo")
	fs.StringVar(&f.rejectStatus, "reject-status", "429", "comma-separated statuses that mean rejected by the limiter, e.g. 429,503; other non-2xx statuses are errors")
	fs.StringVar(&f.client, "client", "", "HTTP client: fasthttp (HTTP/1.1, http only; the default for http) or net/http (the default for https; HTTP/2)")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server's TLS certificate")
	fs.StringVar(&f.sourceAddrs, "source-addrs", "", "local addresses the requests leave from, so that a server limiting by client IP sees several clients: "+
		"a range 127.0.0.2-127.0.0.9 (or 127.0.0.2-9), a list 127.0.0.2,127.0.0.3,::1, or both; key kN always leaves from address N mod their number "+
		"(another key: by its hash), each address with connections of its own; all must be bound, and reach the server, before the attack starts")
	f.phase.register(fs)
	f.shard.register(fs)
	f.checks.register(fs)
	f.progress.register(fs)
	fs.IntVar(&f.cpus, "cpus", 0, "CPUs the attack uses (GOMAXPROCS; default: all)")
	fs.Uint64Var(&f.seed, "seed", 1, "workload seed")
	fs.StringVar(&f.out, "out", "", "output folder: new, empty, or an earlier result's, whose outputs are replaced (default results/<timestamp>-attack)")
	fs.BoolVar(&f.noReport, "no-report", false, "write result.json only")
	fs.BoolVar(&f.noTrace, "no-trace", false, "do not write requests.csv (one row per request, in send order)")
	fs.IntVar(&f.burstSize, "burst-size", 0, "burst workload: arrivals per burst")
	durationVar(fs, &f.burstEvery, "burst-every", 0, "burst workload: time between bursts")
	durationVar(fs, &f.on, "on", 0, "burst workload: on period (with -off)")
	durationVar(fs, &f.off, "off", 0, "burst workload: off period")
}

// attack is one attack, checked: the client and the engine's config.
type attack struct {
	client                       *httpexec.Client
	reject                       []int
	cfg                          live.Config
	target                       call.Target
	url, method, keyHeader, algo string
	shard                        shardRun
	warnings                     []string // said before the attack starts
	checks                       checksFlag
	progress                     string // -progress
}

// check checks the flags, parses -source-addrs into f.sources and, with
// them and no -keys, makes -keys one per address; every error is a usage
// error.
func (f *attackFlags) check() error {
	var err error
	if f.algo, err = oneAlgo(f.algo); err != nil {
		return err
	}
	if f.workload, err = workloadName(f.workload); err != nil {
		return err
	}
	replay := strings.HasPrefix(f.workload, "replay:")
	f.sources = nil
	if f.sourceAddrs != "" {
		addrs, err := httpexec.ParseSourceAddrs(f.sourceAddrs)
		if err != nil {
			return usagef("-source-addrs: %s", strings.TrimPrefix(err.Error(), httpexec.ErrBadRequest.Error()+": "))
		}
		f.sources = addrs
		if !f.keysSet && !replay {
			f.keys = len(addrs)
		}
	}
	switch {
	case f.url == "":
		return usagef("-url is required, e.g. -url http://127.0.0.1:8080/")
	case math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || f.rate < 0:
		return usagef("-rate %v must be a positive number (or 0 for a closed loop)", f.rate)
	case f.rate == 0 && !f.connsSet:
		return usagef("-rate 0 (a closed loop, as fast as the server answers) needs -connections N, e.g. -connections 32")
	case f.duration <= 0 && (!replay || f.durationSet):
		return usagef("-duration %v must be > 0", f.duration)
	case f.maxKeys < 1:
		return usagef("-max-keys %d must be >= 1", f.maxKeys)
	case !(f.maxArrivals >= 1) || math.IsInf(f.maxArrivals, 0):
		return usagef("-max-arrivals %v must be a number >= 1", f.maxArrivals)
	case f.keys < 1:
		return usagef("-keys %d must be >= 1", f.keys)
	case f.keys > 1 && f.keyHeader == "" && f.sources == nil:
		return usagef("-keys %d needs -key-header NAME: the keys travel in that header (or -source-addrs: each key leaves from one address)", f.keys)
	case f.sources != nil && !replay && f.keys < len(f.sources):
		return usagef("-keys %d would send from only %d of the %d -source-addrs: give -keys %d or more, or leave -keys out (one key per address)",
			f.keys, f.keys, len(f.sources), len(f.sources))
	case f.maxInFlight < 1 || f.maxInFlight > maxAttackInFlight:
		return usagef("-max-inflight %d must be between 1 and %d", f.maxInFlight, maxAttackInFlight)
	case f.conns < 1 || f.conns > httpexec.MaxConnections:
		return usagef("-connections %d must be between 1 and %d", f.conns, httpexec.MaxConnections)
	case f.timeout <= 0:
		return usagef("-timeout %v must be > 0", f.timeout)
	case f.cpus < 0:
		return usagef("-cpus %d must be >= 1 (0: all)", f.cpus)
	case f.limit < 0 || f.window < 0 || f.burst < 0:
		return usagef("-limit, -window and -burst must be >= 0 (0: from the server's RateLimit-Policy)")
	case f.workload == "boundary" && (f.limit == 0 || f.window == 0):
		return usagef("the boundary workload needs the server's limit and window: give -limit and -window")
	case f.rate == 0 && f.honor:
		return usagef("-honor-retry-after needs a rate: a closed loop (-rate 0) cannot hold requests back")
	case f.rate == 0 && !slices.Contains([]string{"constant", "poisson", "zipf"}, f.workload):
		return usagef("a closed loop (-rate 0) takes only its keys from a workload: constant, poisson or zipf, not %s", f.workload)
	}
	if err := f.progress.check(); err != nil {
		return err
	}
	_, err = parseStatuses(f.rejectStatus)
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
func (f *attackFlags) spec() workload.Spec {
	s := workload.Spec{
		Name: f.workload, Rate: f.rate, RateEnd: f.rateEnd, Duration: f.duration, Keys: f.keys,
		ZipfS: f.zipfS, Seed: f.seed, BurstSize: f.burstSize, BurstEvery: f.burstEvery, On: f.on, Off: f.off,
		Limit: f.limit, Window: f.window, Cost: 1,
	}
	if s.RateEnd == 0 {
		s.RateEnd = 3 * f.rate
	}
	if f.rate == 0 {
		s.Rate = 1e9 // a closed loop ignores the instants: they only need to outrun the server
	}
	if strings.HasPrefix(f.workload, "replay:") && !f.durationSet {
		s.Duration = 0 // the whole trace
	}
	return s
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
	spec := f.spec()
	if err := f.phase.apply(&spec); err != nil {
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
	info, _, err := inspect(ctx, src, bounds{maxKeys: f.maxKeys, maxArrivals: f.maxArrivals, closed: f.rate == 0})
	if err != nil {
		return nil, err
	}
	hc := httpexec.Config{URL: f.url, Method: f.method, Header: f.header.h, KeyHeader: f.keyHeader,
		Connections: f.conns, Timeout: f.timeout, Client: f.client, Insecure: f.insecure, SourceAddrs: f.sources}
	if f.body != "" {
		if hc.Body, err = os.ReadFile(f.body); err != nil {
			return nil, usagef("-body: %v", err)
		}
	}
	client, err := httpexec.New(hc)
	if err != nil {
		return nil, usageError{err}
	}
	a := &attack{client: client, url: f.url, method: cmpOr(f.method, http.MethodGet), keyHeader: f.keyHeader, algo: f.algo,
		shard: sh, warnings: append(sh.balance(src), rateUnused(src, spec.Rate, f.rateSet && f.rate > 0)...), checks: f.checks,
		progress: f.progress.mode}
	a.reject, _ = parseStatuses(f.rejectStatus) // checked
	a.cfg = live.Config{
		Config:      bench.Config{Policy: algorithms.Policy{Limit: f.limit, Window: f.window, Burst: f.burst}, Workload: src, Span: info.Span},
		MaxInFlight: f.maxInFlight, Closed: f.rate == 0, Connections: f.conns, HonorRetryAfter: f.honor,
	}
	a.cfg.Shard, a.cfg.StartAt = sh.sh, sh.at
	if b, ok := src.(*workload.Boundary); ok && b.Align != workload.AlignFirstRequest {
		a.cfg.AlignStart = f.window // windows start at multiples of W since the epoch
	}
	a.target = call.Target{Name: "http", Backend: hostOf(f.url), Replicas: 1}
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
		notes: checkHelp(),
		fs:    flag.NewFlagSet("attack", flag.ContinueOnError)}
	var f attackFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		f.connsSet, f.durationSet, f.keysSet, f.rateSet = isSet(c.fs, "connections"), isSet(c.fs, "duration"), isSet(c.fs, "keys"), isSet(c.fs, "rate")
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
		out, err := prepareOut(f.out, "attack", runFolder)
		if err != nil {
			return err
		}
		if f.cpus > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.cpus))
		}
		return e.attack(ctx, a, out, f.seed, f.noReport, !f.noTrace)
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
			h.URL, h.Method, h.Client, h.Connections = a.url, a.method, a.client.Name(), a.client.Dials()
			h.KeyHeader, h.ServerAlgorithm, h.RejectStatuses = a.keyHeader, a.algo, a.reject
			h.SourceAddrs = a.client.Sources()
			runs := []result.Run{run}
			meta.Warnings = append(result.Warnings(runs), a.shard.lagWarnings(runs)...)
			w := cfg.Workload.Record()
			w["url"] = a.url
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

// cmpOr is the first of its arguments that is not empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// validHeaderName reports whether s may be a header field name.
func validHeaderName(s string) bool { return httpexec.ValidHeaderName(s) }
