package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/httplimit"
	"github.com/ratebench/ratebench/algorithms/httplimit/serve"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/bench/backend"
)

// serveFlags are the flags of `ratebench serve`.
type serveFlags struct {
	backendFlags
	addr, algo, trust, proxyHeader, key string
	display                             string // the backend, password removed
	policy                              policyFlags
	legacy                              bool
	timeouts                            serve.Timeouts // no flag sets them; tests shorten them
	maxKeys                             int
	onFull                              string
	fs                                  *flag.FlagSet  // to tell the flags given from defaults
	keyed                               *keyed.Limiter // the memory backend's, for its counts; nil on a shared one
	wrap                                func(algorithms.Limiter) algorithms.Limiter
}

// register defines serve's flags on fs and keeps fs, to tell the flags
// given from their defaults once it is parsed.
func (f *serveFlags) register(fs *flag.FlagSet) {
	f.timeouts = serve.DefaultTimeouts
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen on HOST:PORT (port 0: any free port; the log's first line names it)")
	fs.StringVar(&f.algo, "algo", "gcra", "algorithm limiting each key, any case (see ratebench list)")
	aliasVar(fs, "algos", "algo")
	f.policy = defaultPolicy
	f.policy.register(fs, texts{"limit": "limit L: requests per window, per key"})
	f.backendFlags.register(fs)
	fs.StringVar(&f.backendFlags.prefix, "prefix", "ratebench:serve", "Redis key prefix or SQLite scope of the quota: servers with the same one share it")
	fs.StringVar(&f.trust, "trust-proxy", "", "comma-separated CIDRs (or addresses) of reverse proxies whose forwarding header is believed")
	fs.StringVar(&f.proxyHeader, "proxy-header", httplimit.HeaderXForwardedFor, "the header trusted proxies write: X-Forwarded-For or Forwarded")
	fs.StringVar(&f.key, "key", "", "what a request is limited by: the client IP (default) or header:NAME (e.g. header:X-API-Key)")
	fs.BoolVar(&f.legacy, "legacy-headers", false, "also send X-RateLimit-Limit, -Remaining and -Reset")
	fs.IntVar(&f.maxKeys, "max-keys", serveMaxKeys, "memory backend: most keys held at once (>= 1), in up to 64 shards that fill each on its own; a key is forgotten only once its quota is full again, see -on-full (not for Redis or SQLite, which keep their own keys)")
	fs.StringVar(&f.onFull, "on-full", keyed.Reject.String(), "memory backend: what a new key gets when -max-keys keys are all still limited: reject (429 until a slot frees; no key loses its state) or evict-lossy (evict the key closest to a full quota, which may then come back with quota it would not have had)")
	f.fs = fs
}

// serveMaxKeys is -max-keys' default: keyed's own.
const serveMaxKeys = 1 << 20

// middleware checks the flags and builds the rate limiter and a function
// that releases its backend. Bad flags and an unreachable backend are
// usage errors (exit 2), as for run; a backend reached that then fails
// to make the limiter is not.
func (f *serveFlags) middleware() (*httplimit.Middleware, func() error, error) {
	_, port, err := net.SplitHostPort(f.addr)
	if err != nil {
		return nil, nil, usagef("-addr %q: want HOST:PORT", f.addr)
	}
	// A port out of range is bad input, not a failure to listen.
	if _, err := net.LookupPort("tcp", port); err != nil {
		return nil, nil, usagef("-addr %q: port %q is not a number from 0 to 65535 or a service name", f.addr, port)
	}
	if f.policy.burst < 0 {
		return nil, nil, usagef("-burst %d must be >= 1", f.policy.burst)
	}
	p, err := f.policy.policy()
	if err != nil {
		return nil, nil, err
	}
	trusted, err := httplimit.ParseTrustedProxies(f.trust)
	if err != nil {
		return nil, nil, usagef("-trust-proxy %v", err)
	}
	keyFn, err := httplimit.ParseKey(f.key)
	if err != nil {
		return nil, nil, usagef("-key %v", err)
	}
	lim, closeFn, err := f.limiter(p)
	if err != nil {
		return nil, nil, err
	}
	if f.wrap != nil {
		lim = f.wrap(lim)
	}
	mw, err := httplimit.New(httplimit.Config{
		Policy: p, Limiter: lim, Key: keyFn, TrustedProxies: trusted, ProxyHeader: f.proxyHeader,
		LegacyHeaders: f.legacy, FailOpen: f.failOpen, WriteTimeout: f.timeouts.Write,
	})
	if err != nil {
		_ = closeFn()
		return nil, nil, usageError{err}
	}
	return mw, closeFn, nil
}

// limiter is a per-key limiter of the named algorithm: keyed in memory,
// or on the shared backend (whose limiters keep one state per key, under
// -prefix, so that servers with the same prefix share the quota).
func (f *serveFlags) limiter(p algorithms.Policy) (algorithms.Limiter, func() error, error) {
	e, err := all.Lookup(f.algo)
	if err != nil {
		return nil, nil, usageError{err}
	}
	b, err := backend.Parse(f.backend)
	if err != nil {
		return nil, nil, usageError{err}
	}
	f.display = b.Display
	if b.Kind == backend.Memory {
		opts, err := f.keyTable()
		if err != nil {
			return nil, nil, err
		}
		l, err := keyed.New(p, e.New, opts)
		switch {
		case errors.Is(err, keyed.ErrInvalidOptions):
			return nil, nil, usagef("-max-keys %d: %v", f.maxKeys, err)
		case err != nil:
			return nil, nil, usageError{err}
		}
		f.keyed = l
		return l, func() error { return nil }, nil
	}
	for _, name := range []string{"max-keys", "on-full"} {
		if isSet(f.fs, name) {
			return nil, nil, usagef("-%s bounds the in-memory key table: -backend %s keeps its keys itself", name, b.Display)
		}
	}
	if err := f.backendFlags.check(); err != nil {
		return nil, nil, err
	}
	if f.prefix == "" {
		return nil, nil, usagef("-prefix must not be empty")
	}
	opts := backend.Options{Timeout: f.timeout, ServerTime: f.redisTime == "server", Live: true,
		Workers: serveBackendWorkers, Prefix: f.prefix}
	targets, closeFn, err := backend.Targets([]string{e.Name}, p, 1, 1, f.backend, opts)
	switch {
	case errors.Is(err, algorithms.ErrBackend):
		return nil, nil, unreachable(f.backend, err)
	case err != nil:
		return nil, nil, usageError{err}
	}
	l, err := targets[0].New()
	if err != nil {
		_ = closeFn()
		return nil, nil, fmt.Errorf("-backend %s: %w", b.Display, err)
	}
	return l, closeFn, nil
}

// keyTable checks -max-keys and -on-full and returns the memory backend's
// key table options.
func (f *serveFlags) keyTable() (keyed.Options, error) {
	if f.maxKeys < 1 {
		return keyed.Options{}, usagef("-max-keys %d must be >= 1", f.maxKeys)
	}
	onFull, err := keyed.ParseOnFull(f.onFull)
	if err != nil {
		return keyed.Options{}, usagef("-on-full %v", err)
	}
	return keyed.Options{MaxKeys: f.maxKeys, OnFull: onFull}, nil
}

// serveBackendWorkers sizes the Redis pool for concurrent requests, which
// then share pipelines.
const serveBackendWorkers = 64

func (e *env) serveCommand() *command {
	c := &command{name: "serve", summary: "serve a demo endpoint behind the rate-limit middleware, logging admitted and rejected per second",
		examples: []string{
			"ratebench serve -algo gcra -limit 100 -window 1s -addr 127.0.0.1:8080",
			"ratebench serve -algo fixed-window -backend redis://127.0.0.1:6379   # replicas sharing one quota",
		},
		noArgs: true, fs: flag.NewFlagSet("serve", flag.ContinueOnError)}
	var f serveFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		f.wrap = e.wrapLimiter
		algo, err := oneAlgo(f.algo)
		if err != nil {
			return err
		}
		f.algo = cmp.Or(algo, "gcra")
		mw, closeFn, err := f.middleware()
		if err != nil {
			return err
		}
		defer closeFn()
		ln, err := net.Listen("tcp", f.addr)
		if err != nil {
			return err
		}
		return e.serve(ctx, ln, mw, &f)
	}
	return c
}

// serve serves on ln until ctx is done (see serve.Run), then prints the
// totals.
func (e *env) serve(ctx context.Context, ln net.Listener, mw *httplimit.Middleware, f *serveFlags) error {
	start := time.Now()
	table := ""
	if f.keyed != nil {
		table = fmt.Sprintf(", at most %d keys, %s when full", f.maxKeys, f.onFull)
	}
	fmt.Fprintf(e.stderr, "listening on http://%s (%s on %s, limit %d per %v per key%s)\n", ln.Addr(), f.algo, f.display, f.policy.limit, f.policy.window, table)
	err := serve.Run(ctx, ln, mw, f.timeouts, e.stderr)
	s := mw.Stats()
	lossy := ""
	if f.keyed != nil && f.onFull == keyed.EvictLossy.String() {
		// Keys dropped before their quota was full again: each may have
		// come back with quota it should not have had.
		lossy = fmt.Sprintf(" lossy_evictions %d", f.keyed.Stats().LossyEvictions)
	}
	fmt.Fprintf(e.stdout, "totals: admitted %d rejected %d errors %d bad_keys %d table_full %d%s in %v\n",
		s.Admitted, s.Rejected, s.Errors, s.BadKeys, s.TableFull, lossy, time.Since(start).Round(time.Millisecond))
	return err
}
