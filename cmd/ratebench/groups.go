package main

import (
	"cmp"
	"flag"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// The flag groups below are each defined once and registered by every
// command that takes them. A group's fields hold its flags' defaults
// when register is called (a command sets its own before), and texts
// holds the help of the flags a command words its own way.

// texts are help texts by flag name.
type texts map[string]string

// or is t's text for name, else def.
func (t texts) or(name, def string) string {
	if s, ok := t[name]; ok {
		return s
	}
	return def
}

// policyFlags are -limit, -window and -burst.
type policyFlags struct {
	limit, burst int64
	window       time.Duration
}

// defaultPolicy are the policy flags' defaults of run, boundary and
// serve: 100 per second.
var defaultPolicy = policyFlags{limit: 100, window: time.Second}

func (f *policyFlags) register(fs *flag.FlagSet, t texts) {
	fs.Int64Var(&f.limit, "limit", f.limit, t["limit"])
	durationVar(fs, &f.window, "window", f.window, t.or("window", "window W"))
	fs.Int64Var(&f.burst, "burst", f.burst, t.or("burst", "burst B (default: L)"))
}

// policy validates the flags; a bad one is a usage error.
func (f *policyFlags) policy() (algorithms.Policy, error) {
	p, err := algorithms.Policy{Limit: f.limit, Window: f.window, Burst: f.burst}.Validate()
	if err != nil {
		return p, usagef("%v", err)
	}
	return p, nil
}

// workloadFlags are the workload's generator and its parameters, for run
// and attack.
type workloadFlags struct {
	name                          string
	rate, rateEnd, zipfS          float64
	duration, burstEvery, on, off time.Duration
	keys, burstSize               int
	seed                          uint64
	phase                         phaseFlags
	durationSet, rateSet, keysSet bool // given on the command line (see given)
}

func (f *workloadFlags) register(fs *flag.FlagSet, t texts) {
	fs.StringVar(&f.name, "workload", f.name, t["workload"])
	fs.Float64Var(&f.rate, "rate", f.rate, t["rate"])
	fs.Float64Var(&f.rateEnd, "rate-end", 0, t["rate-end"])
	fs.Float64Var(&f.zipfS, "zipf-s", 0, "zipf: exponent s > 1 (default 1.1)")
	durationVar(fs, &f.duration, "duration", 10*time.Second, t["duration"])
	fs.IntVar(&f.keys, "keys", 1, t["keys"])
	fs.Uint64Var(&f.seed, "seed", 1, "workload seed")
	fs.IntVar(&f.burstSize, "burst-size", 0, "burst workload: arrivals per burst")
	durationVar(fs, &f.burstEvery, "burst-every", 0, "burst workload: time between bursts")
	durationVar(fs, &f.on, "on", 0, "burst workload: on period (with -off)")
	durationVar(fs, &f.off, "off", 0, "burst workload: off period")
	f.phase.register(fs)
}

// given notes which of the flags whose default depends on others were
// given on fs's command line.
func (f *workloadFlags) given(fs *flag.FlagSet) {
	f.durationSet, f.rateSet, f.keysSet = isSet(fs, "duration"), isSet(fs, "rate"), isSet(fs, "keys")
}

// replay reports whether the workload replays a trace.
func (f *workloadFlags) replay() bool { return strings.HasPrefix(f.name, "replay:") }

// check checks -duration (a replay needs none) and -keys.
func (f *workloadFlags) check() error {
	switch {
	case f.duration <= 0 && (!f.replay() || f.durationSet):
		return usagef("-duration %v must be > 0", f.duration)
	case f.keys < 1:
		return usagef("-keys %d must be >= 1", f.keys)
	}
	return nil
}

// spec completes s, which holds what a command derives its own way (the
// rates, cost and policy), with the flags. A replay plays its whole
// trace unless -duration was given.
func (f *workloadFlags) spec(s workload.Spec) (workload.Spec, error) {
	s.Name, s.Duration, s.Keys, s.ZipfS, s.Seed = f.name, f.duration, f.keys, f.zipfS, f.seed
	s.BurstSize, s.BurstEvery, s.On, s.Off = f.burstSize, f.burstEvery, f.on, f.off
	if f.replay() && !f.durationSet {
		s.Duration = 0
	}
	if err := f.phase.apply(&s); err != nil {
		return workload.Spec{}, err
	}
	return s, nil
}

// boundsFlags are -max-keys, -max-arrivals and (where texts has a text
// for it) -on-full.
type boundsFlags struct {
	maxKeys     int
	maxArrivals float64
	onFull      string
}

// defaultBounds are the bounds flags' defaults.
var defaultBounds = boundsFlags{maxKeys: defaultMaxKeys, maxArrivals: defaultMaxArrivals, onFull: "reject"}

func (f *boundsFlags) register(fs *flag.FlagSet, t texts) {
	fs.IntVar(&f.maxKeys, "max-keys", f.maxKeys, t["max-keys"])
	fs.Float64Var(&f.maxArrivals, "max-arrivals", f.maxArrivals, t["max-arrivals"])
	if t["on-full"] != "" {
		fs.StringVar(&f.onFull, "on-full", f.onFull, t["on-full"])
	}
}

// outputFlags are -out and -no-report.
type outputFlags struct {
	out      string
	noReport bool
}

func (f *outputFlags) register(fs *flag.FlagSet, t texts) {
	fs.StringVar(&f.out, "out", "", t["out"])
	fs.BoolVar(&f.noReport, "no-report", false, t.or("no-report", "write result.json only"))
}

// clientFlags are the HTTP client's flags, for attack and probe.
type clientFlags struct {
	url, method, keyHeader, client, rejectStatus, sourceAddrs string
	header                                                    headerFlags
	conns                                                     int
	timeout                                                   time.Duration
	insecure                                                  bool
	sources                                                   []netip.Addr // -source-addrs, parsed by check
}

func (f *clientFlags) register(fs *flag.FlagSet, t texts) {
	fs.StringVar(&f.url, "url", "", "the http:// or https:// URL every request goes to (required)")
	fs.StringVar(&f.method, "method", http.MethodGet, "request method")
	fs.Var(&f.header, "header", t["header"])
	fs.StringVar(&f.keyHeader, "key-header", "", t["key-header"])
	fs.StringVar(&f.sourceAddrs, "source-addrs", "", t["source-addrs"])
	fs.StringVar(&f.rejectStatus, "reject-status", "429", t["reject-status"])
	fs.StringVar(&f.client, "client", "", t["client"])
	fs.IntVar(&f.conns, "connections", f.conns, t["connections"])
	durationVar(fs, &f.timeout, "timeout", httpexec.DefaultTimeout, "bound on each request, connection included")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server's TLS certificate")
}

// check checks -url, -connections and -timeout, and parses
// -source-addrs into sources; every error is a usage error.
func (f *clientFlags) check() error {
	switch {
	case f.url == "":
		return usagef("-url is required, e.g. -url http://127.0.0.1:8080/")
	case f.conns < 1 || f.conns > httpexec.MaxConnections:
		return usagef("-connections %d must be between 1 and %d", f.conns, httpexec.MaxConnections)
	case f.timeout <= 0:
		return usagef("-timeout %v must be > 0", f.timeout)
	}
	f.sources = nil
	if f.sourceAddrs != "" {
		addrs, err := httpexec.ParseSourceAddrs(f.sourceAddrs)
		if err != nil {
			return usagef("-source-addrs: %s", strings.TrimPrefix(err.Error(), httpexec.ErrBadRequest.Error()+": "))
		}
		f.sources = addrs
	}
	return nil
}

// config is the client's configuration, once check passed.
func (f *clientFlags) config() httpexec.Config {
	return httpexec.Config{URL: f.url, Method: f.method, Header: f.header.h, KeyHeader: f.keyHeader,
		Connections: f.conns, Timeout: f.timeout, Client: f.client, Insecure: f.insecure, SourceAddrs: f.sources}
}

// newClient builds the client of config; a bad value is a usage error.
func (f *clientFlags) newClient(hc httpexec.Config) (*httpexec.Client, error) {
	client, err := httpexec.New(hc)
	if err != nil {
		return nil, usageError{err}
	}
	return client, nil
}

// stamp records in h how the requests were sent: by c, to the URL.
func (f *clientFlags) stamp(h *result.HTTPStats, c *httpexec.Client) {
	h.URL, h.Method, h.Client, h.KeyHeader = f.url, cmp.Or(f.method, http.MethodGet), c.Name(), f.keyHeader
	h.SourceAddrs = c.Sources()
}
