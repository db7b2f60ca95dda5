package keyed_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/algorithms/peers"
)

// t0 is the instant the scripts start at.
const t0 = 3 * time.Second

// four is 10 per second (T = 100ms) with a burst of 4.
var four = algorithms.Policy{Limit: 10, Window: time.Second, Burst: 4}

func newGCRA(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }

func newTokenBucket(p algorithms.Policy) (algorithms.Limiter, error) {
	return algorithms.NewTokenBucket(p)
}

// opaque hides the WordRule of the limiter it wraps, so that keyed takes
// its generic path with an algorithm known to be correct.
type opaque struct{ l algorithms.Limiter }

func (o opaque) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	return o.l.Allow(now, key, cost)
}

// hidden returns a constructor like nl whose limiters hide their WordRule.
func hidden(nl func(algorithms.Policy) (algorithms.Limiter, error)) func(algorithms.Policy) (algorithms.Limiter, error) {
	return func(p algorithms.Policy) (algorithms.Limiter, error) {
		l, err := nl(p)
		if err != nil {
			return nil, err
		}
		return opaque{l}, nil
	}
}

var newOpaqueGCRA = hidden(newGCRA)

// paths are the per-key layouts every behavioural test runs on.
var paths = []struct {
	name       string
	newLimiter func(algorithms.Policy) (algorithms.Limiter, error)
}{
	{"compact/gcra", newGCRA},
	{"compact/token-bucket", newTokenBucket},
	{"generic/gcra", newOpaqueGCRA},
}

// limiter turns a constructor of a concrete type into one of a Limiter.
func limiter[L algorithms.Limiter](f func(algorithms.Policy) (L, error)) func(algorithms.Policy) (algorithms.Limiter, error) {
	return func(p algorithms.Policy) (algorithms.Limiter, error) {
		l, err := f(p)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// algos are every in-memory limiter that rejects, on every layout it can
// take: keyed is checked over them with the conformance suite, against one
// limiter per key, and under a flood of new keys.
// keyedAlgo is an algorithm the keyed limiter is tested with: its name is
// "compact/" or "generic/" (the path keyed takes) and its name in the
// list, whose entry gives its traits.
type keyedAlgo struct {
	name       string
	newLimiter func(algorithms.Policy) (algorithms.Limiter, error)
	// idle is how long after a decision the state is sure to be as good
	// as new when that is longer than its ResetAfter (algorithms.Idler).
	idle time.Duration
	skip map[string]string
}

// entry is the algorithm's entry in the list.
func (a keyedAlgo) entry() all.Entry {
	_, name, _ := strings.Cut(a.name, "/")
	e, err := all.Lookup(name)
	if err != nil {
		panic(err) // the table names only listed algorithms
	}
	return e
}

var algos = []keyedAlgo{
	{name: "compact/gcra", newLimiter: newGCRA},
	{name: "compact/token-bucket", newLimiter: newTokenBucket},
	{name: "generic/gcra", newLimiter: newOpaqueGCRA},
	{name: "generic/token-bucket", newLimiter: hidden(newTokenBucket)},
	{name: "generic/leaky-bucket", newLimiter: limiter(algorithms.NewLeakyBucket)},
	{name: "generic/leaky-queue", newLimiter: limiter(algorithms.NewLeakyQueue)},
	{name: "generic/fixed-window", newLimiter: limiter(algorithms.NewFixedWindow)},
	{name: "generic/sliding-log", newLimiter: limiter(algorithms.NewSlidingLog)},
	{name: "generic/sliding-counter", newLimiter: limiter(algorithms.NewSlidingCounter)},
	{name: "generic/fixed-window-first", newLimiter: limiter(algorithms.NewFixedWindowFirst)},
	{name: "generic/sliding-log-all", newLimiter: limiter(algorithms.NewSlidingLogAll)},
	{name: "generic/sliding-counter-all", newLimiter: limiter(algorithms.NewSlidingCounterAll)},
	{name: "compact/token-bucket-debt", newLimiter: limiter(algorithms.NewTokenBucketDebt)},
	{name: "generic/token-bucket-debt", newLimiter: hidden(limiter(algorithms.NewTokenBucketDebt))},
	{name: "generic/nginx-limit-req", newLimiter: limiter(algorithms.NewNginxLimitReq)},
	{name: "generic/httprate", newLimiter: limiter(algorithms.NewHTTPRate)},
	{name: "generic/haproxy-req-rate", newLimiter: limiter(algorithms.NewHAProxyReqRate),
		idle: 2 * four.Window},
	{name: "generic/x-rate", newLimiter: peers.NewXRateLimiter, skip: map[string]string{
		"ClockBackwards": "x/time/rate creates quota when time goes back (see peers)",
	}},
}

func mustNew(tb testing.TB, p algorithms.Policy, nl func(algorithms.Policy) (algorithms.Limiter, error), o keyed.Options) *keyed.Limiter {
	tb.Helper()
	l, err := keyed.New(p, nl, o)
	if err != nil {
		tb.Fatalf("New(%v, %+v) = %v", p, o, err)
	}
	return l
}

// allow fails the test on an error.
func allow(tb testing.TB, l *keyed.Limiter, at time.Duration, key string, cost int64) algorithms.Decision {
	tb.Helper()
	d, err := l.Allow(at, key, cost)
	if err != nil {
		tb.Fatalf("Allow(t0%+v, %q, %d) = %v", at-t0, key, cost, err)
	}
	return d
}

// drain admits unit requests for key at one instant until the first
// rejection and returns how many were admitted.
func drain(tb testing.TB, l *keyed.Limiter, at time.Duration, key string) int {
	tb.Helper()
	for n := 0; ; n++ {
		if !allow(tb, l, at, key, 1).Allowed {
			return n
		}
	}
}

func TestConformance(t *testing.T) {
	for _, algo := range algos {
		for _, opts := range []keyed.Options{
			{},                      // the defaults
			{MaxKeys: 1, Shards: 1}, // the smallest table: one key, one slot
		} {
			t.Run(fmt.Sprintf("%s/MaxKeys=%d", algo.name, opts.MaxKeys), func(t *testing.T) {
				cfg := algotest.ForEntry(algo.entry())
				cfg.Skip = algo.skip
				cfg.New = func(p algorithms.Policy) (algorithms.Limiter, error) {
					return keyed.New(p, algo.newLimiter, opts)
				}
				algotest.Run(t, cfg)
			})
		}
	}
}

// TestPaths checks that WordRule limiters take the compact path (the
// constructor is called once) and others the generic one (once per key).
func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		name       string
		newLimiter func(algorithms.Policy) (algorithms.Limiter, error)
		calls      int // constructor calls for 10 keys
	}{
		{"gcra is compact", newGCRA, 1},                   // one prototype, its rule shared by all keys
		{"token bucket is compact", newTokenBucket, 1},    // same
		{"opaque gcra is generic", newOpaqueGCRA, 1 + 10}, // the prototype, then one per key
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			l := mustNew(t, four, func(p algorithms.Policy) (algorithms.Limiter, error) {
				calls++
				return tc.newLimiter(p)
			}, keyed.Options{})
			for i := range 10 {
				allow(t, l, t0, fmt.Sprint("k", i), 1)
				allow(t, l, t0, fmt.Sprint("k", i), 1) // an existing key: no new limiter
			}
			if calls != tc.calls {
				t.Fatalf("constructor called %d times for 10 keys, want %d", calls, tc.calls)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy algorithms.Policy
		nl     func(algorithms.Policy) (algorithms.Limiter, error)
		opts   keyed.Options
		want   error
	}{
		{"invalid policy", algorithms.Policy{Limit: 0, Window: time.Second}, newGCRA, keyed.Options{}, algorithms.ErrInvalidPolicy}, // the constructor's error, wrapped
		{"nil constructor", four, nil, keyed.Options{}, keyed.ErrInvalidOptions},                                                    // nothing to make limiters with
		{"negative MaxKeys", four, newGCRA, keyed.Options{MaxKeys: -1}, keyed.ErrInvalidOptions},                                    // no silent clamp
		{"negative Shards", four, newGCRA, keyed.Options{Shards: -2}, keyed.ErrInvalidOptions},                                      // same
		{"Shards not a power of two", four, newGCRA, keyed.Options{Shards: 3}, keyed.ErrInvalidOptions},                             // shard = top hash bits
		{"more Shards than MaxKeys", four, newGCRA, keyed.Options{MaxKeys: 4, Shards: 8}, keyed.ErrInvalidOptions},                  // some shard could hold no key
		{"negative IdleAfter", four, newOpaqueGCRA, keyed.Options{IdleAfter: -time.Second}, keyed.ErrInvalidOptions},                // a key would be idle before it is used
		{"too many keys per shard", four, newGCRA, keyed.Options{MaxKeys: 1 << 32, Shards: 1}, keyed.ErrInvalidOptions},             // slot indices are 31 bits
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "too many keys per shard" && unsafe.Sizeof(int(0)) < 8 {
				t.Skip("needs 64-bit int")
			}
			if _, err := keyed.New(tc.policy, tc.nl, tc.opts); !errors.Is(err, tc.want) {
				t.Fatalf("New(%v, %+v) error = %v, want %v", tc.policy, tc.opts, err, tc.want)
			}
		})
	}
}

func TestKeysAreIndependent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exhaust string // the key whose quota is used up
		other   string // a key that must still be full
	}{
		{"distinct keys", "a", "b"},                  // the basic case
		{"prefix", "ab", "a"},                        // a prefix of a key is another key
		{"empty key", "", "a"},                       // "" is a key like any other
		{"case", "Key", "key"},                       // keys are bytes, not folded
		{"one byte apart", "user:1000", "user:1001"}, // same length, same prefix
		{"not UTF-8", "\xff\x00", "\xff\x01"},        // any bytes
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) {
				l := mustNew(t, four, path.newLimiter, keyed.Options{})
				if got := drain(t, l, t0, tc.exhaust); got != 4 {
					t.Fatalf("key %q admitted %d at one instant, want 4", tc.exhaust, got)
				}
				if got := drain(t, l, t0, tc.other); got != 4 {
					t.Fatalf("key %q admitted %d after %q was exhausted, want 4", tc.other, got, tc.exhaust)
				}
				if d := allow(t, l, t0, tc.exhaust, 1); d.Allowed {
					t.Fatalf("key %q admitted again after %q was used: %+v", tc.exhaust, tc.other, d)
				}
				if got := l.Stats().Keys; got != 2 {
					t.Fatalf("Stats().Keys = %d, want 2", got)
				}
			})
		}
	}
}

// TestKeyIsCopied: the caller may reuse the bytes of a key it passed.
func TestKeyIsCopied(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			l := mustNew(t, four, path.newLimiter, keyed.Options{})
			buf := []byte("alpha")
			drain(t, l, t0, unsafe.String(&buf[0], len(buf))) // aliases buf
			copy(buf, "bravo")
			if d := allow(t, l, t0, "alpha", 1); d.Allowed {
				t.Fatalf(`"alpha" admitted after its buffer was reused: %+v`, d)
			}
			if d := allow(t, l, t0, "bravo", 1); !d.Allowed {
				t.Fatalf(`"bravo" rejected, as if it had taken "alpha"'s state: %+v`, d)
			}
		})
	}
}

// TestRejectedNewKeyIsNotStored: a request that a fresh state rejects
// (cost above the burst) consumes nothing, so it stores no key and evicts
// none; in a full table the new key is refused before it is decided.
func TestRejectedNewKeyIsNotStored(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxKeys int
		want    algorithms.Decision // for "big", cost 5 over burst 4
	}{
		{"room for it", 2, algorithms.Decision{Remaining: 4, RetryAfter: algorithms.Never}},                                             // the fresh state's answer
		{"table full", 1, algorithms.Decision{TableFull: true, RetryAfter: 400 * time.Millisecond, ResetAfter: 400 * time.Millisecond}}, // "held" is full again at t0+4T
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) {
				l := mustNew(t, four, path.newLimiter, keyed.Options{MaxKeys: tc.maxKeys, Shards: 1})
				drain(t, l, t0, "held")
				if d := allow(t, l, t0, "big", 5); d != tc.want {
					t.Fatalf("cost 5 over burst 4 = %+v, want %+v", d, tc.want)
				}
				if s := l.Stats(); s.Keys != 1 || s.Evictions != 0 {
					t.Fatalf("Stats() = %+v, want the held key kept and no eviction", s)
				}
				if d := allow(t, l, t0, "held", 1); d.Allowed {
					t.Fatalf(`"held" admitted again: it was evicted: %+v`, d)
				}
			})
		}
	}
}

// TestRejectedNewKeyThatCountsIsStored: a limiter that counts denied
// requests takes quota for a rejection, even on a fresh state (a cost above
// the capacity): the new key is stored with that state, on both layouts, so
// that its next request is decided as its own limiter decides it rather
// than on a fresh state again.
func TestRejectedNewKeyThatCountsIsStored(t *testing.T) {
	never := algorithms.Never
	for _, tc := range []struct {
		name        string
		newLimiter  func(algorithms.Policy) (algorithms.Limiter, error)
		big         int64               // a cost above the capacity
		first, next algorithms.Decision // for big, then for 1 at the same instant
	}{
		// -1 token after a cost of 5 from a full bucket of 4, -2 after the next.
		{"compact/token-bucket-debt", limiter(algorithms.NewTokenBucketDebt), 5,
			algorithms.Decision{RetryAfter: never, ResetAfter: 500 * time.Millisecond},
			algorithms.Decision{RetryAfter: 300 * time.Millisecond, ResetAfter: 600 * time.Millisecond}},
		{"generic/token-bucket-debt", hidden(limiter(algorithms.NewTokenBucketDebt)), 5,
			algorithms.Decision{RetryAfter: never, ResetAfter: 500 * time.Millisecond},
			algorithms.Decision{RetryAfter: 300 * time.Millisecond, ResetAfter: 600 * time.Millisecond}},
		// 11 recorded as 10 = L: nothing fits until it leaves, W later.
		{"generic/sliding-log-all", limiter(algorithms.NewSlidingLogAll), 11,
			algorithms.Decision{RetryAfter: never, ResetAfter: time.Second},
			algorithms.Decision{RetryAfter: time.Second, ResetAfter: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, four, tc.newLimiter, keyed.Options{MaxKeys: 2, Shards: 1})
			own, err := tc.newLimiter(four)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []struct {
				cost int64
				want algorithms.Decision
			}{{tc.big, tc.first}, {1, tc.next}} {
				d := allow(t, l, t0, "new", r.cost)
				if ownD, err := own.Allow(t0, "new", r.cost); err != nil || d != r.want || ownD != r.want {
					t.Fatalf("Allow(t0, %d) = %+v, its own limiter %+v, %v; want %+v", r.cost, d, ownD, err, r.want)
				}
				if s := l.Stats(); s.Keys != 1 {
					t.Fatalf("Stats() = %+v after a rejection that counted, want the key held", s)
				}
			}
		})
	}
}

func TestEvictionCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		onFull keyed.OnFull
		want   keyed.Stats
	}{
		{"reject", keyed.Reject, keyed.Stats{Keys: 4, TableFull: 6}},                             // the default: refuse, lose nothing
		{"evict lossy", keyed.EvictLossy, keyed.Stats{Keys: 4, Evictions: 6, LossyEvictions: 6}}, // each state in use: lossy
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) {
				l := mustNew(t, four, path.newLimiter, keyed.Options{MaxKeys: 4, Shards: 1, OnFull: tc.onFull})
				for i := range 10 {
					allow(t, l, t0, fmt.Sprint("k", i), 1)
				}
				if got := l.Stats(); got != tc.want {
					t.Fatalf("after 10 keys in a table of 4: Stats() = %+v, want %+v", got, tc.want)
				}
			})
		}
	}
}

// TestEvictionPrefersFull: with three keys exhausted and one full again,
// a new key evicts the full one, losslessly.
func TestEvictionPrefersFull(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			l := mustNew(t, four, path.newLimiter, keyed.Options{MaxKeys: 4, Shards: 1})
			drain(t, l, t0, "busy1")
			allow(t, l, t0-time.Hour, "idle", 1) // long full again by t0
			drain(t, l, t0, "busy2")
			drain(t, l, t0, "busy3")
			allow(t, l, t0, "new", 1)
			want := keyed.Stats{Keys: 4, Evictions: 1, LossyEvictions: 0}
			if got := l.Stats(); got != want {
				t.Fatalf("Stats() = %+v, want %+v", got, want)
			}
			for _, k := range []string{"busy1", "busy2", "busy3"} {
				if d := allow(t, l, t0, k, 1); d.Allowed {
					t.Fatalf("%q admitted again at t0: it was evicted instead of the full key: %+v", k, d)
				}
			}
		})
	}
}

// TestOnFull: when no key is full again, Reject refuses the new key until
// the soonest one is, and EvictLossy evicts that one: on either layout the
// key whose state is full again the soonest ("light", one unit used), not
// the least recently used.
func TestOnFull(t *testing.T) {
	for _, tc := range []struct {
		name      string
		onFull    keyed.OnFull
		want      algorithms.Decision // for "new" at t0+2ms
		wantStats keyed.Stats
	}{
		{"reject", keyed.Reject, algorithms.Decision{TableFull: true, RetryAfter: 98 * time.Millisecond, ResetAfter: 98 * time.Millisecond}, keyed.Stats{Keys: 2, TableFull: 1}},
		{"evict lossy", keyed.EvictLossy, algorithms.Decision{Allowed: true, Remaining: 3, ResetAfter: 100 * time.Millisecond}, keyed.Stats{Keys: 2, Evictions: 1, LossyEvictions: 1}},
	} {
		for _, path := range paths {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) {
				l := mustNew(t, four, path.newLimiter, keyed.Options{MaxKeys: 2, Shards: 1, OnFull: tc.onFull})
				allow(t, l, t0, "light", 1)               // full again at t0+100ms
				drain(t, l, t0+time.Millisecond, "heavy") // full again at t0+401ms, used later
				if d := allow(t, l, t0+2*time.Millisecond, "new", 1); d != tc.want {
					t.Fatalf(`"new" = %+v, want %+v`, d, tc.want)
				}
				if got := l.Stats(); got != tc.wantStats {
					t.Fatalf("Stats() = %+v, want %+v", got, tc.wantStats)
				}
				if d := allow(t, l, t0+2*time.Millisecond, "heavy", 1); d.Allowed {
					t.Fatalf(`"heavy" admitted again: it was evicted instead of "light": %+v`, d)
				}
			})
		}
	}
}

func TestSweep(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			// One shard, so that 100 keys fill the table exactly.
			l := mustNew(t, four, path.newLimiter, keyed.Options{MaxKeys: 100, Shards: 1})
			allow(t, l, t0-time.Hour, "idle1", 1)
			allow(t, l, t0-time.Minute, "idle2", 1)
			busy := []string{"busy1", "busy2", "busy3"}
			for _, k := range busy {
				drain(t, l, t0, k)
			}
			if got := l.Sweep(t0); got != 2 {
				t.Fatalf("Sweep(t0) = %d, want 2 (the idle keys)", got)
			}
			if got := l.Stats().Keys; got != 3 {
				t.Fatalf("after Sweep: Keys = %d, want 3", got)
			}
			for _, k := range busy {
				if d := allow(t, l, t0, k, 1); d.Allowed {
					t.Fatalf("%q admitted again after Sweep: it lost its state: %+v", k, d)
				}
			}
			if got := l.Sweep(t0); got != 0 {
				t.Fatalf("second Sweep(t0) = %d, want 0", got)
			}
			if got := l.Sweep(t0 + time.Hour); got != 3 {
				t.Fatalf("Sweep(t0+1h) = %d, want 3", got)
			}
			for i := range 100 { // freed slots are reused; the bound still holds
				allow(t, l, t0, fmt.Sprint("k", i), 1)
			}
			if got := l.Stats(); got.Keys != 100 || got.Evictions != 0 {
				t.Fatalf("after reuse: Stats() = %+v, want 100 keys and no eviction", got)
			}
		})
	}
}

// TestSweepAllShards: Sweep visits every shard and drops exactly the keys
// that are full again.
func TestSweepAllShards(t *testing.T) {
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			l := mustNew(t, four, path.newLimiter, keyed.Options{}) // 64 shards
			for i := range 1000 {
				if i%2 == 0 {
					allow(t, l, t0-time.Hour, fmt.Sprint("k", i), 1) // full again by t0
				} else {
					allow(t, l, t0, fmt.Sprint("k", i), 1) // in use at t0
				}
			}
			if got := l.Sweep(t0); got != 500 {
				t.Fatalf("Sweep(t0) = %d, want 500", got)
			}
			if got := l.Stats().Keys; got != 500 {
				t.Fatalf("after Sweep: Keys = %d, want 500", got)
			}
		})
	}
}

// TestSweepGenericResetAt: on the generic path a key is swept from the
// latest now+max(ResetAfter, IdleAfter) of its decisions, and not a
// nanosecond earlier.
func TestSweepGenericResetAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts keyed.Options
		idle time.Duration
	}{
		{"default", keyed.Options{}, 100 * time.Millisecond},                                               // ResetAfter of one unit, T = 100ms
		{"IdleAfter above ResetAfter", keyed.Options{IdleAfter: time.Minute}, time.Minute},                 // the option wins
		{"IdleAfter below ResetAfter", keyed.Options{IdleAfter: time.Millisecond}, 100 * time.Millisecond}, // ResetAfter wins
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, four, newOpaqueGCRA, tc.opts)
			allow(t, l, t0, "k", 1)
			if got := l.Sweep(t0 + tc.idle - 1); got != 0 {
				t.Fatalf("Sweep(t0+%v-1ns) = %d, want 0", tc.idle, got)
			}
			if got := l.Sweep(t0 + tc.idle); got != 1 {
				t.Fatalf("Sweep(t0+%v) = %d, want 1", tc.idle, got)
			}
		})
	}
}

func TestBoundHoldsExactly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxKeys int
		shards  int
		keys    int // distinct keys inserted
	}{
		{"one shard", 5, 1, 100},                     // every insert past 5 is refused or evicts
		{"shares with a remainder", 100, 8, 2000},    // 100 = 8*12 + 4: shares of 13 and 12
		{"default shards reduced", 10, 0, 2000},      // 10 keys: 1 shard, not 64
		{"one key per shard", 64, 64, 5000},          // the smallest share
		{"default everything, few keys", 0, 0, 1000}, // no eviction at all
	} {
		for _, onFull := range []keyed.OnFull{keyed.Reject, keyed.EvictLossy} {
			t.Run(tc.name+"/"+onFull.String(), func(t *testing.T) {
				l := mustNew(t, four, newGCRA, keyed.Options{MaxKeys: tc.maxKeys, Shards: tc.shards, OnFull: onFull})
				limit := tc.maxKeys
				if limit == 0 {
					limit = 1 << 20
				}
				for i := range tc.keys {
					allow(t, l, t0, fmt.Sprint("k", i), 1)
					if got := l.Stats().Keys; got > limit {
						t.Fatalf("after %d keys: Stats().Keys = %d > MaxKeys %d", i+1, got, limit)
					}
				}
				// Every shard gets far more keys than its share, so all fill.
				want := keyed.Stats{Keys: min(limit, tc.keys)}
				over := int64(tc.keys - want.Keys)
				if onFull == keyed.Reject {
					want.TableFull = over // every key is in use at t0: none can go
				} else {
					want.Evictions, want.LossyEvictions = over, over
				}
				if got := l.Stats(); got != want {
					t.Fatalf("after %d keys: Stats() = %+v, want %+v", tc.keys, got, want)
				}
			})
		}
	}
}

// TestConcurrentKeysExactQuota: many goroutines on many keys at one
// instant; each key admits exactly its burst (run with -race).
func TestConcurrentKeysExactQuota(t *testing.T) {
	const (
		goroutines = 16
		keys       = 300
	)
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			l := mustNew(t, four, path.newLimiter, keyed.Options{Shards: 4})
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprint("key", i)
			}
			var admitted [keys]atomic.Int64
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for round := range 8 { // twice the burst per goroutine, keys in a shifted order
						for j := range keys {
							k := (j + g*17 + round) % keys
							d, err := l.Allow(t0, names[k], 1)
							if err != nil {
								t.Error(err)
								return
							}
							if d.Allowed {
								admitted[k].Add(1)
							}
						}
					}
				})
			}
			wg.Wait()
			for k := range admitted {
				if got := admitted[k].Load(); got != 4 {
					t.Fatalf("key %q admitted %d, want exactly 4", names[k], got)
				}
			}
		})
	}
}

// TestConcurrentChurn: deciding, evicting, refusing, sweeping and reading
// stats at once keeps the bound and returns no error (run with -race).
func TestConcurrentChurn(t *testing.T) {
	const maxKeys = 16
	for _, onFull := range []keyed.OnFull{keyed.Reject, keyed.EvictLossy} {
		for _, path := range paths {
			t.Run(onFull.String()+"/"+path.name, func(t *testing.T) {
				l := mustNew(t, four, path.newLimiter, keyed.Options{MaxKeys: maxKeys, Shards: 4, OnFull: onFull})
				var wg sync.WaitGroup
				var done atomic.Bool
				for g := range 8 {
					wg.Go(func() {
						for i := range 3000 {
							now := t0 + time.Duration(i)*time.Millisecond
							d, err := l.Allow(now, fmt.Sprint("k", (i*7+g)%100), 1)
							if err != nil {
								t.Error(err)
								return
							}
							if d.TableFull && (d.Allowed || d.RetryAfter <= 0) {
								t.Errorf("refusal %+v: want rejected with a positive RetryAfter", d)
								return
							}
						}
					})
				}
				var sweeper sync.WaitGroup
				sweeper.Go(func() {
					for i := 0; !done.Load(); i++ {
						l.Sweep(t0 + time.Duration(i)*time.Millisecond)
						if got := l.Stats().Keys; got > maxKeys {
							t.Errorf("Stats().Keys = %d > MaxKeys %d", got, maxKeys)
							return
						}
					}
				})
				wg.Wait()
				done.Store(true)
				sweeper.Wait()
				s := l.Stats()
				if s.Keys > maxKeys {
					t.Fatalf("Stats().Keys = %d > MaxKeys %d", s.Keys, maxKeys)
				}
				if onFull == keyed.Reject && s.LossyEvictions != 0 {
					t.Fatalf("Stats() = %+v: lossy evictions with Reject", s)
				}
			})
		}
	}
}

func TestAllowExistingKeyDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters may allocate")
	}
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			l := mustNew(t, algorithms.Policy{Limit: 1000, Window: time.Second}, path.newLimiter, keyed.Options{})
			buf := []byte("user:12345")
			allow(t, l, t0, "user:12345", 1)
			now := t0
			if n := testing.AllocsPerRun(1000, func() {
				now += time.Millisecond
				l.Allow(now, "user:12345", 1)
			}); n != 0 {
				t.Errorf("Allow on an existing key: %v allocs, want 0", n)
			}
			// The key does not escape: a key converted from bytes stays on
			// the caller's stack.
			if n := testing.AllocsPerRun(1000, func() {
				now += time.Millisecond
				l.Allow(now, string(buf), 1)
			}); n != 0 {
				t.Errorf("Allow on an existing key given as string(bytes): %v allocs, want 0", n)
			}
		})
	}
}

// TestMemoryPerKey holds the compact path to its budget: at most 64 bytes
// per key beyond the key's bytes, with a million GCRA keys.
func TestMemoryPerKey(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("inserts a million keys; measured without -short and -race")
	}
	if got := memoryPerKey(t, makeKeys(1_000_000)); got > 64 {
		t.Fatalf("%.1f bytes per key beyond the key bytes, want <= 64", got)
	}
}

// makeKeys returns n distinct keys of 16 bytes, a size class of the Go
// allocator, so that a copy of one takes exactly 16 bytes of heap.
func makeKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%012d", i)
	}
	return keys
}

// memoryPerKey inserts keys into a fresh compact GCRA limiter and returns
// the heap it took per key, less the bytes of the keys' copies.
func memoryPerKey(tb testing.TB, keys []string) float64 {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := mustNew(tb, algorithms.Policy{Limit: 10, Window: time.Second}, newGCRA, keyed.Options{})
	var keyBytes uint64
	for _, k := range keys {
		allow(tb, l, t0, k, 1)
		keyBytes += uint64(len(k))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := l.Stats().Keys; got != len(keys) {
		tb.Fatalf("Stats().Keys = %d, want %d", got, len(keys))
	}
	runtime.KeepAlive(l)
	runtime.KeepAlive(keys)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(keyBytes)) / float64(len(keys))
}

// benchClock is the virtual clock of the parallel benchmarks: each
// goroutine takes 64 microseconds of it at a time, so that time moves
// forward for every key without a shared write per decision.
var benchClock atomic.Int64

// benchAllow decides for random existing keys from parallel goroutines.
func benchAllow(b *testing.B, l *keyed.Limiter, keys []string) {
	b.ReportAllocs()
	var seeds atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		x := seeds.Add(1) * 0x9e3779b97f4a7c15
		var now time.Duration
		for i := 0; pb.Next(); i++ {
			if i%64 == 0 {
				now = time.Duration(benchClock.Add(int64(64 * time.Microsecond)))
			}
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			if _, err := l.Allow(now, keys[x%uint64(len(keys))], 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

var benchPolicy = algorithms.Policy{Limit: 1000, Window: time.Second}

// BenchmarkAllow: compact GCRA, random existing keys.
func BenchmarkAllow(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		keys := makeKeys(n)
		l := mustNew(b, benchPolicy, newGCRA, keyed.Options{})
		for _, k := range keys {
			allow(b, l, 0, k, 1)
		}
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchAllow(b, l, keys) })
	}
}

// BenchmarkAllowGeneric: the generic path (GCRA behind an interface that
// hides its WordRule), random existing keys.
func BenchmarkAllowGeneric(b *testing.B) {
	keys := makeKeys(1000)
	l := mustNew(b, benchPolicy, newOpaqueGCRA, keyed.Options{})
	for _, k := range keys {
		allow(b, l, 0, k, 1)
	}
	b.Run("keys=1000", func(b *testing.B) { benchAllow(b, l, keys) })
}

// BenchmarkAllowEvicting: ten times more keys than MaxKeys, so that most
// decisions insert a key and evict one.
func BenchmarkAllowEvicting(b *testing.B) {
	keys := makeKeys(100_000)
	l := mustNew(b, benchPolicy, newGCRA, keyed.Options{MaxKeys: 10_000})
	b.Run("keys=100000/max=10000", func(b *testing.B) { benchAllow(b, l, keys) })
}

// BenchmarkAllowTableFull: ten times more keys than MaxKeys at a table
// full of keys that are in use for an hour, so that most decisions refuse
// a new key (Decision.TableFull).
func BenchmarkAllowTableFull(b *testing.B) {
	keys := makeKeys(100_000)
	l := mustNew(b, algorithms.Policy{Limit: 1, Window: time.Hour}, newGCRA, keyed.Options{MaxKeys: 10_000})
	now := time.Duration(benchClock.Load())
	for _, k := range keys {
		allow(b, l, now, k, 1) // fills every shard; the rest are refused
	}
	if s := l.Stats(); s.Keys != 10_000 {
		b.Fatalf("Stats() = %+v, want a full table", s)
	}
	b.Run("keys=100000/max=10000", func(b *testing.B) { benchAllow(b, l, keys) })
}

// BenchmarkMemoryPerKey inserts a million compact GCRA keys and reports
// the heap per key beyond the keys' own bytes.
func BenchmarkMemoryPerKey(b *testing.B) {
	keys := makeKeys(1_000_000)
	var perKey float64
	for b.Loop() {
		perKey = memoryPerKey(b, keys)
	}
	b.ReportMetric(perKey, "B/key")
}

// TestMatchesOneLimiterPerKey: with frequent sweeps (and no eviction), the
// keyed limiter decides exactly as one separate limiter per key would,
// since Sweep drops only states that are as good as new (on the generic
// path this checks the default IdleAfter for each algorithm).
func TestMatchesOneLimiterPerKey(t *testing.T) {
	for _, algo := range algos {
		t.Run(algo.name, func(t *testing.T) {
			l := mustNew(t, four, algo.newLimiter, keyed.Options{MaxKeys: 256, Shards: 2})
			model := map[string]algorithms.Limiter{}
			x := uint64(1)
			now := t0
			swept := 0
			for step := range 20000 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				now += time.Duration(x % uint64(20*time.Millisecond))
				key := fmt.Sprint("k", x>>32%200)
				cost := int64(1 + x>>40%3)
				m, ok := model[key]
				if !ok {
					var err error
					if m, err = algo.newLimiter(four); err != nil {
						t.Fatal(err)
					}
					model[key] = m
				}
				want, err := m.Allow(now, key, cost)
				if err != nil {
					t.Fatal(err)
				}
				if got := allow(t, l, now, key, cost); got != want {
					t.Fatalf("step %d: Allow(t0+%v, %q, %d) = %+v, want %+v", step, now-t0, key, cost, got, want)
				}
				if step%97 == 0 {
					swept += l.Sweep(now)
				}
			}
			if s := l.Stats(); s.Evictions != 0 || swept == 0 {
				t.Fatalf("Stats() = %+v, swept %d: want no eviction (200 keys in a table of 256) and some keys swept", s, swept)
			}
		})
	}
}

func TestParseOnFull(t *testing.T) {
	tests := []struct {
		in      string
		want    keyed.OnFull
		wantErr bool
	}{
		{in: "reject", want: keyed.Reject},
		{in: "evict-lossy", want: keyed.EvictLossy},
		{in: "Reject", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tc := range tests {
		got, err := keyed.ParseOnFull(tc.in)
		if (err != nil) != tc.wantErr || err == nil && got != tc.want {
			t.Errorf("ParseOnFull(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
