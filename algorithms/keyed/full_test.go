package keyed_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// tableModel predicts a one-shard keyed table with Reject: the keys held
// and, for each, the instant from which it is as good as new, the latest
// now+max(ResetAfter, idle) of its decisions (what keyed records; on the
// compact path the algorithm's FullAt, the same for costs within the
// burst).
type tableModel struct {
	max       int
	idle      time.Duration // an Idler's IdleAfter
	held      map[string]time.Duration
	evictions int64
	refused   int64
}

// first returns the earliest instant a held key is as good as new.
func (m *tableModel) first() time.Duration {
	first := time.Duration(math.MaxInt64)
	for _, at := range m.held {
		first = min(first, at)
	}
	return first
}

// step sends one request to l and checks it against the model: a held key
// is decided; a new key is taken in while the shard has room or a key as
// good as new (which it replaces), else refused with RetryAfter up to the
// first instant one is.
func (m *tableModel) step(t *testing.T, l *keyed.Limiter, at time.Duration, key string, cost int64) algorithms.Decision {
	t.Helper()
	d := allow(t, l, at, key, cost)
	reset := func() time.Duration { return at + max(d.ResetAfter, m.idle) } // no overflow at these instants
	if prev, ok := m.held[key]; ok {
		if d.TableFull {
			t.Fatalf("Allow(t0%+v, %q) = %+v: a held key refused", at-t0, key, d)
		}
		m.held[key] = max(prev, reset())
		return d
	}
	victim := ""
	if len(m.held) == m.max {
		first := m.first()
		if first > at {
			want := algorithms.Decision{TableFull: true, RetryAfter: first - at, ResetAfter: first - at}
			if d != want {
				t.Fatalf("Allow(t0%+v, %q) = %+v, want %+v: the table is full until t0%+v", at-t0, key, d, want, first-t0)
			}
			m.refused++
			return d
		}
		for k, f := range m.held {
			if f == first {
				victim = k // any of those tied: all are as good as new
				break
			}
		}
	}
	if d.TableFull {
		t.Fatalf("Allow(t0%+v, %q) = %+v, want it taken in: %d keys held, the first full again at t0%+v", at-t0, key, d, len(m.held), m.first()-t0)
	}
	if d.Allowed || d.ResetAfter > 0 { // admitted, or a rejection that counted
		if victim != "" {
			delete(m.held, victim)
			m.evictions++
		}
		m.held[key] = reset()
	}
	return d
}

// TestFloodKeepsExhaustedKey: a key that was exhausted stays rejected
// until its own retry time, however many new keys arrive meanwhile; the new
// keys that find the table full of keys in use are refused with RetryAfter
// up to the first instant a slot frees. Before keyed refused keys, such a
// flood evicted the exhausted key and reset its quota.
func TestFloodKeepsExhaustedKey(t *testing.T) {
	const (
		maxKeys = 16
		flood   = 2000 // distinct new keys, far more than the table holds
	)
	for _, algo := range algos {
		t.Run(algo.name, func(t *testing.T) {
			l := mustNew(t, four, algo.newLimiter, keyed.Options{MaxKeys: maxKeys, Shards: 1})
			m := &tableModel{max: maxKeys, idle: algo.idle, held: map[string]time.Duration{}}
			for m.step(t, l, t0, "victim", 1).Allowed {
			}
			d := m.step(t, l, t0, "victim", 1)
			retry := d.RetryAfter
			if d.TableFull || retry <= 0 || retry == algorithms.Never {
				t.Fatalf("exhausted victim: %+v, want a plain rejection", d)
			}
			// Checks of the victim during the flood: before its retry time,
			// 1ns before it at last (1ns more for a limiter in float64).
			// A limiter that counts denied requests counts the checks too:
			// its retry time moves later with each.
			retryAt := t0 + retry
			check := func(at time.Duration, why string) {
				t.Helper()
				d := m.step(t, l, at, "victim", 1)
				if d.Allowed || d.TableFull {
					t.Fatalf("victim at t0%+v, %s t0%+v: %+v, want rejected", at-t0, why, retryAt-t0, d)
				}
				if algo.entry().CountsDenied {
					retryAt = at + d.RetryAfter
				}
			}
			before := t0 + retry - 1 - algo.entry().RetrySlack
			checks := []time.Duration{t0 + retry/3, t0 + 2*retry/3, before}
			for k := range flood {
				at := t0 + time.Duration(int64(before-t0)*int64(k)/flood)
				for len(checks) > 0 && checks[0] <= at {
					check(checks[0], "before its retry time")
					checks = checks[1:]
				}
				m.step(t, l, at, fmt.Sprint("flood", k), 1)
			}
			check(before, "after the flood, before its retry time")
			if d := m.step(t, l, retryAt+algo.entry().RetrySlack, "victim", 1); !d.Allowed {
				t.Fatalf("victim at its retry time t0%+v: %+v, want admitted", retryAt+algo.entry().RetrySlack-t0, d)
			}
			// The first instant a slot frees, exactly: a new key is refused
			// 1ns before it and taken in at it.
			if first := m.first(); first > retryAt+algo.entry().RetrySlack {
				want := algorithms.Decision{TableFull: true, RetryAfter: 1, ResetAfter: 1}
				if d := m.step(t, l, first-1, "late1", 1); d != want {
					t.Fatalf("new key 1ns before a slot frees: %+v, want %+v", d, want)
				}
				if d := m.step(t, l, first, "late2", 1); !d.Allowed {
					t.Fatalf("new key when a slot frees: %+v, want admitted", d)
				}
			}
			want := keyed.Stats{Keys: maxKeys, Evictions: m.evictions, TableFull: m.refused}
			if got := l.Stats(); got != want || got.TableFull < flood/2 {
				t.Fatalf("Stats() = %+v, want %+v and most of the %d flood keys refused", got, want, flood)
			}
		})
	}
}

// TestNoFalseTableFull: in a table full of keys in use, where exactly one
// becomes as good as new at an instant T, a new key is refused at T-1ns
// with RetryAfter 1ns and taken in at T, in place of that key. The other
// keys' recorded instants are stale (they were used again since), earlier
// than T, so finding the one key means bringing them up to date.
func TestNoFalseTableFull(t *testing.T) {
	const maxKeys = 8
	for _, algo := range algos {
		t.Run(algo.name, func(t *testing.T) {
			l := mustNew(t, four, algo.newLimiter, keyed.Options{MaxKeys: maxKeys, Shards: 1})
			busy := make([]string, maxKeys-1)
			for i := range busy {
				busy[i] = fmt.Sprint("busy", i)
				allow(t, l, t0-2*time.Second, busy[i], 1)
			}
			full := t0 - time.Second + max(allow(t, l, t0-time.Second, "once", 1).ResetAfter, algo.idle) // T
			for _, k := range busy {
				if d := allow(t, l, t0, k, 1); t0+max(d.ResetAfter, algo.idle) <= full {
					t.Fatalf("%q at t0: %+v: full again by T = t0%+v, the test needs it later", k, d, full-t0)
				}
			}
			// T may be before t0: the new key comes back in time, which must
			// not make the busy keys look forgettable.
			want := algorithms.Decision{TableFull: true, RetryAfter: 1, ResetAfter: 1}
			if d := allow(t, l, full-1, "new", 1); d != want {
				t.Fatalf("new key at T-1ns = t0%+v: %+v, want %+v", full-1-t0, d, want)
			}
			if d := allow(t, l, full, "new", 1); !d.Allowed || d.TableFull {
				t.Fatalf("new key at T = t0%+v: %+v, want admitted", full-t0, d)
			}
			if got, want := l.Stats(), (keyed.Stats{Keys: maxKeys, Evictions: 1, TableFull: 1}); got != want {
				t.Fatalf("Stats() = %+v, want %+v", got, want)
			}
			// "once" is the key that went: it is new again, and no other
			// key can go at T.
			if d := allow(t, l, full, "once", 1); !d.TableFull {
				t.Fatalf(`"once" at T: %+v, want refused (it was forgotten, and the table is full)`, d)
			}
		})
	}
}

// TestClockBackwardsKeepsKey: a request at an instant earlier than a key's
// latest ones, whose own ResetAfter may be shorter, does not make the key
// forgettable early: a new key in a full table is still refused until the
// key is as good as new.
func TestClockBackwardsKeepsKey(t *testing.T) {
	fixedWindow := limiter(algorithms.NewFixedWindow)
	type req struct {
		at   time.Duration
		cost int64
	}
	cases := []struct {
		name       string
		newLimiter func(algorithms.Policy) (algorithms.Limiter, error)
		idle       time.Duration // the algorithm's IdleAfter, if any
		reqs       []req         // for the key held, after it was drained at t0
		probe      time.Duration // a new key arrives then
		full       time.Duration // the held key is as good as new then
	}{
		// Fixed window, W = 1s from t0: a cost above L at t0+1.5s moves the
		// window to [t0+1s, t0+2s) with nothing in it (ResetAfter 0), then
		// a request at t0+100ms counts there too: its ResetAfter is 0 as
		// well, but the key is as good as new only from t0+1.5s on (from
		// t0+1s, strictly; keyed knows the instants its decisions reported).
		{"fixed-window moved ahead", fixedWindow, 0, []req{{t0 + 1500*time.Millisecond, 11}, {t0 + 100*time.Millisecond, 11}}, t0 + 200*time.Millisecond, t0 + 1500*time.Millisecond},
	}
	for _, algo := range algos {
		// Every algorithm: drained at t0, then a request an hour back.
		cases = append(cases, struct {
			name       string
			newLimiter func(algorithms.Policy) (algorithms.Limiter, error)
			idle       time.Duration
			reqs       []req
			probe      time.Duration
			full       time.Duration
		}{algo.name + " an hour back", algo.newLimiter, algo.idle, []req{{t0 - time.Hour, 1}}, t0 + time.Millisecond, 0})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, four, tc.newLimiter, keyed.Options{MaxKeys: 1, Shards: 1})
			drain(t, l, t0, "held")
			full := tc.full
			if full == 0 {
				full = t0 + max(allow(t, l, t0, "held", 1).ResetAfter, tc.idle)
			}
			for _, r := range tc.reqs {
				allow(t, l, r.at, "held", r.cost)
			}
			want := algorithms.Decision{TableFull: true, RetryAfter: full - tc.probe, ResetAfter: full - tc.probe}
			if d := allow(t, l, tc.probe, "new", 1); d != want {
				t.Fatalf("new key at t0%+v: %+v, want %+v", tc.probe-t0, d, want)
			}
			if d := allow(t, l, full, "new", 1); !d.Allowed {
				t.Fatalf("new key at t0%+v, when the held key is full again: %+v, want admitted", full-t0, d)
			}
		})
	}
}

// TestMatchesOneLimiterPerKeyWhenFull: in a table far too small for its
// keys, with Reject, every request that is not refused is decided exactly
// as by one limiter per key that is never forgotten: keyed forgets only
// states that decide as fresh ones from then on. Time only moves forward
// here (forgetting and then going back is the one case that differs).
func TestMatchesOneLimiterPerKeyWhenFull(t *testing.T) {
	for _, algo := range algos {
		t.Run(algo.name, func(t *testing.T) {
			l := mustNew(t, four, algo.newLimiter, keyed.Options{MaxKeys: 8, Shards: 1})
			model := map[string]algorithms.Limiter{}
			r := rand.New(rand.NewPCG(3, 5))
			now := t0
			var refused int
			for step := range 20000 {
				now += time.Duration(r.Int64N(int64(30 * time.Millisecond)))
				key := fmt.Sprint("k", r.IntN(24))
				cost := 1 + r.Int64N(3)
				got := allow(t, l, now, key, cost)
				if got.TableFull {
					refused++
					continue
				}
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
				if got != want {
					t.Fatalf("step %d: Allow(t0+%v, %q, %d) = %+v, want %+v", step, now-t0, key, cost, got, want)
				}
			}
			if s := l.Stats(); refused == 0 || s.Evictions == 0 || s.LossyEvictions != 0 || s.TableFull != int64(refused) {
				t.Fatalf("Stats() = %+v, %d refused: want some refusals, some lossless evictions", s, refused)
			}
		})
	}
}

// TestConcurrentFlood: goroutines flooding a full table with new keys
// (refused under the read lock or the write lock), sweeping, and asking
// for exhausted keys, all at once at one instant: the exhausted keys get
// nothing, and nothing is evicted lossily (run with -race).
func TestConcurrentFlood(t *testing.T) {
	const (
		maxKeys = 64
		victims = 48
	)
	for _, algo := range algos {
		t.Run(algo.name, func(t *testing.T) {
			l := mustNew(t, four, algo.newLimiter, keyed.Options{MaxKeys: maxKeys, Shards: 4})
			var names []string
			for i := 0; len(names) < victims; i++ {
				name := fmt.Sprint("victim", i)
				if drain(t, l, t0, name) > 0 { // its shard had room
					names = append(names, name)
				}
			}
			var wg sync.WaitGroup
			var admitted atomic.Int64
			for g := range 6 {
				wg.Go(func() {
					for i := range 2000 {
						var d algorithms.Decision
						var err error
						switch g % 3 {
						case 0: // new keys
							d, err = l.Allow(t0, fmt.Sprint("flood", g, "-", i), 1)
						case 1: // exhausted keys
							if d, err = l.Allow(t0, names[i%victims], 1); d.Allowed {
								admitted.Add(1)
							}
						default:
							l.Sweep(t0)
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if n := admitted.Load(); n != 0 {
				t.Fatalf("exhausted keys admitted %d times during the flood", n)
			}
			if s := l.Stats(); s.Keys > maxKeys || s.LossyEvictions != 0 || s.TableFull == 0 {
				t.Fatalf("Stats() = %+v: want at most %d keys, no lossy eviction, some refusals", s, maxKeys)
			}
		})
	}
}
