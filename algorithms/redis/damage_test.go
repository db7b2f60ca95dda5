package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// TestSlidingLogDamage: the sliding log keeps its state and its log in two
// keys, and a server may lose one without the other (eviction under
// maxmemory, a DEL by hand). A state lost alone starts afresh, as a new
// in-memory log does, whatever the log left behind; a log lost alone is
// recounted, never an error, and never lets more than L through in a W;
// in a batch, a damaged key fails no other decision.
func TestSlidingLogDamage(t *testing.T) {
	need(t)
	ctx := context.Background()
	p := algorithms.Policy{Limit: 3, Window: time.Second}
	ms := time.Millisecond
	for _, b := range backends() {
		t.Run(b.name+"/state lost", func(t *testing.T) {
			l, err := redis.NewSlidingLog(b.client, freshPrefix(), p, redis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []struct {
				at   time.Duration
				cost int64
			}{{0, 1}, {900 * ms, 2}} {
				if _, err := l.Allow(s.at, "k", s.cost); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.client.Del(ctx, l.Key("k")).Err(); err != nil {
				t.Fatal(err)
			}
			fresh, err := algorithms.NewSlidingLog(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range []time.Duration{1500 * ms, 2000 * ms, 2200 * ms, 2500 * ms, 2860 * ms, 3400 * ms} {
				got, err := l.Allow(at, "k", 1)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := fresh.Allow(at, "k", 1)
				if got != want {
					t.Fatalf("at %v after the state was lost: %+v, a fresh log %+v", at, got, want)
				}
			}
		})
		t.Run(b.name+"/log lost", func(t *testing.T) {
			batcher := redis.NewBatcher(b.client, redis.BatchOptions{})
			defer batcher.Close()
			prefix := freshPrefix()
			l, err := redis.NewSlidingLog(b.client, prefix, p, redis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range []time.Duration{0, 100 * ms, 200 * ms} {
				if _, err := l.Allow(at, "k", 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.client.Del(ctx, l.Key("k")+":log").Err(); err != nil {
				t.Fatal(err)
			}
			// One batch: the damaged key first, then others behind it.
			steps := []redis.BatchStep{{L: l, At: 300 * ms, Key: "k", Cost: 1}}
			for _, k := range []string{"a", "b", "c"} {
				steps = append(steps, redis.BatchStep{L: l, At: 300 * ms, Key: k, Cost: 1})
			}
			ds, err := redis.DecideBatch(b.client, steps)
			if err != nil {
				t.Fatalf("a batch with a lost log: %v", err)
			}
			for i, d := range ds[1:] {
				if !d.Allowed {
					t.Errorf("key %s, new, rejected beside the damaged one: %+v", steps[i+1].Key, d)
				}
			}
			var admits []time.Duration
			if ds[0].Allowed {
				admits = append(admits, 300*ms)
			}
			for at := 310 * ms; at < 3*time.Second; at += 45 * ms {
				d, err := l.Allow(at, "k", 1)
				if err != nil {
					t.Fatalf("at %v after the log was lost: %v", at, err)
				}
				if d.Allowed {
					admits = append(admits, at)
				}
			}
			for i := range admits {
				if i+3 < len(admits) && admits[i+3]-admits[i] < time.Second {
					t.Fatalf("admitted at %v: 4 inside one W", admits[i:i+4])
				}
			}
			if len(admits) < 6 {
				t.Errorf("admitted %d times in 2.7 s at L=3 per second: the lost log was never recounted", len(admits))
			}
		})
	}
}

// TestEmptyPrefixAndKey: with no prefix and an empty key, the sliding
// log's two keys still share a hash tag, so a Cluster takes them in one
// script call.
func TestEmptyPrefixAndKey(t *testing.T) {
	need(t)
	l, err := redis.NewSlidingLog(clusClient, "", algorithms.Policy{Limit: 1, Window: time.Second}, redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := l.Key("")
	if redis.KeySlot(k) != redis.KeySlot(k+":log") {
		t.Fatalf("%q and its log are in slots %d and %d", k, redis.KeySlot(k), redis.KeySlot(k+":log"))
	}
	if err := clusClient.Del(context.Background(), k).Err(); err != nil { // left by an earlier -count
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		d, err := l.Allow(time.Duration(i)*time.Millisecond, "", 1)
		if err != nil || d.Allowed != want {
			t.Fatalf("decision %d: %+v, %v; want allowed %v", i, d, err, want)
		}
	}
}
