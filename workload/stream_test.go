package workload

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// synthetic holds one valid spec per synthetic generator, used by the
// properties that every stream must have.
var synthetic = []Spec{
	{Name: "constant", Rate: 1000, Duration: 2 * time.Second, Keys: 3},
	{Name: "poisson", Rate: 1000, Duration: 2 * time.Second, Keys: 7, Seed: 1},
	{Name: "burst", Duration: 10 * time.Second, Keys: 4, BurstSize: 25, BurstEvery: 300 * time.Millisecond},
	{Name: "burst", Rate: 500, Duration: 2 * time.Second, Keys: 4, On: 100 * time.Millisecond, Off: 150 * time.Millisecond},
	{Name: "boundary", Duration: 10 * time.Second, Keys: 5, Limit: 100, Window: time.Second},
	{Name: "ramp", Rate: 100, RateEnd: 2000, Duration: 2 * time.Second, Keys: 2},
	{Name: "ramp", Rate: 2000, RateEnd: 1, Duration: 2 * time.Second, Keys: 2},
	{Name: "zipf", Rate: 1000, Duration: 2 * time.Second, Keys: 50, ZipfS: 1.3, Seed: 1},
}

func specName(s Spec) string {
	switch {
	case s.Name == "burst" && s.On != 0:
		return "burst-onoff"
	case s.Name == "ramp" && s.RateEnd < s.Rate:
		return "ramp-down"
	}
	return s.Name
}

// TestStreamProperties checks, for every synthetic generator, what the
// Stream contract promises: time order, At in [0, Duration), the spec's
// cost, keys among k0..k{Keys-1}, an end that stays an end, and no
// allocation in Next.
func TestStreamProperties(t *testing.T) {
	for _, s := range synthetic {
		t.Run(specName(s), func(t *testing.T) {
			as := collect(t, s)
			if len(as) == 0 {
				t.Fatal("no arrivals")
			}
			keys := keyNames(0, s.Keys)
			var prev time.Duration
			for i, a := range as {
				switch {
				case a.At < prev:
					t.Fatalf("arrival %d at %v is before the previous one at %v", i, a.At, prev)
				case a.At < 0 || a.At >= s.Duration:
					t.Fatalf("arrival %d at %v is outside [0, %v)", i, a.At, s.Duration)
				case a.Cost != 1:
					t.Fatalf("arrival %d has cost %d, want the default 1", i, a.Cost)
				case !slices.Contains(keys, a.Key):
					t.Fatalf("arrival %d has key %q, not one of the %d keys", i, a.Key, s.Keys)
				}
				prev = a.At
			}
		})
	}
}

// TestCostIsCopied: a Spec's Cost is the cost of every synthetic arrival.
func TestCostIsCopied(t *testing.T) {
	for _, s := range synthetic {
		s.Cost = 7
		t.Run(specName(s), func(t *testing.T) {
			for i, a := range collect(t, s) {
				if a.Cost != 7 {
					t.Fatalf("arrival %d has cost %d, want 7", i, a.Cost)
				}
			}
		})
	}
}

// TestDeterminism: the same spec gives the same sequence, always; a
// different seed gives a different one for the random generators and the
// same one for the deterministic ones.
func TestDeterminism(t *testing.T) {
	for _, s := range synthetic {
		t.Run(specName(s), func(t *testing.T) {
			a, b := collect(t, s), collect(t, s)
			if !slices.Equal(a, b) {
				t.Fatal("two streams of the same spec differ")
			}
			other := s
			other.Seed = s.Seed + 1
			c := collect(t, other)
			random := s.Name == "poisson" || s.Name == "zipf"
			if random == slices.Equal(a, c) {
				t.Fatalf("seed %d and %d give equal sequences: %v, want %v", s.Seed, other.Seed, !random, random)
			}
		})
	}
}

// TestRandomStreamsDifferInKeys: for zipf and poisson, a different seed also
// changes the keys, not just the times (both come from the seeded source).
func TestRandomStreamsDifferInKeys(t *testing.T) {
	for _, name := range []string{"poisson", "zipf"} {
		s := Spec{Name: name, Rate: 1000, Duration: time.Second, Keys: 10, Seed: 42}
		keys := func(s Spec) []string {
			var ks []string
			for _, a := range collect(t, s) {
				ks = append(ks, a.Key)
			}
			return ks[:100]
		}
		a := keys(s)
		s.Seed = 43
		if slices.Equal(a, keys(s)) {
			t.Errorf("%s: seeds 42 and 43 give the same first 100 keys", name)
		}
	}
}

// TestNextDoesNotAllocate: the synthetic generators hand out precomputed
// keys, so Next allocates nothing.
func TestNextDoesNotAllocate(t *testing.T) {
	for _, s := range synthetic {
		t.Run(specName(s), func(t *testing.T) {
			s.Duration = 1000 * time.Hour // never reach the end
			st, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(1000, func() { st.Next() }); n != 0 {
				t.Fatalf("Next allocates %v times per call, want 0", n)
			}
		})
	}
}

// TestManyKeys: a stream over ten million keys builds no names before it
// starts, names a key the first time it is drawn, and does not allocate
// per arrival once its keys are named.
func TestManyKeys(t *testing.T) {
	const keys = 10_000_000
	for _, s := range synthetic {
		t.Run(specName(s), func(t *testing.T) {
			s.Keys = keys
			s.Duration = 1000 * time.Hour
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			st, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("New over %d keys allocated %d bytes", keys, grew)
			}
			seen := map[string]bool{}
			for range 50_000 {
				a, _ := st.Next()
				if !strings.HasPrefix(a.Key, "k") {
					t.Fatalf("key %q", a.Key)
				}
				if n, err := strconv.Atoi(a.Key[1:]); err != nil || n < 0 || n >= keys {
					t.Fatalf("key %q is not one of k0..k%d", a.Key, keys-1)
				}
				seen[a.Key] = true
			}
			if s.Name != "zipf" && len(seen) < 1000 { // zipf draws few keys often
				t.Errorf("%d distinct keys in 50,000 arrivals over %d keys", len(seen), keys)
			}
		})
	}
}
