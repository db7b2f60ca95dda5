package redis_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// TestBatcherConformance: decisions decided together in batches pass the
// suite, on one node and on a Cluster (batches split by slot), with small
// batches and two in flight, and with the defaults.
func TestBatcherConformance(t *testing.T) {
	need(t)
	for _, b := range backends() {
		small := redis.NewBatcher(b.client, redis.BatchOptions{Dispatchers: 2, MaxBatch: 8, MaxWait: 100 * time.Microsecond})
		t.Cleanup(func() { small.Close() })
		byDefault := redis.NewBatcher(b.client, redis.BatchOptions{})
		t.Cleanup(func() { byDefault.Close() })
		for _, name := range exactNames {
			e, _ := all.Lookup(name)
			for bname, batcher := range map[string]*redis.Batcher{"small": small, "default": byDefault} {
				t.Run(b.name+"/"+bname+"/"+name, func(t *testing.T) {
					cfg := algotest.ForEntry(e)
					cfg.Concurrency = 32
					cfg.New = func(p algorithms.Policy) (algorithms.Limiter, error) {
						return redis.New(name, b.client, freshPrefix(), p, redis.Options{Batcher: batcher})
					}
					algotest.Run(t, cfg)
				})
			}
		}
	}
}

// TestScriptFlush: after SCRIPT FLUSH (a restarted or failed-over server
// has no scripts) decisions load the script again, directly and through a
// Batcher, on one node and on a Cluster.
func TestScriptFlush(t *testing.T) {
	need(t)
	ctx := context.Background()
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	for _, b := range backends() {
		batcher := redis.NewBatcher(b.client, redis.BatchOptions{})
		defer batcher.Close()
		for _, opts := range []redis.Options{{}, {Batcher: batcher}} {
			l, err := redis.NewFixedWindow(b.client, freshPrefix(), p, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := b.client.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				for k := range 8 {
					wg.Go(func() {
						// Several keys: on the Cluster, several slots' calls.
						if d, err := l.Allow(time.Duration(i), strconv.Itoa(k%4), 1); err != nil || !d.Allowed {
							t.Errorf("%s: after SCRIPT FLUSH (batched %v): %+v, %v", b.name, opts.Batcher != nil, d, err)
						}
					})
				}
				wg.Wait()
			}
		}
	}
}

// TestBatcherClosedAndTimeout: a closed batcher fails decisions with
// ErrClosed (wrapped in ErrBackend); a decision whose deadline passes
// while its pipeline is out fails with a timeout.
func TestBatcherClosedAndTimeout(t *testing.T) {
	need(t)
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	batcher := redis.NewBatcher(nodeClient, redis.BatchOptions{})
	l, err := redis.NewGCRA(nodeClient, freshPrefix(), p, redis.Options{Batcher: batcher, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Allow(0, "k", 1); !errors.Is(err, algorithms.ErrBackend) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("1ns timeout: %v, want ErrBackend and DeadlineExceeded", err)
	}
	batcher.Close()
	l, _ = redis.NewGCRA(nodeClient, freshPrefix(), p, redis.Options{Batcher: batcher})
	if _, err := l.Allow(0, "k", 1); !errors.Is(err, redis.ErrClosed) || !errors.Is(err, algorithms.ErrBackend) {
		t.Fatalf("closed batcher: %v, want ErrClosed and ErrBackend", err)
	}
}

// TestBatchSameAsMemory: decisions decided together in one batch (one
// script call per script and slot, several keys, a key asked several times,
// two limiters sharing a script) are, field for field, the decisions the
// same limiters give one call at a time, and memory's, on random traces.
func TestBatchSameAsMemory(t *testing.T) {
	need(t)
	policies := []algorithms.Policy{
		{Limit: 10, Window: time.Second},
		{Limit: 7, Window: time.Second + 3, Burst: 3},
		{Limit: 5, Window: 100 * time.Millisecond, Burst: 12},
		{Limit: 1000, Window: time.Hour},
	}
	origins := []time.Duration{0, -5*time.Second - 7, 100*365*24*time.Hour + 12345}
	keys := []string{"a", "b", "c{x}"}
	for _, b := range backends() {
		for _, name := range exactNames {
			t.Run(b.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				e, err := all.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(2, uint64(len(name))))
				for _, p := range policies {
					for _, origin := range origins {
						// Two replicas' worth of limiters: batched (two
						// prefixes, one script), one call each, and memory.
						// Memory's limiters keep one key: one per limiter and key.
						var batched, single [2]*redis.Limiter
						mem := map[string]algorithms.Limiter{}
						for i := range 2 {
							l, err := redis.New(name, b.client, freshPrefix(), p, redis.Options{})
							if err != nil {
								t.Fatal(err)
							}
							batched[i] = l.(*redis.Limiter)
							l, _ = redis.New(name, b.client, freshPrefix(), p, redis.Options{})
							single[i] = l.(*redis.Limiter)
							for _, k := range keys {
								if mem[fmt.Sprint(i, k)], err = e.New(p); err != nil {
									t.Fatal(err)
								}
							}
						}
						trace := randomTrace(r, p, origin, 240)
						for len(trace) > 0 {
							n := min(1+r.IntN(24), len(trace))
							steps := make([]redis.BatchStep, n)
							which := make([]int, n)
							for i, s := range trace[:n] {
								which[i] = r.IntN(2)
								steps[i] = redis.BatchStep{L: batched[which[i]], At: s.at, Key: keys[r.IntN(len(keys))], Cost: s.cost}
							}
							trace = trace[n:]
							got, err := redis.DecideBatch(b.client, steps)
							if err != nil {
								t.Fatal(err)
							}
							for i, s := range steps {
								want, err := mem[fmt.Sprint(which[i], s.Key)].Allow(s.At, s.Key, s.Cost)
								if err != nil {
									t.Fatal(err)
								}
								one, err := single[which[i]].Allow(s.At, s.Key, s.Cost)
								if err != nil {
									t.Fatal(err)
								}
								if got[i] != want || one != want {
									t.Fatalf("%v from %v, decision %d of a batch of %d: Allow(%v, %q, %d)\n batched %+v\n single  %+v\n memory  %+v",
										p, origin, i, n, s.At, s.Key, s.Cost, got[i], one, want)
								}
							}
						}
					}
				}
			})
		}
	}
}

// TestKeySlot: the Batcher's slot of a key is the Cluster's.
func TestKeySlot(t *testing.T) {
	need(t)
	ctx := context.Background()
	for i, k := range []string{"", "a", "{p:k}", "{p:k}:log", "{p:b{x}}", "{p:c}}", "x{}y", "{}{a}", "{a}{b}", "123456789"} {
		k += fmt.Sprint(i % 2 * i)
		want, err := clusClient.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := redis.KeySlot(k); int64(got) != want {
			t.Errorf("KeySlot(%q) = %d, want %d", k, got, want)
		}
	}
}
