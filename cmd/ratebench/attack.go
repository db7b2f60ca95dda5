package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/httpload"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// headerFlags collects repeated -header "Name: value" flags.
type headerFlags struct{ h http.Header }

func (f *headerFlags) String() string { return "" }

func (f *headerFlags) Set(s string) error {
	name, value, err := httpload.ParseHeader(s)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), httpload.ErrBadRequest.Error()+": "))
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, value)
	return nil
}

// attackFlags are the flags of `ratebench attack`.
type attackFlags struct {
	url, method, body, workload, keyHeader, out, algo, client, engine string
	header                                                            headerFlags
	rate, rateEnd, zipfS                                              float64
	duration, timeout, window, burstEvery, on, off                    time.Duration
	keys, maxInFlight, conns, burstSize, cpus, maxKeys                int
	limit, burst                                                      int64
	maxArrivals                                                       float64
	seed                                                              uint64
	honor, noReport, insecure, connsSet, durationSet                  bool
}

func (f *attackFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "the http:// or https:// URL every request goes to (required)")
	fs.StringVar(&f.method, "method", http.MethodGet, "request method")
	fs.Var(&f.header, "header", "a request header, \"Name: value\" (repeatable)")
	fs.StringVar(&f.body, "body", "", "a file whose content is sent as every request's body")
	fs.StringVar(&f.workload, "workload", "constant", "arrivals: "+strings.Join(workload.Names(), ", ")+" (replay:FILE)")
	fs.Float64Var(&f.rate, "rate", 100, "requests per second; 0: as fast as -connections connections go, each sending when answered (closed loop, like wrk)")
	fs.Float64Var(&f.rateEnd, "rate-end", 0, "ramp: final rate (default: 3x -rate)")
	fs.Float64Var(&f.zipfS, "zipf-s", 0, "zipf: exponent s > 1 (default 1.1)")
	durationVar(fs, &f.duration, "duration", 10*time.Second, "length of the attack")
	fs.IntVar(&f.keys, "keys", 1, "distinct keys (k0, k1, ...), sent in -key-header")
	fs.IntVar(&f.maxKeys, "max-keys", defaultMaxKeys, "most distinct keys an attack may send (-keys, or a trace's keys): each is measured on its own")
	fs.Float64Var(&f.maxArrivals, "max-arrivals", defaultMaxArrivals, "refuse an attack whose workload expects more requests than this")
	fs.StringVar(&f.keyHeader, "key-header", "", "the header that carries each request's key, e.g. X-API-Key (the server limits by it)")
	fs.IntVar(&f.maxInFlight, "max-inflight", httpload.DefaultMaxInFlight, "requests sent or waiting for a connection, and not answered, above which arrivals are dropped and counted")
	fs.IntVar(&f.conns, "connections", httpload.DefaultConnections, "most connections, opened as the load needs them")
	durationVar(fs, &f.timeout, "timeout", httpload.DefaultTimeout, "bound on each request, connection included")
	fs.BoolVar(&f.honor, "honor-retry-after", false, "after a 429 with Retry-After, hold back that key's arrivals until then (counted as held back)")
	fs.Int64Var(&f.limit, "limit", 0, "the server's limit L, for the report (default: from its RateLimit-Policy header)")
	durationVar(fs, &f.window, "window", 0, "the server's window W (default: from its RateLimit-Policy header)")
	fs.Int64Var(&f.burst, "burst", 0, "the server's burst B (default: L)")
	fs.StringVar(&f.algo, "algo", "", "the server's algorithm, for the theory in the report (default: unknown)")
	fs.StringVar(&f.client, "client", "", "HTTP client: fast (HTTP/1.1, http only; the default for http) or net/http (the default for https)")
	fs.StringVar(&f.engine, "engine", "", "how the fast client drives its connections: epoll (event loops, Linux; the default there) or goroutines (one per connection)")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server's TLS certificate")
	fs.IntVar(&f.cpus, "cpus", 0, "CPUs the attack uses (GOMAXPROCS; default: all)")
	fs.Uint64Var(&f.seed, "seed", 1, "workload seed")
	fs.StringVar(&f.out, "out", "", "output folder: new, empty, or an earlier result's, whose outputs are replaced (default results/<timestamp>-attack)")
	fs.BoolVar(&f.noReport, "no-report", false, "write result.json only")
	fs.IntVar(&f.burstSize, "burst-size", 0, "burst workload: arrivals per burst")
	durationVar(fs, &f.burstEvery, "burst-every", 0, "burst workload: time between bursts")
	durationVar(fs, &f.on, "on", 0, "burst workload: on period (with -off)")
	durationVar(fs, &f.off, "off", 0, "burst workload: off period")
}

// config checks the flags and builds the attack's config; every error is
// a usage error.
func (f *attackFlags) config() (httpload.Config, error) {
	switch {
	case f.url == "":
		return httpload.Config{}, usagef("-url is required, e.g. -url http://127.0.0.1:8080/")
	case math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || f.rate < 0:
		return httpload.Config{}, usagef("-rate %v must be a positive number (or 0 for a closed loop)", f.rate)
	case f.rate == 0 && !f.connsSet:
		return httpload.Config{}, usagef("-rate 0 (a closed loop, as fast as the server answers) needs -connections N, e.g. -connections 32")
	case f.duration <= 0 && (!strings.HasPrefix(f.workload, "replay:") || f.durationSet):
		return httpload.Config{}, usagef("-duration %v must be > 0", f.duration)
	case f.maxKeys < 1:
		return httpload.Config{}, usagef("-max-keys %d must be >= 1", f.maxKeys)
	case !(f.maxArrivals >= 1) || math.IsInf(f.maxArrivals, 0):
		return httpload.Config{}, usagef("-max-arrivals %v must be a number >= 1", f.maxArrivals)
	case f.keys < 1:
		return httpload.Config{}, usagef("-keys %d must be >= 1", f.keys)
	case f.keys > 1 && f.keyHeader == "":
		return httpload.Config{}, usagef("-keys %d needs -key-header NAME: the keys travel in that header", f.keys)
	case f.maxInFlight < 1 || f.maxInFlight > httpload.MaxMaxInFlight:
		return httpload.Config{}, usagef("-max-inflight %d must be between 1 and %d", f.maxInFlight, httpload.MaxMaxInFlight)
	case f.conns < 1 || f.conns > httpload.MaxConnections:
		return httpload.Config{}, usagef("-connections %d must be between 1 and %d", f.conns, httpload.MaxConnections)
	case f.timeout <= 0:
		return httpload.Config{}, usagef("-timeout %v must be > 0", f.timeout)
	case f.cpus < 0:
		return httpload.Config{}, usagef("-cpus %d must be >= 1 (0: all)", f.cpus)
	case f.limit < 0 || f.window < 0 || f.burst < 0:
		return httpload.Config{}, usagef("-limit, -window and -burst must be >= 0 (0: from the server's RateLimit-Policy)")
	}
	cfg := httpload.Config{
		URL: f.url, Method: f.method, Header: f.header.h, KeyHeader: f.keyHeader,
		Workload: workload.Spec{
			Name: f.workload, Rate: f.rate, RateEnd: f.rateEnd, Duration: f.duration, Keys: f.keys,
			ZipfS: f.zipfS, Seed: f.seed, BurstSize: f.burstSize, BurstEvery: f.burstEvery, On: f.on, Off: f.off,
		},
		MaxInFlight: f.maxInFlight, Connections: f.conns, Timeout: f.timeout, HonorRetryAfter: f.honor, Closed: f.rate == 0,
		Policy:    algorithms.Policy{Limit: f.limit, Window: f.window, Burst: f.burst},
		Algorithm: f.algo, Client: f.client, Engine: f.engine, Insecure: f.insecure,
	}
	if cfg.Workload.RateEnd == 0 {
		cfg.Workload.RateEnd = 3 * f.rate
	}
	if strings.HasPrefix(f.workload, "replay:") && !f.durationSet {
		cfg.Workload.Duration = 0 // the whole trace
	}
	if f.body != "" {
		b, err := os.ReadFile(f.body)
		if err != nil {
			return cfg, usagef("-body: %v", err)
		}
		cfg.Body = b
	}
	return cfg, nil
}

func (e *env) attackCommand() *command {
	c := &command{name: "attack", summary: "load-test an HTTP endpoint in an open loop and write result.json and a report",
		fs: flag.NewFlagSet("attack", flag.ContinueOnError)}
	var f attackFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		f.connsSet, f.durationSet = isSet(c.fs, "connections"), isSet(c.fs, "duration")
		cfg, err := f.config()
		if err != nil {
			return err
		}
		// Bad input, the workload's file and size, and the server are
		// checked before anything is written (a closed loop's synthetic
		// workload has no rate to bound; a boundary workload without the
		// policy is Check's to refuse).
		spec := cfg.Workload
		if spec.Name == "boundary" {
			spec.Limit, spec.Window = cfg.Policy.Limit, cfg.Policy.Window
		}
		if (!f.closed() || strings.HasPrefix(f.workload, "replay:")) && spec.Validate() == nil {
			info, _, err := inspect(ctx, &spec, bounds{maxKeys: f.maxKeys, maxArrivals: f.maxArrivals})
			if err != nil {
				return err
			}
			// A whole trace ends just after its last arrival: the
			// sender stops there even if it falls behind.
			cfg.Workload.Keys, cfg.Workload.Duration = spec.Keys, info.Span
		}
		if err := httpload.Check(ctx, cfg); err != nil {
			return usageError{err}
		}
		out, err := prepareOut(f.out, "attack", runFolder)
		if err != nil {
			return err
		}
		if f.cpus > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.cpus))
		}
		return e.attack(ctx, cfg, out, f.seed, f.noReport)
	}
	return c
}

// closed reports whether the attack is a closed loop, whose rate is the
// server's: its workload's expected count means nothing then.
func (f *attackFlags) closed() bool { return f.rate == 0 }

// attack runs the attack, prints the summary table, then writes
// result.json (also after Ctrl-C, for what ran) and the report into out.
func (e *env) attack(ctx context.Context, cfg httpload.Config, out *outDir, seed uint64, noReport bool) error {
	meta := result.NewMeta("http", seed, e.args)
	bars := newBars(e.stderr)
	cfg.Progress = bars.progress()
	start := time.Now()
	res, err := httpload.Attack(ctx, cfg)
	bars.wait()
	meta.ElapsedNS = int64(time.Since(start))
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		out.abandon()
		return err
	}
	meta.Interrupted = interrupted
	meta.Warnings = res.Warnings
	for _, w := range meta.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	w := cfg.Workload.Params()
	w["name"] = cfg.Workload.Name
	w["url"] = cfg.URL
	r := &result.Result{Meta: meta, Policy: result.PolicyOf(res.Policy), Workload: w, Runs: []result.Run{res.Run}}
	if err := e.write(out, r, noReport); err != nil {
		if interrupted {
			return fmt.Errorf("%w: %w", errInterrupted, err)
		}
		return err
	}
	e.attackSummary(res)
	if interrupted {
		fmt.Fprintf(e.stderr, "interrupted: wrote what ran to %s\n", out.path)
		return errInterrupted
	}
	return nil
}

// attackSummary prints what the table does not show: rates, statuses,
// Retry-After values, latency beside service time and lateness.
func (e *env) attackSummary(res httpload.Result) {
	run := res.Run
	l, h := run.Live, run.HTTP
	if h.Closed {
		fmt.Fprintf(e.stdout, "%s: closed loop over %d connections: completed %.0f/s\n", h.URL, l.Workers, h.CompletedRatePerS)
	} else {
		fmt.Fprintf(e.stdout, "%s: sent %.0f/s of %.0f/s offered (%d dropped, %.2f%% late), completed %.0f/s over %d connections\n",
			h.URL, l.AchievedRatePerS, l.OfferedRatePerS, l.Dropped, l.LatePct, h.CompletedRatePerS, h.Connections)
	}
	fmt.Fprintf(e.stdout, "status: %s; 429: %.2f%% of responses", countsText(run.StatusCodes), h.TooManyPct)
	if len(h.RetryAfterS) > 0 {
		fmt.Fprintf(e.stdout, "; Retry-After (s): %s", countsText(h.RetryAfterS))
	}
	if h.HonorRetryAfter {
		fmt.Fprintf(e.stdout, "; held back %d", h.HeldBack)
	}
	if len(run.ErrorKinds) > 0 {
		fmt.Fprintf(e.stdout, "; errors: %s", countsText(run.ErrorKinds))
	}
	fmt.Fprintln(e.stdout)
	d := func(v int64) time.Duration { return time.Duration(v).Round(time.Microsecond) }
	fmt.Fprintf(e.stdout, "latency p50 %v p99 %v max %v; service p50 %v p99 %v; lateness p99 %v; policy %d per %v (%s)\n",
		d(run.Latency.P50), d(run.Latency.P99), d(run.Latency.Max), d(l.Service.P50), d(l.Service.P99), d(l.Lateness.P99),
		res.Policy.Limit, res.Policy.Window, h.PolicySource)
}

// countsText is "200: 9, 429: 1" in key order (numerically when the keys
// are numbers).
func countsText(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if errA == nil && errB == nil {
			return x - y
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// validHeaderName reports whether s may be a header field name.
func validHeaderName(s string) bool { return httpload.ValidHeaderName(s) }
