package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/probe"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/summary"
	"github.com/ratebench/ratebench/workload"
)

// probeFlags are the flags of `ratebench probe`.
type probeFlags struct {
	limit, maxRequests              int64
	window, maxDuration, edgeOffset time.Duration
	align, expectText               string
	expect                          *fit.Expectation
	keys                            int
	noTrace, rejectSet              bool
	http                            clientFlags
	output                          outputFlags
	progress                        progressFlag
}

func (f *probeFlags) register(fs *flag.FlagSet) {
	f.http.conns = 64
	f.http.register(fs, texts{
		"header":        `a request header "Name: value" (repeatable)`,
		"key-header":    "the header that carries each request's key (k0, k1, ...), to tell a per-key limit from a shared one",
		"source-addrs":  "local addresses to send from, to tell a per-client-address limit from a shared one (see attack)",
		"reject-status": "statuses that mean rejected (default: found by the probe: 429, or the status the first burst drew)",
		"client":        "HTTP client: fasthttp or net/http (see attack)",
		"connections":   "most connections",
	})
	fs.IntVar(&f.keys, "keys", 0, "keys the scope experiments send (default: 2 with -key-header, one per address with -source-addrs, else 1)")
	fs.Int64Var(&f.limit, "limit", 0, "what you believe the limit L is (sizes the first burst; optional)")
	durationVar(fs, &f.window, "window", 0, "what you believe the window W is (tried first; optional)")
	durationVar(fs, &f.edgeOffset, "edge-offset", 0, "boundary experiment: windows start this long after each multiple of W on the Unix clock, in [0, W)")
	fs.StringVar(&f.align, "align", workload.AlignEpoch, "boundary experiment: where windows start: epoch (multiples of W, shifted by -edge-offset) or first-request (a key's first request, as INCR + EXPIRE)")
	fs.Int64Var(&f.maxRequests, "max-requests", 10000, "most requests the whole probe sends")
	durationVar(fs, &f.maxDuration, "max-duration", time.Minute, "most wall time the experiments take")
	f.output.register(fs, texts{"out": "output folder: new, empty, or an earlier result's (default results/<timestamp>-probe)",
		"no-report": "write result.json and fit.json only"})
	fs.BoolVar(&f.noTrace, "no-trace", false, "do not write requests.csv")
	f.progress.register(fs)
	fs.StringVar(&f.expectText, "expect", "", `the policy you expect, as the verdict says it, parts optional: e.g. 'gcra 100/1s burst 20 per client-address' or '100/1s'; exit 0 when the fit matches it, 1 when it contradicts it, 3 when it cannot tell`)
}

func (e *env) probeCommand() *command {
	c := &command{name: "probe", summary: "tell which algorithm, policy and scope an HTTP service's limiter runs, by bounded experiments and a fit",
		usage: "ratebench probe -url URL [-limit L -window W] [-source-addrs A-B] [-expect POLICY] [-max-requests N] [-max-duration D] [-out DIR]",
		examples: []string{
			"ratebench probe -url http://127.0.0.1:8080/",
			"ratebench probe -url http://127.0.0.1:8080/ -source-addrs 127.0.0.1-127.0.0.4   # per client address or for all?",
			"ratebench probe -url http://127.0.0.1:8080/ -expect 'gcra 100/1s burst 20'      # exit 1 if it drifted, 3 if it cannot tell",
		},
		noArgs: true, fs: flag.NewFlagSet("probe", flag.ContinueOnError)}
	var f probeFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		f.rejectSet = isSet(c.fs, "reject-status")
		cfg, err := f.config()
		if err != nil {
			return err
		}
		defer cfg.Client.Close()
		if err := cfg.Client.Check(ctx); err != nil {
			return usageError{err}
		}
		out, err := prepareOut(f.output.out, "probe", runFolder)
		if err != nil {
			return err
		}
		return e.probe(ctx, cfg, out, f)
	}
	return c
}

// config checks the flags and builds the probe's configuration and
// client; every error is a usage error.
func (f *probeFlags) config() (probe.Config, error) {
	var cfg probe.Config
	if err := f.progress.check(); err != nil {
		return cfg, err
	}
	if err := f.http.check(); err != nil {
		return cfg, err
	}
	switch {
	case f.limit < 0 || f.window < 0:
		return cfg, usagef("-limit and -window must be >= 0 (0: unknown)")
	case f.maxRequests < 100:
		return cfg, usagef("-max-requests %d must be at least 100", f.maxRequests)
	case f.maxDuration < 5*time.Second:
		return cfg, usagef("-max-duration %v must be at least 5s", f.maxDuration)
	case f.keys < 0 || f.keys > 256:
		return cfg, usagef("-keys %d must be between 1 and 256", f.keys)
	case f.keys > 1 && f.http.keyHeader == "" && f.http.sourceAddrs == "":
		return cfg, usagef("-keys %d needs -key-header NAME or -source-addrs: the keys must reach the server", f.keys)
	case f.align != workload.AlignEpoch && f.align != workload.AlignFirstRequest:
		return cfg, usagef("-align %q: want %s or %s", f.align, workload.AlignEpoch, workload.AlignFirstRequest)
	case f.edgeOffset < 0 || f.window > 0 && f.edgeOffset >= f.window:
		return cfg, usagef("-edge-offset %v must be in [0, W)", f.edgeOffset)
	case f.edgeOffset > 0 && f.align == workload.AlignFirstRequest:
		return cfg, usagef("-edge-offset is for windows on the clock, not -align %s", f.align)
	}
	if f.expectText != "" {
		e, err := fit.ParseExpectation(f.expectText)
		if err != nil {
			return cfg, usagef("-expect: %s", strings.TrimPrefix(err.Error(), "fit: "))
		}
		f.expect = &e
	}
	keys := f.keys
	if n := len(f.http.sources); n > 0 && keys == 0 {
		keys = n
		if f.http.keyHeader != "" { // keys that share an address tell a key's limit from an address's
			keys *= 2
		}
	}
	if keys == 0 && f.http.keyHeader != "" {
		keys = 2
	}
	if f.rejectSet {
		reject, err := parseStatuses(f.http.rejectStatus)
		if err != nil {
			return cfg, err
		}
		cfg.RejectStatuses = reject
	}
	client, err := f.http.newClient(f.http.config())
	if err != nil {
		return cfg, err
	}
	cfg.Client, cfg.Connections, cfg.Keys = client, f.http.conns, max(keys, 1)
	cfg.Limit, cfg.Window, cfg.MaxRequests, cfg.MaxDuration = f.limit, f.window, f.maxRequests, f.maxDuration
	cfg.EdgeOffset, cfg.FirstRequest = f.edgeOffset, f.align == workload.AlignFirstRequest
	return cfg, nil
}

// probe runs the experiments through measure, then writes result.json
// (with its probe object), fit.json, requests.csv and the page into out.
func (e *env) probe(ctx context.Context, cfg probe.Config, out *outDir, f probeFlags) error {
	meta := result.NewMeta("probe", 1, e.args)
	var o *probe.Outcome
	_, err := e.measure(ctx, measurement{
		out: out, trace: !f.noTrace, progress: f.progress.mode, quiet: true, // the experiments depend on what the first ones find: passes unknown
		run: func(ctx context.Context, tr call.Tracer, p call.Progress) (*result.Result, error) {
			cfg.Trace, cfg.Progress, cfg.Log = tr, p, e.stderr
			var err error
			o, err = probe.Run(ctx, cfg)
			if o == nil || o.Probe == nil && !errors.Is(err, context.Canceled) {
				return nil, err
			}
			meta.Warnings = probeWarnings(o.Runs)
			for i := range o.Runs {
				f.http.stamp(o.Runs[i].HTTP, cfg.Client)
				o.Runs[i].Backend = hostOf(f.http.url)
			}
			return &result.Result{Meta: meta, Policy: result.PolicyOf(o.Policy), Workload: map[string]any{"name": "probe", "url": f.http.url}, Runs: o.Runs, Probe: o.Probe}, err
		},
		write: func(res *result.Result) error { return e.writeProbe(out, res, o.Fit, f.output.noReport) },
		outcome: func(_ *result.Result, err error) error {
			if err == nil && f.expect != nil {
				return e.expectation(*f.expect, o.Fit)
			}
			return err
		},
	})
	return err
}

// writeProbe says the probe's answer, then writes its result, fit and
// (unless noReport) page into out.
func (e *env) writeProbe(out *outDir, res *result.Result, ft *fit.Result, noReport bool) error {
	// The answer first, then the experiments' table.
	if p := res.Probe; p != nil {
		fmt.Fprintf(e.stdout, "The service %s.\n", p.Sentence)
		if s := report.AdvertisedReading(res, ft); s != "" {
			fmt.Fprintln(e.stdout, s)
		}
		if s := report.HeadersReading(p.Headers); s != "" {
			fmt.Fprintf(e.stdout, "headers: %s\n", s)
		}
		if p.RejectFound {
			fmt.Fprintf(e.stdout, "rejections are answered with %s (found by the probe)\n", summary.Statuses(p.RejectStatuses))
		}
	}
	// fit.json goes after result.json, whose writing removes an earlier
	// result's files (an earlier fit.json among them), and before the
	// page, which shows it.
	if err := e.write(out, res, true); err != nil {
		return err
	}
	if ft != nil {
		if err := ft.WriteFile(out.Path); err != nil {
			return err
		}
	}
	if noReport {
		return nil
	}
	return e.writeReport(out.Path, res)
}

// expectation says whether the fit matches what the user expected, and
// returns an exitStatus unless it does.
func (e *env) expectation(want fit.Expectation, f *fit.Result) error {
	verdict, say := fit.ExpectUnknown, "cannot tell: the probe fitted nothing"
	if f != nil {
		verdict, say = want.Check(f)
	}
	fmt.Fprintf(e.stdout, "expect: %s\n", say)
	switch verdict {
	case fit.ExpectMatch:
		return nil
	case fit.ExpectContradicted:
		return exitStatus{1, fmt.Errorf("-expect '%s': %s", want, say)}
	}
	return exitStatus{3, fmt.Errorf("-expect '%s': %s", want, say)}
}
