package keyed

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// fuzzAlgos are the limiters FuzzTable runs keyed over: both layouts, every
// in-memory algorithm computed in integers.
var fuzzAlgos = []struct {
	name string
	new  func(algorithms.Policy) (algorithms.Limiter, error)
	// windowed: the capacity is L, the burst is ignored.
	windowed bool
}{
	{"compact/gcra", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }, false},
	{"compact/token-bucket", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewTokenBucket(p) }, false},
	{"generic/gcra", newHiddenGCRA, false},
	{"generic/leaky-bucket", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewLeakyBucket(p) }, false},
	{"generic/leaky-queue", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewLeakyQueue(p) }, false},
	{"generic/fixed-window", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewFixedWindow(p) }, true},
	{"generic/sliding-log", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewSlidingLog(p) }, true},
	{"generic/sliding-counter", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewSlidingCounter(p) }, true},
	{"generic/fixed-window-first", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewFixedWindowFirst(p) }, true},
	{"generic/sliding-log-all", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewSlidingLogAll(p) }, true},
	{"generic/sliding-counter-all", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewSlidingCounterAll(p) }, true},
	{"compact/token-bucket-debt", func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewTokenBucketDebt(p) }, false},
	{"generic/token-bucket-debt", func(p algorithms.Policy) (algorithms.Limiter, error) {
		l, err := algorithms.NewTokenBucketDebt(p)
		if err != nil {
			return nil, err
		}
		return hide{l}, nil
	}, false},
}

// heldKey is a key found in the table: its shard and the instant from
// which it is as good as new.
type heldKey struct {
	shard int
	full  int64
}

// held returns every key the table holds.
func held(l *Limiter) map[string]heldKey {
	keys := map[string]heldKey{}
	for k := range l.shards {
		s := &l.shards[k]
		for _, e := range s.index {
			if e != 0 {
				i := e&l.slotMask - 1
				keys[l.slot(s, i).key] = heldKey{k, realFullAt(l, s, i)}
			}
		}
	}
	return keys
}

// keyModel follows one key: cur is the state keyed should hold for it
// (fresh whenever keyed does not hold it), old the state of a limiter that
// never forgets it. They decide alike as long as no request came at an
// instant before one from which a forgotten state was as good as new.
type keyModel struct {
	cur, old   algorithms.Limiter
	curFull    int64 // latest now+ResetAfter of cur's decisions
	oldFull    int64 // latest now+ResetAfter of old's decisions
	forgotFull int64 // latest instant from which a forgotten state was as good as new
	diverged   bool
}

// FuzzTable runs a keyed table of a few keys over a trace of requests and
// sweeps at instants that may go back, and checks after every step: a key
// leaves the table only if it was as good as new at that instant (or, with
// EvictLossy, as a counted lossy eviction); a new key is refused only when
// its shard is full and none of its keys is as good as new, with RetryAfter
// exactly the first instant one is; Sweep drops exactly the keys that are;
// every decision is that of the key's own limiter, and that of a limiter
// never forgotten unless the clock went back past a forget; the index and
// heap invariants hold.
func FuzzTable(f *testing.F) {
	// Byte 0: algorithm; 1: MaxKeys-1 (mod 6); 2: bit 0 EvictLossy, bit 1
	// two shards; 3: L-1 (mod 4); 4: W-L in ns (mod 32); 5: B-1 (mod 4);
	// then triples: key (mod 10; 240 and up: a Sweep), gap+32 in ns, cost-1
	// (mod capacity+1).
	for a := range fuzzAlgos {
		// An exhausted key 0, then a flood of new keys, then key 0 again.
		seed := []byte{byte(a), 2, 0, 1, 8, 1}
		for range 3 {
			seed = append(seed, 0, 32, 0)
		}
		for k := range 9 {
			seed = append(seed, byte(1+k), 33, 0)
		}
		seed = append(seed, 0, 40, 0, 245, 80, 0, 0, 10, 0)
		f.Add(seed)
	}
	r := rand.New(rand.NewPCG(11, 13))
	for range 24 {
		b := make([]byte, 6+3*r.IntN(80))
		for i := range b {
			b[i] = byte(r.Uint32())
			if i >= 6 && i%3 == 1 {
				b[i] = byte(r.IntN(32 + 2*32)) // mostly forward, small gaps
			}
		}
		f.Add(b)
	}
	f.Fuzz(fuzzTable)
}

func fuzzTable(t *testing.T, data []byte) {
	if len(data) < 9 {
		return
	}
	algo := fuzzAlgos[int(data[0])%len(fuzzAlgos)]
	opts := Options{MaxKeys: 1 + int(data[1]%6), Shards: 1}
	if data[2]&1 != 0 {
		opts.OnFull = EvictLossy
	}
	if data[2]&2 != 0 && opts.MaxKeys >= 2 {
		opts.Shards = 2
	}
	limit := 1 + int64(data[3]%4)
	p := algorithms.Policy{Limit: limit, Window: time.Duration(limit + int64(data[4]%32)), Burst: 1 + int64(data[5]%4)}
	capacity := p.Burst
	if algo.windowed {
		capacity = p.Limit
	}
	l, err := New(p, algo.new, opts)
	if err != nil {
		t.Fatalf("New(%v, %+v): %v", p, opts, err)
	}
	fresh := func() algorithms.Limiter {
		m, err := algo.new(p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	models := map[string]*keyModel{}
	forget := func(key string, full int64) {
		m := models[key]
		m.cur = nil
		m.forgotFull = max(m.forgotFull, full)
	}
	at := time.Duration(1000)
	for step, i := 0, 6; i+2 < len(data); step, i = step+1, i+3 {
		at += time.Duration(int64(data[i+1]) - 32)
		before, stats := held(l), l.Stats()
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s, policy %v, %+v, step %d at %v: %s", algo.name, p, opts, step, at, fmt.Sprintf(format, args...))
		}
		if data[i] >= 240 {
			n := l.Sweep(at)
			after := held(l)
			gone := 0
			for k, h := range before {
				if _, ok := after[k]; !ok {
					gone++
					if h.full > int64(at) {
						fail("Sweep dropped %q, as good as new only at %d", k, h.full)
					}
					forget(k, h.full)
				} else if h.full <= int64(at) {
					fail("Sweep kept %q, as good as new since %d", k, h.full)
				}
			}
			stats.Keys -= gone
			if n != gone || l.Stats() != stats {
				fail("Sweep = %d, %d keys gone, Stats %+v then %+v", n, gone, stats, l.Stats())
			}
			continue
		}
		key := fmt.Sprint("k", data[i]%10)
		cost := 1 + int64(data[i+2])%(capacity+1)
		shard := int(l.hash(key) >> l.shardShift)
		s := &l.shards[shard]
		inShard, first := 0, int64(0)
		for _, h := range before {
			if h.shard == shard {
				if inShard == 0 || h.full < first {
					first = h.full
				}
				inShard++
			}
		}
		_, wasHeld := before[key]
		d, err := l.Allow(at, key, cost)
		if err != nil {
			fail("Allow(%q, %d): %v", key, cost, err)
		}
		after, nowStats := held(l), l.Stats()
		for k := range l.shards {
			checkIndex(t, l, &l.shards[k])
		}
		full := !wasHeld && inShard == int(s.cap)
		if d.TableFull {
			wait := time.Duration(first) - at
			switch {
			case wasHeld || !full || first <= int64(at) || opts.OnFull != Reject:
				fail("Allow(%q) refused: held %v, %d keys in a shard of %d, the first as good as new at %d", key, wasHeld, inShard, s.cap, first)
			case d != algorithms.Decision{TableFull: true, RetryAfter: wait, ResetAfter: wait}:
				fail("Allow(%q) = %+v, want refused with RetryAfter %v", key, d, wait)
			case len(after) != len(before) || nowStats.TableFull != stats.TableFull+1:
				fail("refusal changed the table: %d keys then %d, Stats %+v then %+v", len(before), len(after), stats, nowStats)
			}
			continue
		}
		m := models[key]
		if m == nil {
			m = &keyModel{old: fresh(), oldFull: int64(at), forgotFull: int64(at)}
			models[key] = m
		}
		if !wasHeld {
			m.cur, m.curFull = fresh(), int64(at)
		}
		want, err := m.cur.Allow(at, key, cost)
		if err != nil {
			t.Fatal(err)
		}
		if d != want {
			fail("Allow(%q, %d) = %+v, its own limiter says %+v", key, cost, d, want)
		}
		m.curFull = max(m.curFull, int64(at+want.ResetAfter))
		// What keyed knows of when the key is as good as new: on the
		// generic path the latest now+ResetAfter; on the compact path the
		// algorithm's FullAt, which admits report as now+ResetAfter and
		// rejections at or after it.
		if h, ok := after[key]; ok && (l.rule == nil && h.full != m.curFull || h.full > m.curFull) {
			fail("%q as good as new from %d for keyed, from %d by its decisions", key, h.full, m.curFull)
		}
		wantOld, err := m.old.Allow(at, key, cost)
		if err != nil {
			t.Fatal(err)
		}
		m.oldFull = max(m.oldFull, int64(at+wantOld.ResetAfter))
		m.diverged = m.diverged || int64(at) < m.forgotFull
		if !m.diverged && d != wantOld {
			fail("Allow(%q, %d) = %+v, a limiter never forgotten says %+v", key, cost, d, wantOld)
		}
		// A new key is stored when admitted, or rejected with a state not
		// as good as new (a rejection that counted).
		taken := !wasHeld && (d.Allowed || d.ResetAfter > 0)
		if _, stored := after[key]; stored != (wasHeld || taken) {
			fail("Allow(%q) = %+v: held %v before, %v after", key, d, wasHeld, stored)
		}
		if !wasHeld && !taken {
			forget(key, m.oldFull) // never stored
		}
		var lossy int64
		gone := 0
		for k, h := range before {
			if _, ok := after[k]; ok {
				continue
			}
			gone++
			if h.full > int64(at) {
				lossy++
			}
			forget(k, h.full)
		}
		switch {
		case gone > 1 || gone == 1 && !(full && taken):
			fail("Allow(%q) = %+v dropped %d keys, with %d of %d in its shard", key, d, gone, inShard, s.cap)
		case full && taken && gone != 1:
			fail("Allow(%q) = %+v took a key into a full shard without dropping one", key, d)
		case lossy > 0 && opts.OnFull != EvictLossy:
			fail("Allow(%q) evicted a key that was not as good as new", key)
		case nowStats.Evictions != stats.Evictions+int64(gone) || nowStats.LossyEvictions != stats.LossyEvictions+lossy:
			fail("Stats %+v then %+v, for %d evictions, %d lossy", stats, nowStats, gone, lossy)
		}
	}
}
