package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/httplimit"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/bench/backend"
)

// serveTimeouts bound how long serve's connections may take, and how long
// it waits for requests in progress when it stops. No flag sets them; tests
// shorten them.
type serveTimeouts struct {
	readHeader time.Duration // to read a request's headers
	// read bounds reading a whole request, body included, from its first
	// byte (http.Server.ReadTimeout): a body trickled byte by byte would
	// otherwise hold the connection while net/http drains it after the
	// handler. net/http clears the read deadline once the body is read, so
	// a shaper's delay does not count against it for a request without
	// one (the demo handler reads no body).
	read time.Duration
	// write bounds writing a response, from when the middleware answers:
	// after a shaper's delay, not from the end of the headers as
	// http.Server.WriteTimeout alone would (see httplimit.Config). A client
	// that pipelines requests and never reads its responses fills the
	// socket buffers and is cut after it.
	write time.Duration
	idle  time.Duration // between requests on a kept-alive connection
	// grace is how long serve waits after SIGINT or SIGTERM for requests
	// in progress before it closes their connections.
	grace time.Duration
}

// defaultServeTimeouts are serve's timeouts. The demo's responses are a
// few hundred bytes, which a client that reads takes in well under write.
var defaultServeTimeouts = serveTimeouts{
	readHeader: 10 * time.Second,
	read:       30 * time.Second,
	write:      10 * time.Second,
	idle:       2 * time.Minute,
	grace:      5 * time.Second,
}

// serveFlags are the flags of `ratebench serve`.
type serveFlags struct {
	backendFlags
	addr, algo, trust, proxyHeader, key string
	display                             string // the backend, password removed
	limit, burst                        int64
	window                              time.Duration
	legacy                              bool
	timeouts                            serveTimeouts
	maxKeys                             int
	onFull                              string
	fs                                  *flag.FlagSet  // to tell the flags given from defaults
	keyed                               *keyed.Limiter // the memory backend's, for its counts; nil on a shared one
	wrap                                func(algorithms.Limiter) algorithms.Limiter
}

// register defines serve's flags on fs and keeps fs, to tell the flags
// given from their defaults once it is parsed.
func (f *serveFlags) register(fs *flag.FlagSet) {
	f.timeouts = defaultServeTimeouts
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen on HOST:PORT (port 0: any free port; the log's first line names it)")
	fs.StringVar(&f.algo, "algo", "gcra", "algorithm limiting each key, any case (see ratebench list)")
	aliasVar(fs, "algos", "algo")
	fs.Int64Var(&f.limit, "limit", 100, "limit L: requests per window, per key")
	durationVar(fs, &f.window, "window", time.Second, "window W")
	fs.Int64Var(&f.burst, "burst", 0, "burst B (default: L)")
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
// that releases its backend. Bad flags are usage errors; an unreachable
// backend is not.
func (f *serveFlags) middleware() (*httplimit.Middleware, func() error, error) {
	_, port, err := net.SplitHostPort(f.addr)
	if err != nil {
		return nil, nil, usagef("-addr %q: want HOST:PORT", f.addr)
	}
	// A port out of range is bad input, not a failure to listen.
	if _, err := net.LookupPort("tcp", port); err != nil {
		return nil, nil, usagef("-addr %q: port %q is not a number from 0 to 65535 or a service name", f.addr, port)
	}
	if f.burst < 0 {
		return nil, nil, usagef("-burst %d must be >= 1", f.burst)
	}
	p, err := algorithms.Policy{Limit: f.limit, Window: f.window, Burst: f.burst}.Validate()
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	trusted, err := parsePrefixes(f.trust)
	if err != nil {
		return nil, nil, err
	}
	keyFn, err := parseKey(f.key)
	if err != nil {
		return nil, nil, err
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
		LegacyHeaders: f.legacy, FailOpen: f.failOpen, WriteTimeout: f.timeouts.write,
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
		if f.given(name) {
			return nil, nil, usagef("-%s bounds the in-memory key table: -backend %s keeps its keys itself", name, b.Display)
		}
	}
	switch {
	case f.redisTime != "arg" && f.redisTime != "server":
		return nil, nil, usagef("-redis-time %q: want arg or server", f.redisTime)
	case f.timeout <= 0:
		return nil, nil, usagef("-backend-timeout %v must be > 0", f.timeout)
	case f.prefix == "":
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
	opts := keyed.Options{MaxKeys: f.maxKeys}
	switch f.onFull {
	case keyed.Reject.String():
		opts.OnFull = keyed.Reject
	case keyed.EvictLossy.String():
		opts.OnFull = keyed.EvictLossy
	default:
		return keyed.Options{}, usagef("-on-full %q: want %v or %v", f.onFull, keyed.Reject, keyed.EvictLossy)
	}
	return opts, nil
}

// given reports whether the flag name was on the command line.
func (f *serveFlags) given(name string) bool {
	set := false
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	}
	return set
}

// serveBackendWorkers sizes the Redis pool for concurrent requests, which
// then share pipelines.
const serveBackendWorkers = 64

// parsePrefixes parses "CIDR,CIDR,...": a bare address is a prefix of
// itself alone.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, usagef("-trust-proxy %q: not a CIDR (e.g. 10.0.0.0/8) or an address", part)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// parseKey parses -key: "" for the client IP, or "header:NAME".
func parseKey(s string) (httplimit.KeyFunc, error) {
	if s == "" {
		return nil, nil
	}
	name, ok := strings.CutPrefix(s, "header:")
	if !ok || !validHeaderName(name) {
		return nil, usagef("-key %q: want header:NAME, e.g. header:X-API-Key", s)
	}
	return httplimit.KeyHeader(name), nil
}

func (e *env) serveCommand() *command {
	c := &command{name: "serve", summary: "serve a demo endpoint behind the rate-limit middleware, logging admitted and rejected per second",
		examples: []string{
			"ratebench serve -algo gcra -limit 100 -window 1s -addr 127.0.0.1:8080",
			"ratebench serve -algo fixed-window -backend redis://127.0.0.1:6379   # replicas sharing one quota",
		},
		fs: flag.NewFlagSet("serve", flag.ContinueOnError)}
	var f serveFlags
	f.register(c.fs)
	c.run = func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		f.wrap = e.wrapLimiter
		algo, err := oneAlgo(f.algo)
		if err != nil {
			return err
		}
		f.algo = cmpOr(algo, "gcra")
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

// okHandler is the demo service: 200 "ok".
func okHandler(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["Content-Length"] = []string{"3"}
	_, _ = io.WriteString(w, "ok\n")
}

// serve serves on ln until ctx is done, logging once a second, then shuts
// down gracefully and prints the totals. Stopping is its normal end: it
// returns nil even when it had to cut connections still busy after the
// grace (f.timeouts), and an error only if the server failed.
func (e *env) serve(ctx context.Context, ln net.Listener, mw *httplimit.Middleware, f *serveFlags) error {
	t := f.timeouts
	srv := &http.Server{
		Handler:           mw.Wrap(http.HandlerFunc(okHandler)),
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read,
		// The same as the middleware's (mw was built with it): this one
		// covers what the middleware does not answer, and is reset at each
		// request; the middleware's is set again after a shaper's delay.
		WriteTimeout: t.write,
		IdleTimeout:  t.idle,
		ErrorLog:     log.New(e.stderr, "serve: ", 0),
	}
	start := time.Now()
	table := ""
	if f.keyed != nil {
		table = fmt.Sprintf(", at most %d keys, %s when full", f.maxKeys, f.onFull)
	}
	fmt.Fprintf(e.stderr, "listening on http://%s (%s on %s, limit %d per %v per key%s)\n", ln.Addr(), f.algo, f.display, f.limit, f.window, table)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	err := e.logEverySecond(ctx, mw, served)
	shutdown, cancel := context.WithTimeout(context.Background(), t.grace)
	defer cancel()
	switch serr := srv.Shutdown(shutdown); {
	case errors.Is(serr, context.DeadlineExceeded):
		// Connections still busy after the grace: a client not reading its
		// responses (until the write timeout cuts it), requests a shaper
		// still holds. Cutting them is part of stopping, not a failure.
		_ = srv.Close()
		fmt.Fprintf(e.stderr, "shutdown: closed the connections still busy after %v\n", t.grace)
	case serr != nil && err == nil:
		err = fmt.Errorf("shutdown: %w", serr) // closing the listener failed
	}
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

// logEverySecond writes one line per second that saw requests: admitted
// and rejected in that second, then errors, bad_keys and table_full (of
// rejected, those refused by a full key table) when any is not zero. It
// returns nil when ctx is done, or the server's error if it stops first.
func (e *env) logEverySecond(ctx context.Context, mw *httplimit.Middleware, served <-chan error) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last httplimit.Stats
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case now := <-tick.C:
			s := mw.Stats()
			if d := (httplimit.Stats{Admitted: s.Admitted - last.Admitted, Rejected: s.Rejected - last.Rejected,
				Errors: s.Errors - last.Errors, BadKeys: s.BadKeys - last.BadKeys,
				TableFull: s.TableFull - last.TableFull}); d != (httplimit.Stats{}) {
				fmt.Fprintf(e.stderr, "%s admitted %d rejected %d", now.Format("15:04:05"), d.Admitted, d.Rejected)
				if d.Errors > 0 || d.BadKeys > 0 || d.TableFull > 0 {
					fmt.Fprintf(e.stderr, " errors %d bad_keys %d table_full %d", d.Errors, d.BadKeys, d.TableFull)
				}
				fmt.Fprintln(e.stderr)
			}
			last = s
		}
	}
}
