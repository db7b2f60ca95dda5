package bench_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// matrixPolicy is the policy of every cell: 10 per 100ms, T = 10ms.
var matrixPolicy = algorithms.Policy{Limit: 10, Window: 100 * time.Millisecond}

// step is the time between two requests of one sender: 1.5x the rate.
var step = matrixPolicy.Interval() * 2 / 3

// contender is one row of the matrix: an algorithm, a peer or a baseline.
type contender struct {
	name string
	new  func(algorithms.Policy) (algorithms.Limiter, error)
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
		{"bare-cas", func(algorithms.Policy) (algorithms.Limiter, error) { return &bareCAS{}, nil }},
		{"mutex", func(algorithms.Policy) (algorithms.Limiter, error) { return &mutexCounter{}, nil }},
	}
	for _, e := range all.Entries() {
		cs = append(cs, contender{e.Name, e.New})
	}
	return cs
}

// BenchmarkDecide is the matrix: algo=<name>/case=<case>, with time passed
// in. Cases: serial (one key, one goroutine), parallel (one hot key from
// every P), keys=1000 and keys=1000000 (parallel, random existing keys,
// through keyed). Run `make bench` for -count=10 and benchstat.
func BenchmarkDecide(b *testing.B) {
	for _, c := range contenders() {
		b.Run(fmt.Sprintf("algo=%s/case=serial", c.name), func(b *testing.B) { serial(b, c) })
		b.Run(fmt.Sprintf("algo=%s/case=parallel", c.name), func(b *testing.B) { parallel(b, c) })
		for _, n := range []int{1000, 1000000} {
			b.Run(fmt.Sprintf("algo=%s/case=keys=%d", c.name, n), func(b *testing.B) { manyKeys(b, c, n) })
		}
	}
}

func newOrSkip(b *testing.B, c contender) algorithms.Limiter {
	l, err := c.new(matrixPolicy)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func serial(b *testing.B, c contender) {
	l := newOrSkip(b, c)
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
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
}

func parallel(b *testing.B, c contender) {
	l := newOrSkip(b, c)
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
	b.ReportMetric(float64(admitted.Load())/float64(b.N), "admitted/op")
}

func manyKeys(b *testing.B, c contender, n int) {
	l, err := keyed.New(matrixPolicy, c.new, keyed.Options{MaxKeys: n})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
		if _, err := l.Allow(0, keys[i], 1); err != nil {
			b.Fatal(err)
		}
	}
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 0))
		now := time.Duration(0)
		for pb.Next() {
			now += step
			if _, err := l.Allow(now, keys[rng.IntN(n)], 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
