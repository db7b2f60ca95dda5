// Package redis keeps limiter state in Redis, shared by every process that
// reaches the same server or Cluster: token-bucket, gcra, fixed-window,
// sliding-log (a sorted set) and sliding-counter, each decided by one Lua
// script run with EVALSHA (loaded again on NOSCRIPT), plus an adapter for
// github.com/go-redis/redis_rate (redis-rate). A script holds its policy as
// constants (one script, one SHA-1, per algorithm and policy), so that a
// call sends only the keys, the instants and the costs; one call decides a
// batch of decisions in order (one decision without a Batcher).
//
// Decisions are the in-memory algorithms' decisions, field for field: on
// the same trace a Limiter here and its counterpart in package algorithms
// return the same Decision values (Remaining, RetryAfter and ResetAfter to
// the nanosecond, cost above capacity rejected with RetryAfter Never,
// clock-backwards rules included), which the tests check on random traces.
//
// Keys. A limiter built with prefix P keeps the state of key K under
// "{P:K}" (the sliding log also under "{P:K}:log"): the braces are a Cluster
// hash tag, so every key a script touches is in one slot. State is one
// string of little-endian int64 fields (the TAT's seconds and
// nanoseconds, a window's start and count, ...; see lua.go), the last of
// which, e, is the key's expiry in ms on Redis's clock.
// Every write leaves the key with a TTL, so no key is ever without one: at
// least the time the state still matters (a window, the time to refill)
// plus half of Options.TTLSlack; when a write would leave less, the TTL is
// set to the longest such time of the policy plus the slack, and other
// writes keep it (SET KEEPTTL, Redis 6.0 or later), which costs Redis less
// than setting it each time.
//
// Time. By default the instant comes from the caller (Allow's now, a
// duration since the caller's clock zero), so that virtual-time runs are
// exact and reproducible and every replica must share one clock zero. Lua
// numbers are doubles, exact only up to 2^53 (104 days in ns), so instants
// travel and are stored as whole seconds plus nanoseconds, and the scripts
// compute on differences, which the policy bounds: a policy whose window or
// burst*interval is above 2^51 ns (about 26 days) is rejected as invalid
// here, and the sliding log's limit is at most 2^24 as in memory. Instants
// themselves may be anything an int64 holds (the conformance suite's
// 100-year jump passes). When a request's instant is more than 2^53 ns (104
// days) before the stored state, the decision is still right but its
// RetryAfter and ResetAfter are approximate (to about a microsecond).
//
// With Options.ServerTime the scripts read Redis's own TIME instead and
// ignore now: one clock for many hosts, at the price of virtual time (the
// conformance suite cannot script it). On a Cluster each key's clock is the
// clock of the node that owns its slot. Windows are then aligned on the
// Unix epoch. The decisions of one batch share one reading of TIME. Every
// script reads TIME (the TTLs are on Redis's clock), so before Redis 5 the
// scripts switch to effects replication (redis.replicate_commands) first.
//
// Failures. Allow returns an error wrapping algorithms.ErrBackend (and
// context.DeadlineExceeded on a timeout); it never admits or rejects on its
// own: the caller's failure policy (call.Target.FailOpen) decides. The
// client should be built with ContextTimeoutEnabled so that Options.Timeout
// bounds network reads, and with retries off (MaxRetries -1): a script
// retried after its reply was lost would count a request twice. go-redis
// reconnects by itself once the server is back.
//
// Throughput. Each decision is one round trip and one script call; with
// Options.Batcher what concurrent callers ask while a batch is out is
// decided together in the next, one script call per script and Cluster
// slot, every decision getting the outcome it would get alone in the
// batch's order, which is worth it from a few concurrent callers up: Redis
// runs one script at a time, and most of a call's price is per call.
package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
)

// Options tune a Redis limiter. The zero value is usable.
type Options struct {
	// Timeout bounds each Allow (a context deadline); 0 means no deadline
	// beyond the client's own read and write timeouts.
	Timeout time.Duration
	// ServerTime makes the scripts read Redis's TIME instead of Allow's
	// now, which is then ignored.
	ServerTime bool
	// TTLSlack is the margin of every key's TTL beyond the time its state
	// still matters (at least half of it remains after any write; see
	// Keys), in case a virtual-time run goes slower than real time (a TTL
	// is real time); 0 means one minute, rounded up to a millisecond.
	TTLSlack time.Duration
	// Batcher, when set, decides concurrent decisions together in batches
	// (it must be on the same client); nil sends each on its own round
	// trip.
	Batcher *Batcher
}

// maxSpan bounds every span the scripts compute (window, burst*interval),
// so that sums of a few of them stay exact in a double: 2^51 ns, 26 days.
const maxSpan = time.Duration(1) << 51

// maxLogEntries is the sliding log's largest limit, as in memory.
const maxLogEntries = 1 << 24

// Names lists the algorithms this package keeps in Redis, in the order of
// algorithms/all, then the redis-rate peer (which reads Redis's clock).
func Names() []string {
	return []string{"token-bucket", "gcra", "fixed-window", "sliding-log", "sliding-counter", RedisRateName}
}

// New returns the limiter called name (one of Names) on client under
// prefix, or an error wrapping algorithms.ErrInvalidPolicy.
func New(name string, client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (algorithms.Limiter, error) {
	var l algorithms.Limiter
	var err error
	switch name {
	case "token-bucket":
		l, err = NewTokenBucket(client, prefix, p, opts)
	case "gcra":
		l, err = NewGCRA(client, prefix, p, opts)
	case "fixed-window":
		l, err = NewFixedWindow(client, prefix, p, opts)
	case "sliding-log":
		l, err = NewSlidingLog(client, prefix, p, opts)
	case "sliding-counter":
		l, err = NewSlidingCounter(client, prefix, p, opts)
	case RedisRateName:
		l, err = NewRedisRate(client, prefix, p, opts)
	default:
		return nil, fmt.Errorf("redis: unknown algorithm %q", name)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Limiter is one algorithm whose state lives in Redis, one state per key.
// The zero value is not usable; use the constructors. Safe for concurrent
// use: every decision is made inside one atomic script call (alone or in a
// batch); a Limiter holds no state of its own, so any number of them (in
// any number of processes) on the same client and prefix share quota.
type Limiter struct {
	name     string
	client   goredis.UniversalClient
	script   *goredis.Script
	algo     algorithm
	kind     kind
	prefix   string // "{" + prefix + ":"
	window   int64  // W in ns for window algorithms, else 0
	interval int64  // T in ns for bucket algorithms, else 0
	span     int64  // B*T in ns for bucket algorithms, else 0
	capacity int64  // largest cost ever admitted: B or L
	slack    int64  // ms
	timeout  time.Duration
	server   bool
	batcher  *Batcher
}

// newLimiter validates p and fills what every algorithm shares.
func newLimiter(name string, client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options, windowed bool) (*Limiter, algorithms.Policy, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, p, fmt.Errorf("redis: %s: %w", name, err)
	}
	if client == nil {
		return nil, p, fmt.Errorf("redis: %s: nil client", name)
	}
	if p.Window > maxSpan {
		return nil, p, fmt.Errorf("redis: %s: %w: window %v is above %v, the longest span the scripts keep exact", name, algorithms.ErrInvalidPolicy, p.Window, maxSpan)
	}
	// The hash tag is never empty, even for an empty prefix and key: an
	// empty tag would hash "{}" and "{}:log" to different Cluster slots.
	l := &Limiter{name: name, client: client, prefix: "{" + prefix + ":", timeout: opts.Timeout, server: opts.ServerTime, batcher: opts.Batcher}
	slack := opts.TTLSlack
	if slack <= 0 {
		slack = time.Minute
	}
	l.slack = max(int64((slack+time.Millisecond-1)/time.Millisecond), 1)
	if windowed {
		l.window = int64(p.Window)
		l.capacity = p.Limit
	} else {
		if time.Duration(p.Burst) > maxSpan/p.Interval() {
			return nil, p, fmt.Errorf("redis: %s: %w: burst %d at %v per unit is above %v, the longest span the scripts keep exact", name, algorithms.ErrInvalidPolicy, p.Burst, p.Interval(), maxSpan)
		}
		l.capacity = p.Burst
	}
	return l, p, nil
}

// NewGCRA returns a GCRA (one TAT per key) in Redis; see algorithms.GCRA.
func NewGCRA(client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (*Limiter, error) {
	l, p, err := newLimiter("gcra", client, prefix, p, opts, false)
	if err != nil {
		return nil, err
	}
	t := int64(p.Interval())
	l.kind, l.interval, l.span = kindGCRA, t, p.Burst*t
	l.build(gcraAlgo, p.Burst*t, t, p.Burst*t, p.Burst)
	return l, nil
}

// NewTokenBucket returns a token bucket (one empty-at instant per key) in
// Redis; see algorithms.TokenBucket.
func NewTokenBucket(client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (*Limiter, error) {
	l, p, err := newLimiter("token-bucket", client, prefix, p, opts, false)
	if err != nil {
		return nil, err
	}
	t := int64(p.Interval())
	l.kind, l.interval, l.span = kindTokenBucket, t, p.Burst*t
	l.build(tokenBucketAlgo, p.Burst*t, t, p.Burst*t, p.Burst)
	return l, nil
}

// NewFixedWindow returns a fixed window (the latest window's start and
// count per key) in Redis; see algorithms.FixedWindow.
func NewFixedWindow(client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (*Limiter, error) {
	l, p, err := newLimiter("fixed-window", client, prefix, p, opts, true)
	if err != nil {
		return nil, err
	}
	l.kind = kindFixedWindow
	l.build(fixedWindowAlgo, int64(p.Window), int64(p.Window), p.Limit)
	return l, nil
}

// NewSlidingLog returns an exact sliding log (a sorted set of admits per
// key, at most L members) in Redis; see algorithms.SlidingLog.
func NewSlidingLog(client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (*Limiter, error) {
	l, p, err := newLimiter("sliding-log", client, prefix, p, opts, true)
	if err != nil {
		return nil, err
	}
	if p.Limit > maxLogEntries {
		return nil, fmt.Errorf("redis: sliding-log: %w: limit %d is above %d, the largest log it keeps", algorithms.ErrInvalidPolicy, p.Limit, maxLogEntries)
	}
	l.kind = kindSlidingLog
	l.build(slidingLogAlgo, int64(p.Window), int64(p.Window), p.Limit)
	return l, nil
}

// NewSlidingCounter returns a sliding window counter (two counts per key)
// in Redis; see algorithms.SlidingCounter.
func NewSlidingCounter(client goredis.UniversalClient, prefix string, p algorithms.Policy, opts Options) (*Limiter, error) {
	l, p, err := newLimiter("sliding-counter", client, prefix, p, opts, true)
	if err != nil {
		return nil, err
	}
	l.kind = kindSlidingCounter
	l.build(slidingCounterAlgo, 2*int64(p.Window), int64(p.Window), p.Limit)
	return l, nil
}

// Name returns the algorithm's CLI name.
func (l *Limiter) Name() string { return l.name }

// Key returns the Redis key that holds key's state.
func (l *Limiter) Key(key string) string { return l.prefix + key + "}" }

// Allow implements algorithms.Limiter: one script call, or a place in a
// Batcher's next batch. With Options.ServerTime, now is ignored.
func (l *Limiter) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("redis: %s: %w: %d", l.name, algorithms.ErrInvalidCost, cost)
	}
	c := min(cost, l.capacity+1)
	if l.batcher != nil {
		r, err := l.batcher.run(l, l.Key(key), int64(now), c, l.timeout)
		if err != nil {
			return algorithms.Decision{}, backendError(l.name, errors.Is(err, context.DeadlineExceeded), err)
		}
		return l.decode(r[:l.algo.width], c), nil
	}
	ctx := context.Background()
	if l.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.timeout)
		defer cancel()
	}
	keys, args := l.appendRequest(make([]string, 0, 2), make([]any, 0, 5), l.Key(key), int64(now), c)
	r, err := l.script.Run(ctx, l.client, keys, args...).Int64Slice()
	if err != nil {
		return algorithms.Decision{}, backendError(l.name, ctx.Err() != nil, err)
	}
	if len(r) != l.algo.width {
		return algorithms.Decision{}, fmt.Errorf("redis: %s: %w: script replied %v", l.name, algorithms.ErrBackend, r)
	}
	return l.decode(r, c), nil
}

// appendRequest appends one decision's keys (key is the state key) and
// arguments (now in ns, cost clamped) to a script call's, in the layout
// lua.go describes.
func (l *Limiter) appendRequest(keys []string, args []any, key string, now, cost int64) ([]string, []any) {
	keys = append(keys, key)
	if l.algo.log {
		keys = append(keys, key+":log")
	}
	if l.server {
		return keys, append(args, cost)
	}
	s, ns := split(now)
	args = append(args, s, ns, cost)
	if l.algo.windowed {
		ws, wns := split(windowStart(now, l.window))
		args = append(args, ws, wns)
	}
	return keys, args
}

// build sets the limiter's script: a's body after its constants; longest
// is the longest span, in ns, a state of this policy can matter (see
// luaExpiry).
func (l *Limiter) build(a algorithm, longest int64, values ...int64) {
	l.algo = a
	l.script = scriptFor(a.source(values, l.slack, longest, l.server))
}

// split returns floor(t / 1s) and the nanoseconds past it, in [0, 1e9).
func split(t int64) (s, ns int64) {
	s, ns = t/1e9, t%1e9
	if ns < 0 {
		s, ns = s-1, ns+1e9
	}
	return s, ns
}

// windowStart is floor(t/w)*w, also for a negative t (as in memory).
func windowStart(t, w int64) int64 {
	r := t % w
	if r < 0 {
		r += w
	}
	return t - r
}

// SetClientLog sends go-redis's own log lines (e.g. "failed to dial" while
// a server is down) to w, io.Discard to drop them; go-redis writes them to
// stderr by default, across a terminal's progress bars. It is process-wide:
// call it from main, not from a library.
func SetClientLog(w io.Writer) {
	goredis.SetLogger(clientLog{log.New(w, "redis: ", log.LstdFlags)})
}

type clientLog struct{ l *log.Logger }

func (c clientLog) Printf(_ context.Context, format string, v ...any) { c.l.Printf(format, v...) }

// backendError wraps err with algorithms.ErrBackend and, when the call ran
// out of time (its deadline passed, or a network timeout), with
// context.DeadlineExceeded, so that callers can tell timeouts apart.
func backendError(name string, late bool, err error) error {
	var ne net.Error
	timeout := late || errors.As(err, &ne) && ne.Timeout()
	if timeout && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("redis: %s: %w: %w: %w", name, algorithms.ErrBackend, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("redis: %s: %w: %w", name, algorithms.ErrBackend, err)
}
