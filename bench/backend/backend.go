// Package backend builds the targets the engines drive: in memory, with
// per-key state sized for the workload (MemoryTargets, and the exact
// Reference a run's disagreement is measured against), or from a -backend
// value (memory, redis://, rediss://, redis+cluster://, sqlite://) for the
// algorithms that backend runs. It is where go-redis and SQLite come into
// a run, so that the engines need neither.
package backend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/redis"
	"github.com/ratebench/ratebench/algorithms/sqlite"
	"github.com/ratebench/ratebench/bench/call"
)

// ErrBad is wrapped by every error about a -backend value or about
// what it cannot run (an unknown scheme, a malformed URL, an algorithm the
// backend does not implement, a server-clock limiter in virtual time): a
// usage error, unlike a backend that cannot be reached (algorithms.ErrBackend).
var ErrBad = errors.New("bad backend")

// Backend kinds, as Target.Backend and result.json's "backend" name them.
const (
	Memory       = "memory"
	Redis        = "redis"
	RedisCluster = "redis-cluster"
	SQLite       = "sqlite"
)

// DefaultTimeout bounds each decision on a shared backend when
// Options.Timeout is zero.
const DefaultTimeout = time.Second

// Options tune Targets. The zero value is usable.
type Options struct {
	// Timeout bounds each decision (a context deadline); 0 means
	// DefaultTimeout. A decision that times out is an error of kind
	// "timeout".
	Timeout time.Duration
	// FailOpen admits a request whose decision failed (Target.FailOpen);
	// false rejects it. Either way the error is counted.
	FailOpen bool
	// ServerTime makes the Redis scripts read Redis's TIME instead of the
	// engine's instant: live runs only.
	ServerTime bool
	// Live is set by the live engine: the engine's instants are real time.
	// Without it, limiters that read Redis's clock (redis-rate, ServerTime)
	// are refused, since virtual time would mean nothing to them.
	Live bool
	// Workers is the live engine's number of sender goroutines: the Redis
	// connection pool holds at least that many connections, and when it is
	// above one, concurrent decisions are decided together (redis.Batcher:
	// what the workers ask while a batch is out goes as one script call per
	// algorithm and Cluster slot in the next).
	Workers int
	// NoBatch sends every Redis decision on its own round trip, whatever
	// Workers is.
	NoBatch bool
	// Prefix names the shared state: the Redis key prefix, the SQLite
	// scope. Processes that must share quota (several `ratebench serve`)
	// pass the same Prefix. "" means a fresh "ratebench:<random>" for this
	// call, so that a run never inherits state from another; the SQLite
	// rows of a fresh prefix are deleted by the close function.
	Prefix string
	// MaxKeys bounds the keys an in-memory limiter holds; 0 means no
	// bound: room for every key. Shared backends keep every key.
	MaxKeys int
	// Lossy allows a workload with more keys than MaxKeys: the in-memory
	// limiters then hold MaxKeys keys and, when full, forget a key with
	// state to take a new one (counted in Run.LossyEvictions). Without it
	// such a workload is an error wrapping ErrTooManyKeys.
	Lossy bool
}

// Parsed is a -backend value, checked but not connected to.
type Parsed struct {
	Kind    string // Memory, Redis, RedisCluster or SQLite
	Display string // the value with any password removed
	Path    string // SQLite: the file
	redis   *goredis.Options
	cluster *goredis.ClusterOptions
}

// Parse checks a -backend value without connecting: "memory" (or
// ""), redis://[USER:PASS@]HOST:PORT[/DB][?OPTIONS], rediss://... (TLS),
// redis+cluster://[USER:PASS@]H1:P1,H2:P2,...[?OPTIONS] (rediss+cluster://
// with TLS), sqlite://PATH (sqlite:///abs/path or sqlite://rel/path).
// OPTIONS are go-redis's URL options (dial_timeout=1s, pool_size=64, ...).
// Errors wrap ErrBad.
func Parse(backend string) (Parsed, error) {
	if backend == "" || strings.EqualFold(backend, Memory) {
		return Parsed{Kind: Memory, Display: Memory}, nil
	}
	scheme, rest, ok := strings.Cut(backend, "://")
	if !ok {
		return Parsed{}, badBackend(backend, "want memory, redis://HOST:PORT[/DB], rediss://..., redis+cluster://H1:P1,H2:P2,... or sqlite://PATH")
	}
	switch strings.ToLower(scheme) {
	case "redis", "rediss":
		o, err := goredis.ParseURL(backend)
		if err != nil {
			return Parsed{}, badBackend(redact(backend), err.Error())
		}
		return Parsed{Kind: Redis, Display: redact(backend), redis: o}, nil
	case "redis+cluster", "rediss+cluster":
		o, err := parseCluster(strings.TrimSuffix(strings.ToLower(scheme), "+cluster"), rest)
		if err != nil {
			return Parsed{}, badBackend(redactCluster(scheme, rest), err.Error())
		}
		return Parsed{Kind: RedisCluster, Display: redactCluster(scheme, rest), cluster: o}, nil
	case "sqlite":
		if rest == "" || strings.ContainsAny(rest, "?#") {
			return Parsed{}, badBackend(backend, "want sqlite://PATH, a file path without ? or #")
		}
		return Parsed{Kind: SQLite, Display: backend, Path: rest}, nil
	}
	return Parsed{}, badBackend(backend, fmt.Sprintf("unknown scheme %q", scheme))
}

func badBackend(backend, why string) error {
	return fmt.Errorf("%w %q: %s", ErrBad, backend, why)
}

// parseCluster reads [USER:PASS@]H1:P1,H2:P2[/0][?OPTIONS] through
// go-redis's cluster URL form (the first host, then addr= for the others).
func parseCluster(scheme, rest string) (*goredis.ClusterOptions, error) {
	rest, query, _ := strings.Cut(rest, "?")
	user, hosts, hasUser := strings.Cut(rest, "@")
	if !hasUser {
		user, hosts = "", rest
	}
	hosts, db, _ := strings.Cut(hosts, "/")
	if db != "" && db != "0" {
		return nil, fmt.Errorf("a cluster has only database 0, not %q", db)
	}
	var addrs []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			return nil, errors.New("an empty host in the list")
		}
		addrs = append(addrs, h)
	}
	u := scheme + "://"
	if hasUser {
		u += user + "@"
	}
	u += addrs[0] + "?" + query
	for _, a := range addrs[1:] {
		u += "&addr=" + url.QueryEscape(a)
	}
	return goredis.ParseClusterURL(u)
}

// redact removes the password of a URL, for messages.
func redact(backend string) string {
	u, err := url.Parse(backend)
	if err != nil {
		return backend
	}
	return u.Redacted()
}

func redactCluster(scheme, rest string) string {
	if user, hosts, ok := strings.Cut(rest, "@"); ok {
		name, _, _ := strings.Cut(user, ":")
		return scheme + "://" + name + ":xxxxx@" + hosts
	}
	return scheme + "://" + rest
}

// algorithmsOf returns the algorithms a backend kind implements, the
// default set first (what an empty names list runs): every algorithm for
// memory; for Redis the five exact scripts, then redis-rate (named only:
// it reads Redis's clock); fixed-window for SQLite.
func algorithmsOf(kind string) []string {
	switch kind {
	case Memory:
		return all.Names()
	case Redis, RedisCluster:
		return redis.Names()
	case SQLite:
		return []string{"fixed-window"}
	}
	return nil
}

// Targets builds the targets for the named algorithms (the
// backend's default set when names is empty) under policy p on backend (a
// -backend value, see Parse). "memory" is MemoryTargets. On Redis
// and SQLite every replica's New returns a limiter on the same client (or
// file) and the same prefix, so the replicas share quota, one state per
// key; keys only matters to memory. The close function releases the
// clients; call it once the engine is done, also after an error of the run.
//
// Errors: ErrBad for a bad value or an algorithm the backend lacks
// (or a server-clock limiter without Live), algorithms.ErrInvalidPolicy for
// a policy the backend cannot keep exact (e.g. a Redis window above 26
// days), algorithms.ErrBackend when the backend cannot be reached (the
// Redis PING or the SQLite open failed).
func Targets(names []string, p algorithms.Policy, keys, replicas int, backend string, opts Options) ([]call.Target, func() error, error) {
	b, err := Parse(backend)
	if err != nil {
		return nil, nil, err
	}
	if b.Kind == Memory {
		targets, err := MemoryTargets(names, p, Keys{N: keys, Max: opts.MaxKeys, Lossy: opts.Lossy}, replicas)
		for i := range targets {
			targets[i].FailOpen = opts.FailOpen
		}
		return targets, func() error { return nil }, err
	}
	if p, err = p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w", err)
	}
	if names, err = backendNames(b.Kind, names, opts); err != nil {
		return nil, nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	fresh := opts.Prefix == ""
	if fresh {
		opts.Prefix = freshPrefix()
	}
	if b.Kind == SQLite {
		return sqliteTargets(b, names, p, replicas, opts, fresh)
	}
	return redisTargets(b, names, p, replicas, opts)
}

// backendNames defaults and checks the algorithm names for a backend.
func backendNames(kind string, names []string, opts Options) ([]string, error) {
	have := algorithmsOf(kind)
	if len(names) == 0 {
		names = slices.Clone(have)
		if kind != SQLite {
			names = slices.DeleteFunc(names, func(n string) bool { return n == redis.RedisRateName })
		}
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("%w: %s has no %s backend (it has: %s)", ErrBad, n, kind, strings.Join(have, ", "))
		}
		if !opts.Live && (opts.ServerTime || n == redis.RedisRateName) {
			return nil, fmt.Errorf("%w: %s reads Redis's own clock, which virtual time (sim mode) cannot drive: use the live mode", ErrBad, serverClockName(n))
		}
		out = append(out, n)
	}
	return out, nil
}

func serverClockName(n string) string {
	if n == redis.RedisRateName {
		return n
	}
	return n + " with the server's time"
}

// freshPrefix is "ratebench:" and 12 random hex digits.
func freshPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ratebench:" + hex.EncodeToString(b[:])
}

// theory is the worst case of name (redis-rate is a GCRA).
func theory(name string, p algorithms.Policy) int64 {
	if name == redis.RedisRateName {
		name = "gcra"
	}
	e, err := all.Lookup(name)
	if err != nil {
		return 0
	}
	return e.Theory(p)
}

// redisTargets connects, checks with PING, and builds one target per name.
func redisTargets(b Parsed, names []string, p algorithms.Policy, replicas int, opts Options) ([]call.Target, func() error, error) {
	pool := max(opts.Workers+opts.Workers/4, 10*runtime.GOMAXPROCS(0))
	var client goredis.UniversalClient
	if b.cluster != nil {
		o := *b.cluster
		o.ContextTimeoutEnabled = true
		if o.MaxRetries == 0 {
			o.MaxRetries = -1 // a retried script could count a request twice
		}
		o.PoolSize = max(o.PoolSize, pool)
		if o.DialerRetries == 0 {
			o.DialerRetries = 1 // fail fast while the server is down
		}
		client = goredis.NewClusterClient(&o)
	} else {
		o := *b.redis
		o.ContextTimeoutEnabled = true
		if o.MaxRetries == 0 {
			o.MaxRetries = -1
		}
		o.PoolSize = max(o.PoolSize, pool)
		if o.DialerRetries == 0 {
			o.DialerRetries = 1
		}
		client = goredis.NewClient(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(opts.Timeout, 2*time.Second))
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("%s: %w: %w", b.Display, algorithms.ErrBackend, err)
	}
	ropts := redis.Options{Timeout: opts.Timeout, ServerTime: opts.ServerTime}
	var batcher *redis.Batcher
	if opts.Workers > 1 && !opts.NoBatch {
		// Each decision keeps its own deadline (opts.Timeout) inside its
		// batch; the batch's bound only matters without one.
		batcher = redis.NewBatcher(client, redis.BatchOptions{Timeout: max(opts.Timeout, time.Second)})
		ropts.Batcher = batcher
	}
	closeAll := func() error {
		if batcher != nil {
			batcher.Close()
		}
		return client.Close()
	}
	targets := make([]call.Target, 0, len(names))
	for _, name := range names {
		prefix := opts.Prefix + ":" + name
		newLimiter := func() (algorithms.Limiter, error) {
			return redis.New(name, client, prefix, p, ropts)
		}
		if _, err := newLimiter(); err != nil { // a policy Redis cannot keep exact
			closeAll()
			return nil, nil, fmt.Errorf("%w", err)
		}
		targets = append(targets, call.Target{
			Name: name, Backend: b.Kind, Replicas: replicas, Theory: theory(name, p),
			FailOpen: opts.FailOpen, New: newLimiter,
		})
	}
	return targets, closeAll, nil
}

// sqliteTargets opens the file and builds the fixed-window target.
func sqliteTargets(b Parsed, names []string, p algorithms.Policy, replicas int, opts Options, fresh bool) ([]call.Target, func() error, error) {
	db, err := sqlite.Open(b.Path, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%w", err)
	}
	scope := opts.Prefix + ":fixed-window"
	var mu sync.Mutex
	var made []*sqlite.FixedWindow
	closeAll := func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for _, l := range made {
			errs = append(errs, l.Close())
		}
		if fresh {
			errs = append(errs, sqlite.Forget(context.Background(), db, scope))
		}
		return errors.Join(append(errs, db.Close())...)
	}
	newLimiter := func() (algorithms.Limiter, error) {
		l, err := sqlite.NewFixedWindow(db, scope, p, sqlite.Options{Timeout: opts.Timeout})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		made = append(made, l)
		mu.Unlock()
		return l, nil
	}
	targets := make([]call.Target, 0, len(names))
	for _, name := range names {
		targets = append(targets, call.Target{
			Name: name, Backend: b.Kind, Replicas: replicas, Theory: theory(name, p),
			FailOpen: opts.FailOpen, New: newLimiter,
		})
	}
	return targets, closeAll, nil
}
