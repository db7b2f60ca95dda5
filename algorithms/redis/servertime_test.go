//go:build !race

package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// TestServerTime: with Redis's TIME the limiters ignore now, admit their
// capacity at once, reject the next request with a retry-after within a
// window, and admit again once it has passed (the test sleeps that long).
func TestServerTime(t *testing.T) {
	need(t)
	p := algorithms.Policy{Limit: 5, Window: 200 * time.Millisecond}
	for _, b := range backends() {
		batcher := redis.NewBatcher(b.client, redis.BatchOptions{})
		t.Cleanup(func() { batcher.Close() })
		for _, name := range exactNames {
			for _, batched := range []bool{false, true} {
				opts := redis.Options{ServerTime: true}
				if batched {
					opts.Batcher = batcher
				}
				t.Run(b.name+"/"+name+"/batched="+strconv.FormatBool(batched), func(t *testing.T) {
					t.Parallel()
					serverTime(t, name, b.client, p, opts)
				})
			}
		}
	}
}

// serverTime is TestServerTime for one limiter.
func serverTime(t *testing.T, name string, client goredis.UniversalClient, p algorithms.Policy, opts redis.Options) {
	l, err := redis.New(name, client, freshPrefix(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	allow := func(now time.Duration, cost int64) algorithms.Decision {
		t.Helper()
		d, err := l.Allow(now, "k", cost)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := allow(0, 6); d.Allowed || d.RetryAfter != algorithms.Never {
		t.Fatalf("cost above the limit: %+v, want rejected with Never", d)
	}
	var admitted int64
	var d algorithms.Decision
	// A window algorithm may meet a window edge while draining:
	// then it admits up to twice the limit.
	for i := range 3 * p.Limit {
		// now is ignored: pass nonsense.
		if d = allow(time.Duration(-i)*time.Hour, 1); !d.Allowed {
			break
		}
		admitted++
	}
	if admitted < p.Limit || admitted > 2*p.Limit || d.Allowed {
		t.Fatalf("admitted %d in a row, then %+v; want %d to %d, then a rejection", admitted, d, p.Limit, 2*p.Limit)
	}
	if d.RetryAfter <= 0 || d.RetryAfter > 2*p.Window {
		t.Fatalf("rejected with RetryAfter %v, want within (0, %v]", d.RetryAfter, 2*p.Window)
	}
	time.Sleep(d.RetryAfter + 5*time.Millisecond)
	if d := allow(0, 1); !d.Allowed {
		t.Fatalf("after RetryAfter: %+v, want allowed", d)
	}
}

// TestRedisRate: the redis_rate adapter admits its burst, rejects with a
// retry-after of about one interval, and rejects a cost above the burst
// with Never; it reads Redis's clock, so it is not in the conformance
// suite.
func TestRedisRate(t *testing.T) {
	need(t)
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 4}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			l, err := redis.NewRedisRate(b.client, freshPrefix(), p, redis.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			// redis_rate computes Remaining in float seconds and truncates:
			// a full burst of 4 may read 3.
			if d, err := l.Allow(0, "k", 5); err != nil || d.Allowed || d.RetryAfter != algorithms.Never || d.Remaining < 3 || d.Remaining > 4 {
				t.Fatalf("cost above the burst: %+v, %v; want rejected with Never and 3 or 4 remaining", d, err)
			}
			var admitted int
			var d algorithms.Decision
			for range 10 {
				if d, err = l.Allow(0, "k", 1); err != nil {
					t.Fatal(err)
				}
				if !d.Allowed {
					break
				}
				admitted++
			}
			if admitted != 4 || d.RetryAfter <= 0 || d.RetryAfter > 100*time.Millisecond {
				t.Fatalf("admitted %d, then %+v; want 4, then a retry within 100ms", admitted, d)
			}
			if _, err := l.Allow(0, "k", 0); err == nil {
				t.Fatal("cost 0: no error")
			}
		})
	}
	if _, err := redis.NewRedisRate(nodeClient, "x", algorithms.Policy{}, redis.Options{}); err == nil {
		t.Fatal("invalid policy: no error")
	}
}

// TestEveryKeyHasTTL: after every algorithm has decided (admits, rejects,
// a step back in time), no key under its prefix is without a TTL, and all
// of a key's Redis keys are in one Cluster slot.
func TestEveryKeyHasTTL(t *testing.T) {
	need(t)
	ctx := context.Background()
	p := algorithms.Policy{Limit: 3, Window: time.Second}
	for _, name := range redis.Names() {
		prefix := freshPrefix()
		l, err := redis.New(name, nodeClient, prefix, p, redis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, at := range []time.Duration{0, 0, 0, 0, 0, time.Second / 2, -time.Second, 5 * time.Second} {
			for _, key := range []string{"a", "b{x}", "c}"} {
				if _, err := l.Allow(at, key, int64(1+i%2)); err != nil {
					t.Fatal(err)
				}
			}
		}
		var keys []string
		iter := nodeClient.Scan(ctx, 0, "*"+prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		if len(keys) < 3 {
			t.Fatalf("%s: %d keys under %s, want one per request key at least: %v", name, len(keys), prefix, keys)
		}
		for _, k := range keys {
			ttl, err := nodeClient.PTTL(ctx, k).Result()
			if err != nil || ttl <= 0 {
				t.Errorf("%s: key %q has TTL %v (%v), want > 0", name, k, ttl, err)
			}
			if state, ok := strings.CutSuffix(k, ":log"); ok {
				a, errA := clusClient.ClusterKeySlot(ctx, k).Result()
				b, errB := clusClient.ClusterKeySlot(ctx, state).Result()
				if errA != nil || errB != nil || a != b {
					t.Errorf("%s: %q in slot %d, %q in slot %d (%v, %v)", name, k, a, state, b, errA, errB)
				}
			}
		}
	}
}
