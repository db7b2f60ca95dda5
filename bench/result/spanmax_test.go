package result

import (
	"math/rand/v2"
	"testing"
)

// bruteMax is the most cost in any (t-w, t], checked at every event.
func bruteMax(at, cost []int64, w int64) int64 {
	var best int64
	for i := range at {
		var sum int64
		for j := range at {
			if at[j] > at[i]-w && at[j] <= at[i] {
				sum += cost[j]
			}
		}
		best = max(best, sum)
	}
	return best
}

func TestSpanMaxMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    int64
		gap  int64 // events are 0..gap apart
		n    int
	}{
		{"dense: many events per window", 100, 5, 400},      // ring grows and wraps
		{"sparse: windows mostly empty", 10, 40, 200},       // ring drains to one
		{"equal instants: merged entries", 50, 1, 300},      // same-instant merging
		{"window of 1ns: one instant at a time", 1, 2, 100}, // half-open edge
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.w)))
			at, cost := make([]int64, tc.n), make([]int64, tc.n)
			s := NewSpanMax(tc.w, 1<<63-1)
			var now int64
			for i := range tc.n {
				now += rng.Int64N(tc.gap + 1)
				at[i], cost[i] = now, 1+rng.Int64N(3)
				s.Add(at[i], cost[i])
			}
			if want := bruteMax(at, cost, tc.w); s.best != want {
				t.Fatalf("spanMax = %d, brute force = %d", s.best, want)
			}
		})
	}
}

func TestSpanMaxHalfOpen(t *testing.T) {
	s := NewSpanMax(1000, 1<<63-1)
	s.Add(0, 10)
	s.Add(1000, 10) // (0, 1000] excludes the event at 0
	if s.best != 10 {
		t.Fatalf("events exactly W apart: best = %d, want 10", s.best)
	}
	s.Add(1999, 5) // (999, 1999] holds 1000 and 1999
	if s.best != 15 || s.bestEnd != 1999 || s.bestLength != 999 {
		t.Fatalf("best = %d at %d over %d, want 15 at 1999 over 999", s.best, s.bestEnd, s.bestLength)
	}
}

// bruteShortest is the shortest first-to-last span inside one w whose
// events cost more than over; -1 when none.
func bruteShortest(at, cost []int64, w, over int64) int64 {
	best := int64(-1)
	for i := range at {
		for j := range at {
			d := at[j] - at[i]
			if d < 0 || d >= w {
				continue
			}
			var sum int64
			for k := range at {
				if at[k] >= at[i] && at[k] <= at[j] {
					sum += cost[k]
				}
			}
			if sum > over && (best < 0 || d < best) {
				best = d
			}
		}
	}
	return best
}

func TestSpanMaxShortestMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    int64
		gap  int64 // events are 0..gap apart
		over int64
		n    int
	}{
		{name: "dense, over reached often", w: 100, gap: 5, over: 30, n: 300},
		{name: "dense, over reached rarely", w: 100, gap: 5, over: 60, n: 300},
		{name: "sparse, never over", w: 10, gap: 40, over: 5, n: 200},
		{name: "equal instants: over at one instant", w: 50, gap: 1, over: 8, n: 200},
		{name: "over 0: any event", w: 20, gap: 3, over: 0, n: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tc.over)))
			at, cost := make([]int64, tc.n), make([]int64, tc.n)
			s := NewSpanMax(tc.w, tc.over)
			var now int64
			for i := range tc.n {
				now += rng.Int64N(tc.gap + 1)
				at[i], cost[i] = now, 1+rng.Int64N(3)
				s.Add(at[i], cost[i])
			}
			if want := bruteShortest(at, cost, tc.w, tc.over); s.shortest != want {
				t.Fatalf("shortest = %d, brute force = %d", s.shortest, want)
			}
		})
	}
}
