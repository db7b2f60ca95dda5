package bench_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	golimiter "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// matrixPolicy is the policy of every cell: 10 per 100ms, T = 10ms.
var matrixPolicy = algorithms.Policy{Limit: 10, Window: 100 * time.Millisecond}

// step is the time between two requests of one sender: 1.5x the rate.
var step = matrixPolicy.Interval() * 2 / 3

// contender is one row of the matrix: an algorithm, a peer or a baseline.
// ownClock marks peers that read the wall clock themselves and ignore the
// now passed in: their ns/op includes that clock read, and what they admit
// depends on how fast the loop runs, so admitted/op is not reported for
// them. keysInside marks peers that keep one state per key themselves; the
// keys=N cases give them their keys directly instead of wrapping them in
// keyed.
type contender struct {
	name       string
	new        func(algorithms.Policy) (algorithms.Limiter, error)
	ownClock   bool
	keysInside bool
}

// bareCAS is the floor: one atomic compare-and-swap loop per decision.
type bareCAS struct{ v atomic.Int64 }

func (b *bareCAS) Allow(now time.Duration, _ string, cost int64) (algorithms.Decision, error) {
	for {
		old := b.v.Load()
		if b.v.CompareAndSwap(old, max(old, int64(now))+cost) {
			return algorithms.Decision{Allowed: true}, nil
		}
	}
}

// mutexCounter is the other floor: lock, add, unlock.
type mutexCounter struct {
	mu sync.Mutex
	n  int64
}

func (m *mutexCounter) Allow(now time.Duration, _ string, cost int64) (algorithms.Decision, error) {
	m.mu.Lock()
	m.n += cost
	m.mu.Unlock()
	return algorithms.Decision{Allowed: true}, nil
}

func contenders() []contender {
	cs := []contender{
		{name: "bare-cas", new: func(algorithms.Policy) (algorithms.Limiter, error) { return &bareCAS{}, nil }},
		{name: "mutex", new: func(algorithms.Policy) (algorithms.Limiter, error) { return &mutexCounter{}, nil }},
	}
	for _, e := range all.Entries() {
		cs = append(cs, contender{name: e.Name, new: e.New})
	}
	return append(cs,
		contender{name: "throttled", new: newThrottled, ownClock: true, keysInside: true},
		contender{name: "go-limiter", new: newGoLimiter, ownClock: true, keysInside: true},
	)
}

// throttledGCRA is github.com/throttled/throttled/v2's GCRA rate limiter on
// its in-memory store (memstore, unbounded map), with L per W and a burst
// of B (MaxBurst B-1). It reads its own clock (time.Now, inside the store)
// and ignores now: it is measured anyway, clock read included.
type throttledGCRA struct{ l *throttled.GCRARateLimiterCtx }

func newThrottled(p algorithms.Policy) (algorithms.Limiter, error) {
	p = p.WithDefaults()
	st, err := memstore.NewCtx(0)
	if err != nil {
		return nil, err
	}
	l, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
		MaxRate: throttled.PerDuration(int(p.Limit), p.Window), MaxBurst: int(p.Burst - 1),
	})
	if err != nil {
		return nil, err
	}
	return throttledGCRA{l}, nil
}

func (t throttledGCRA) Allow(_ time.Duration, key string, cost int64) (algorithms.Decision, error) {
	limited, res, err := t.l.RateLimitCtx(context.Background(), key, int(cost))
	if err != nil {
		return algorithms.Decision{}, err
	}
	return algorithms.Decision{Allowed: !limited, Remaining: int64(res.Remaining), ResetAfter: res.ResetAfter,
		RetryAfter: max(res.RetryAfter, 0)}, nil
}

// goLimiter is github.com/sethvargo/go-limiter's memorystore: L tokens per
// interval W, refilled at each tick of W since the key was first seen. It
// reads its own clock (its fasttime package) and ignores now and cost (one
// token per Take): it is measured anyway, clock read included. Its store
// runs a sweeper goroutine until Close.
type goLimiter struct{ s golimiter.Store }

func newGoLimiter(p algorithms.Policy) (algorithms.Limiter, error) {
	s, err := memorystore.New(&memorystore.Config{Tokens: uint64(p.Limit), Interval: p.Window})
	if err != nil {
		return nil, err
	}
	return goLimiter{s}, nil
}

func (g goLimiter) Allow(_ time.Duration, key string, _ int64) (algorithms.Decision, error) {
	_, remaining, _, ok, err := g.s.Take(context.Background(), key)
	return algorithms.Decision{Allowed: ok, Remaining: int64(remaining)}, err
}

func (g goLimiter) Close() error { return g.s.Close(context.Background()) }

// closeAfter closes l, if it has a Close method, when b ends.
func closeAfter(b *testing.B, l algorithms.Limiter) {
	if c, ok := l.(interface{ Close() error }); ok {
		b.Cleanup(func() { _ = c.Close() })
	}
}

// BenchmarkDecide is the matrix: algo=<name>/case=<case>, with time passed
// in (except to the peers marked ownClock). Cases: serial (one key, one
// goroutine), parallel (one hot key from every P), keys=1000 and
// keys=1000000 (parallel, random existing keys, through keyed unless the
// peer keeps its own keys). Run `make bench` for -count=10 and benchstat.
//
// The keys=N cells build their limiter and its N keys once per cell and
// keep them across the rounds go test makes to size b.N, so that the
// 1,000,000-key setup (about a second) is not paid five times per cell.
func BenchmarkDecide(b *testing.B) {
	for _, c := range contenders() {
		b.Run(fmt.Sprintf("algo=%s/case=serial", c.name), func(b *testing.B) { serial(b, c) })
		b.Run(fmt.Sprintf("algo=%s/case=parallel", c.name), func(b *testing.B) { parallel(b, c) })
		for _, n := range []int{1000, 1000000} {
			cell := &keysCell{c: c, n: n}
			b.Run(fmt.Sprintf("algo=%s/case=keys=%d", c.name, n), func(b *testing.B) { cell.run(b) })
			cell.close()
		}
	}
}

func newOrFail(b *testing.B, c contender) algorithms.Limiter {
	l, err := c.new(matrixPolicy)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func serial(b *testing.B, c contender) {
	l := newOrFail(b, c)
	closeAfter(b, l)
	b.ReportAllocs()
	var admitted int
	now := time.Duration(0)
	for b.Loop() {
		now += step
		d, _ := l.Allow(now, "k", 1)
		if d.Allowed {
			admitted++
		}
	}
	if !c.ownClock {
		b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
	}
}

func parallel(b *testing.B, c contender) {
	l := newOrFail(b, c)
	closeAfter(b, l)
	procs := time.Duration(runtime.GOMAXPROCS(0))
	var admitted atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var n int64
		now := time.Duration(0)
		for pb.Next() {
			now += step * procs
			if d, _ := l.Allow(now, "k", 1); d.Allowed {
				n++
			}
		}
		admitted.Add(n)
	})
	if !c.ownClock {
		b.ReportMetric(float64(admitted.Load())/float64(b.N), "admitted/op")
	}
}

// matrixKeys are the keys of the keys=N cases, built once.
var matrixKeys = sync.OnceValue(func() []string {
	keys := make([]string, 1000000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
	}
	return keys
})

// keysCell is one keys=N cell: its limiter with every key already seen,
// built at the first round, and the instant its last round reached, from
// which the next round goes on (so that a round never finds the keys'
// states in its future).
type keysCell struct {
	c     contender
	n     int
	l     algorithms.Limiter
	epoch atomic.Int64
}

func (k *keysCell) setup(b *testing.B) {
	keys := matrixKeys()[:k.n]
	var err error
	if k.c.keysInside {
		k.l, err = k.c.new(matrixPolicy)
	} else {
		k.l, err = keyed.New(matrixPolicy, k.c.new, keyed.Options{MaxKeys: k.n})
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, key := range keys {
		if _, err := k.l.Allow(0, key, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func (k *keysCell) run(b *testing.B) {
	if k.l == nil {
		k.setup(b)
	}
	keys := matrixKeys()[:k.n]
	base := time.Duration(k.epoch.Load())
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), uint64(base)))
		now := base
		for pb.Next() {
			now += step
			if _, err := k.l.Allow(now, keys[rng.IntN(len(keys))], 1); err != nil {
				b.Error(err)
				return
			}
		}
		for e := k.epoch.Load(); int64(now) > e && !k.epoch.CompareAndSwap(e, int64(now)); e = k.epoch.Load() {
		}
	})
}

func (k *keysCell) close() {
	if c, ok := k.l.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	k.l = nil
}
