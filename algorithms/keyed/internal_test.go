package keyed

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// checkIndex verifies a shard's invariants: every indexed slot is found by
// its key with the right tag, live counts the entries, freed and live slots
// partition the slots handed out, and the index is at most 3/4 full.
func checkIndex(t *testing.T, l *Limiter, s *shard) {
	t.Helper()
	entries := 0
	seen := map[uint32]bool{}
	for b, e := range s.index {
		if e == 0 {
			continue
		}
		entries++
		i := e&l.slotMask - 1
		key := l.slot(s, i).key
		if got, ok := l.find(s, l.hash(key), key); !ok || got != i {
			t.Fatalf("bucket %d: slot %d key %q: find = %d, %v", b, i, key, got, ok)
		}
		if e&^l.slotMask != l.tag(l.hash(key)) {
			t.Fatalf("bucket %d: slot %d: wrong tag", b, i)
		}
		seen[i] = true
	}
	for _, i := range s.free {
		if seen[i] {
			t.Fatalf("slot %d is both free and indexed", i)
		}
	}
	if entries != s.live || s.live+len(s.free) != int(s.used) || s.live > int(s.cap) || entries*4 > len(s.index)*3 {
		t.Fatalf("entries %d, live %d, free %d, used %d, cap %d, buckets %d", entries, s.live, len(s.free), s.used, s.cap, len(s.index))
	}
}

func TestIndexInvariants(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 3}
	for _, tc := range []struct {
		name string
		nl   func(algorithms.Policy) (algorithms.Limiter, error)
		opts Options
	}{
		{"compact, sampled eviction", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }, Options{MaxKeys: 300, Shards: 2}},      // shares above 8: sampling
		{"compact, scanned eviction", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewTokenBucket(p) }, Options{MaxKeys: 8, Shards: 1}}, // share of 8: every slot looked at
		{"generic", func(p algorithms.Policy) (algorithms.Limiter, error) {
			g, err := algorithms.NewGCRA(p)
			return struct{ algorithms.Limiter }{g}, err
		}, Options{MaxKeys: 100, Shards: 4}}, // the embedding hides WordRule
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(p, tc.nl, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			x := uint64(7)
			now := time.Second
			for step := range 20000 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				now += time.Duration(x % uint64(time.Millisecond))
				if _, err := l.Allow(now, fmt.Sprint(x>>32%1000), 1); err != nil {
					t.Fatal(err)
				}
				if step%997 == 0 {
					l.Sweep(now)
				}
				if step%101 == 0 {
					for k := range l.shards {
						checkIndex(t, l, &l.shards[k])
					}
				}
			}
			if l.Stats().Evictions == 0 {
				t.Fatal("no eviction: the test does not exercise it")
			}
		})
	}
}
