package keyed

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// realFullAt is fullAt without counting a probe.
func realFullAt(l *Limiter, s *shard, i uint32) int64 {
	w := l.slot(s, i).word.Load()
	if l.rule != nil {
		return int64(l.rule.FullAt(w))
	}
	return w
}

// checkIndex verifies a shard's invariants: every indexed slot is found by
// its key with the right tag, live counts the entries, freed and live slots
// partition the slots handed out, the index is at most 3/4 full, and the
// heap holds every live slot once, in order, each recorded no later than
// its key's current instant.
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
	h := &s.heap
	if len(h.at) != s.live || len(h.slot) != s.live {
		t.Fatalf("heap of %d and %d entries, %d keys live", len(h.at), len(h.slot), s.live)
	}
	inHeap := map[uint32]bool{}
	for k, i := range h.slot {
		switch {
		case !seen[i] || inHeap[i]:
			t.Fatalf("heap entry %d: slot %d is not live or is there twice", k, i)
		case k > 0 && h.at[(k-1)/2] > h.at[k]:
			t.Fatalf("heap entry %d: %d below its parent's %d", k, h.at[k], h.at[(k-1)/2])
		case h.at[k] > realFullAt(l, s, i):
			t.Fatalf("heap entry %d: slot %d recorded at %d, later than its key's %d", k, i, h.at[k], realFullAt(l, s, i))
		}
		inHeap[i] = true
	}
}

func TestIndexInvariants(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 3}
	for _, tc := range []struct {
		name string
		nl   func(algorithms.Policy) (algorithms.Limiter, error)
		opts Options
	}{
		{"compact", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }, Options{MaxKeys: 300, Shards: 2}},
		{"compact, one shard of 8", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewTokenBucket(p) }, Options{MaxKeys: 8, Shards: 1}},
		{"compact, evict lossy", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }, Options{MaxKeys: 100, Shards: 2, OnFull: EvictLossy}},
		{"generic", newHiddenGCRA, Options{MaxKeys: 100, Shards: 4}},
		{"generic, evict lossy", newHiddenGCRA, Options{MaxKeys: 100, Shards: 4, OnFull: EvictLossy}},
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

// hide hides the WordRule of the limiter it embeds: keyed takes its
// generic path.
type hide struct{ algorithms.Limiter }

func newHiddenGCRA(p algorithms.Policy) (algorithms.Limiter, error) {
	g, err := algorithms.NewGCRA(p)
	return hide{g}, err
}

func TestDefaultShards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxKeys int
		shards  int // given
		want    int
	}{
		{"tiny table", 10, 0, 1},                         // one shard: no key refused while another has room
		{"just under two shares", 511, 0, 1},             // 511/256 = 1
		{"two shares of 256", 512, 0, 2},                 // the first split
		{"a thousand keys", 1000, 0, 2},                  // 1000/256 = 3: the power of two below
		{"64 shares of 256", 64 * 256, 0, 64},            // the most
		{"default MaxKeys", 0, 0, 64},                    // 1<<20 keys
		{"given shards win", 10, 8, 8},                   // explicit Shards are kept
		{"given one shard for many keys", 1 << 20, 1, 1}, // the other way
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(algorithms.Policy{Limit: 10, Window: time.Second}, func(p algorithms.Policy) (algorithms.Limiter, error) {
				return algorithms.NewGCRA(p)
			}, Options{MaxKeys: tc.maxKeys, Shards: tc.shards})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(l.shards); got != tc.want {
				t.Fatalf("MaxKeys %d, Shards %d: %d shards, want %d", tc.maxKeys, tc.shards, got, tc.want)
			}
		})
	}
}

// TestVictimSearchDoesNotScan counts the reads of keys' current instants
// (probes) while n new keys arrive at a full shard of m keys: a scan would
// take n*m; the heap takes one per new key, plus one per key whose record
// went stale because it was used again (paid for by that use).
func TestVictimSearchDoesNotScan(t *testing.T) {
	const (
		m = 4096
		n = 1000
	)
	p := algorithms.Policy{Limit: 10, Window: time.Second, Burst: 4} // T = 100ms
	newGCRA := func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }
	t0 := 3 * time.Second
	for _, tc := range []struct {
		name       string
		nl         func(algorithms.Policy) (algorithms.Limiter, error)
		onFull     OnFull
		stale      bool          // every held key used again after it was recorded
		at         time.Duration // when the new keys arrive, after t0
		maxProbes  uint64
		want       Stats
		sweepAt    time.Duration // then a Sweep, after t0
		sweepLimit uint64        // its probes at most
	}{
		{"refused", newGCRA, Reject, false, time.Millisecond, n, Stats{Keys: m, TableFull: n}, time.Millisecond, 0},
		{"refused, stale", newGCRA, Reject, true, 150 * time.Millisecond, m + n, Stats{Keys: m, TableFull: n}, 150 * time.Millisecond, 0},
		{"forgettable", newGCRA, Reject, false, time.Second, n, Stats{Keys: m, Evictions: n}, time.Second, m - n + 1},
		{"forgettable, stale", newGCRA, Reject, true, time.Second, n, Stats{Keys: m, Evictions: n}, time.Second, m - n + 1},
		{"evict lossy, stale", newGCRA, EvictLossy, true, 150 * time.Millisecond, m + n, Stats{Keys: m, Evictions: n, LossyEvictions: n}, 150 * time.Millisecond, 0},
		{"generic, refused, stale", newHiddenGCRA, Reject, true, 150 * time.Millisecond, m + n, Stats{Keys: m, TableFull: n}, 150 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(p, tc.nl, Options{MaxKeys: m, Shards: 1, OnFull: tc.onFull})
			if err != nil {
				t.Fatal(err)
			}
			s := &l.shards[0]
			for i := range m {
				l.Allow(t0, fmt.Sprint("held", i), 1) // recorded: full at t0+100ms
			}
			if tc.stale {
				for i := range m {
					l.Allow(t0, fmt.Sprint("held", i), 1) // now full at t0+200ms
				}
			}
			s.probes = 0
			for i := range n {
				l.Allow(t0+tc.at, fmt.Sprint("new", i), 1)
			}
			if got := l.Stats(); got != tc.want {
				t.Fatalf("Stats() = %+v, want %+v", got, tc.want)
			}
			if s.probes > tc.maxProbes {
				t.Fatalf("%d new keys in a full shard of %d took %d probes, want at most %d (a scan: %d)", n, m, s.probes, tc.maxProbes, n*m)
			}
			checkIndex(t, l, s)
			s.probes = 0
			l.Sweep(t0 + tc.sweepAt)
			if s.probes > tc.sweepLimit {
				t.Fatalf("Sweep took %d probes, want at most %d", s.probes, tc.sweepLimit)
			}
			checkIndex(t, l, s)
		})
	}
}
