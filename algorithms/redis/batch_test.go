package redis_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// TestBatcherConformance: decisions carried in shared pipelines are the
// same decisions, on one node and on a Cluster (whose pipelines go-redis
// splits by node).
func TestBatcherConformance(t *testing.T) {
	need(t)
	for _, b := range backends() {
		batcher := redis.NewBatcher(b.client, redis.BatchOptions{Dispatchers: 2, MaxBatch: 8})
		t.Cleanup(func() { batcher.Close() })
		for _, name := range []string{"gcra", "sliding-log", "sliding-counter"} {
			e, _ := all.Lookup(name)
			t.Run(b.name+"/"+name, func(t *testing.T) {
				algotest.Run(t, algotest.Config{
					IgnoresBurst: e.IgnoresBurst,
					Concurrency:  32,
					New: func(p algorithms.Policy) (algorithms.Limiter, error) {
						return redis.New(name, b.client, freshPrefix(), p, redis.Options{Batcher: batcher})
					},
				})
			})
		}
	}
}

// TestScriptFlush: after SCRIPT FLUSH (a restarted or failed-over server
// has no scripts) decisions load the script again, directly and through a
// Batcher.
func TestScriptFlush(t *testing.T) {
	need(t)
	ctx := context.Background()
	batcher := redis.NewBatcher(nodeClient, redis.BatchOptions{})
	defer batcher.Close()
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	for _, opts := range []redis.Options{{}, {Batcher: batcher}} {
		l, err := redis.NewFixedWindow(nodeClient, freshPrefix(), p, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := nodeClient.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if d, err := l.Allow(time.Duration(i), "k", 1); err != nil || !d.Allowed {
						t.Errorf("after SCRIPT FLUSH (batched %v): %+v, %v", opts.Batcher != nil, d, err)
					}
				})
			}
			wg.Wait()
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
