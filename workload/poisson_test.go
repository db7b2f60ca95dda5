package workload

import (
	"math"
	"testing"
	"time"
)

// TestPoissonCount: the count of a Poisson process at rate r over d is
// Poisson(r*d); it must be within 5 standard deviations of the mean, for
// several seeds.
func TestPoissonCount(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		duration time.Duration
		seed     uint64
	}{
		// A typical benchmark load.
		{name: "1000/s for 10s", rate: 1000, duration: 10 * time.Second, seed: 1},
		// Another seed: the bound holds for any seed, not a lucky one.
		{name: "1000/s for 10s seed 2", rate: 1000, duration: 10 * time.Second, seed: 2},
		// Seed 0 is a seed like any other.
		{name: "seed 0", rate: 1000, duration: 10 * time.Second, seed: 0},
		// Slow rate, long run: gaps of seconds.
		{name: "0.5/s for 1h", rate: 0.5, duration: time.Hour, seed: 3},
		// Fast rate: gaps well under a microsecond.
		{name: "1e7/s for 10ms", rate: 1e7, duration: 10 * time.Millisecond, seed: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := collect(t, Spec{Name: "poisson", Rate: tt.rate, Duration: tt.duration, Seed: tt.seed})
			mean := tt.rate * tt.duration.Seconds()
			if dev := math.Abs(float64(len(as)) - mean); dev > 5*math.Sqrt(mean) {
				t.Fatalf("%d arrivals, mean %v: %.1f sigma away", len(as), mean, dev/math.Sqrt(mean))
			}
		})
	}
}

// TestPoissonKeysUniform: keys are drawn uniformly, so each of K keys gets
// n/K arrivals within 5 binomial standard deviations.
func TestPoissonKeysUniform(t *testing.T) {
	const keys = 8
	as := collect(t, Spec{Name: "poisson", Rate: 10000, Duration: 10 * time.Second, Keys: keys, Seed: 9})
	count := map[string]int{}
	for _, a := range as {
		count[a.Key]++
	}
	n := float64(len(as))
	sd := math.Sqrt(n * (1.0 / keys) * (1 - 1.0/keys))
	for _, k := range keyNames(0, keys) {
		if dev := math.Abs(float64(count[k]) - n/keys); dev > 5*sd {
			t.Errorf("key %s: %d arrivals, want %.0f +- %.0f", k, count[k], n/keys, 5*sd)
		}
	}
}
