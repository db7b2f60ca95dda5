package redis_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// exactNames are the algorithms whose Redis decisions must equal memory's.
var exactNames = []string{"token-bucket", "gcra", "fixed-window", "sliding-log", "sliding-counter"}

// compare drives a Redis limiter and its in-memory counterpart with the
// same requests and fails at the first Decision that differs in any field.
func compare(t *testing.T, name string, p algorithms.Policy, steps []step, l algorithms.Limiter) {
	t.Helper()
	e, err := all.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := e.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		want, werr := mem.Allow(s.at, s.key, s.cost)
		got, gerr := l.Allow(s.at, s.key, s.cost)
		if werr != nil || gerr != nil {
			t.Fatalf("step %d: Allow(%d, %q, %d): memory error %v, redis error %v", i, s.at, s.key, s.cost, werr, gerr)
		}
		if got != want {
			t.Fatalf("%s %v step %d: Allow(%v, %q, %d)\n redis  %+v\n memory %+v", name, p, i, s.at, s.key, s.cost, got, want)
		}
	}
}

type step struct {
	at   time.Duration
	key  string
	cost int64
}

// randomTrace mixes small steps, bursts at one instant, jumps of many
// windows, steps back in time and costs up to twice the capacity, around
// an origin that may be negative or near a century.
func randomTrace(r *rand.Rand, p algorithms.Policy, origin time.Duration, n int) []step {
	p = p.WithDefaults()
	capacity := max(p.Limit, p.Burst)
	at := origin
	steps := make([]step, n)
	for i := range steps {
		switch k := r.IntN(20); {
		case k < 8: // a fraction of the interval
			at += time.Duration(r.Int64N(int64(p.Interval()) * 2))
		case k < 12: // same instant
		case k < 14: // a fraction of the window, odd
			at += time.Duration(r.Int64N(int64(p.Window)))
		case k < 15: // many windows
			at += time.Duration(r.Int64N(50)+1) * p.Window
		case k < 17: // back
			at -= time.Duration(r.Int64N(int64(p.Window) * 2))
		case k < 18: // exactly to a window edge
			at = at - at%p.Window + p.Window
		default: // one ns
			at++
		}
		cost := int64(1)
		if r.IntN(4) == 0 {
			cost = r.Int64N(2*capacity) + 1
		}
		steps[i] = step{at: at, key: "k", cost: cost}
	}
	return steps
}

// TestSameAsMemory: on random traces every Redis algorithm returns exactly
// memory's decisions, Remaining, RetryAfter and ResetAfter included.
func TestSameAsMemory(t *testing.T) {
	need(t)
	const century = 100 * 365 * 24 * time.Hour
	policies := []algorithms.Policy{
		{Limit: 10, Window: time.Second},
		{Limit: 7, Window: time.Second + 3, Burst: 3}, // W not a multiple of L
		{Limit: 5, Window: 100 * time.Millisecond, Burst: 12},
		{Limit: 1000, Window: time.Hour}, // large products in the sliding counter
		{Limit: 3, Window: 24 * time.Hour, Burst: 1},
	}
	origins := []time.Duration{0, 3 * time.Second, -5*time.Second - 7, century + 12345, math.MaxInt64 / 2}
	for _, b := range backends() {
		for _, name := range exactNames {
			t.Run(b.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(1, uint64(len(name))))
				n := 300
				if b.name == "cluster" {
					n = 100
				}
				for _, p := range policies {
					for _, origin := range origins {
						l, err := redis.New(name, b.client, freshPrefix(), p, redis.Options{})
						if err != nil {
							t.Fatal(err)
						}
						compare(t, name, p, randomTrace(r, p, origin, n), l)
					}
				}
			})
		}
	}
}

// TestSlidingLogRebase: more than 2^52 ns (52 days) of steady traffic
// makes the sliding log rewrite its scores; decisions stay memory's.
func TestSlidingLogRebase(t *testing.T) {
	need(t)
	p := algorithms.Policy{Limit: 3, Window: 24 * time.Hour}
	var steps []step
	for at := time.Duration(0); at < 200*24*time.Hour; at += 7*time.Hour + 13 {
		for range 2 {
			steps = append(steps, step{at: at, key: "k", cost: 1})
		}
	}
	l, err := redis.NewSlidingLog(nodeClient, freshPrefix(), p, redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "sliding-log", p, steps, l)
}

// TestPolicyLimits: spans the scripts cannot keep exact are invalid
// policies, not silent errors.
func TestPolicyLimits(t *testing.T) {
	need(t)
	for _, tc := range []struct {
		name string
		algo string
		p    algorithms.Policy
	}{
		{"window of 30 days", "fixed-window", algorithms.Policy{Limit: 10, Window: 30 * 24 * time.Hour}},
		{"burst of 30 days", "gcra", algorithms.Policy{Limit: 1, Window: 24 * time.Hour, Burst: 30}},
		{"log above 2^24", "sliding-log", algorithms.Policy{Limit: 1 << 25, Window: time.Hour}},
	} {
		if _, err := redis.New(tc.algo, nodeClient, "x", tc.p, redis.Options{}); !errors.Is(err, algorithms.ErrInvalidPolicy) {
			t.Errorf("%s: New(%s, %v) error = %v, want ErrInvalidPolicy", tc.name, tc.algo, tc.p, err)
		}
	}
}
