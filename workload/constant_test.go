package workload

import (
	"testing"
	"time"
)

func TestConstantCount(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		duration time.Duration
		want     int
	}{
		// The brief's example: 100/s for 10s is exactly 1000, the last at 9.99s.
		{name: "100/s for 10s", rate: 100, duration: 10 * time.Second, want: 1000},
		// 1/3 s is not a whole number of ns: i*1e9/3 must not drift, so the
		// 3000th arrival (i = 3000, at exactly 1000s) is excluded.
		{name: "3/s for 1000s", rate: 3, duration: 1000 * time.Second, want: 3000},
		// A rate below one per Duration still yields the arrival at 0.
		{name: "slower than the run", rate: 0.5, duration: time.Second, want: 1},
		// Faster than 1/ns: several arrivals share a nanosecond, none lost.
		{name: "2 per ns", rate: 2e9, duration: time.Microsecond, want: 2000},
		// 7 per second for 1.5s: arrivals at 0, 1/7, ..., 10/7 s.
		{name: "fractional end", rate: 7, duration: 1500 * time.Millisecond, want: 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := collect(t, Spec{Name: "constant", Rate: tt.rate, Duration: tt.duration})
			if len(as) != tt.want {
				t.Fatalf("%d arrivals, want %d", len(as), tt.want)
			}
		})
	}
}

// TestConstantTimes: arrival i is at floor(i*1e9/Rate) ns, from i and not
// from a running sum, and keys go round-robin.
func TestConstantTimes(t *testing.T) {
	as := collect(t, Spec{Name: "constant", Rate: 3, Duration: 1000 * time.Second, Keys: 2})
	for i, a := range as {
		want := time.Duration(int64(i) * 1e9 / 3)
		if a.At != want {
			t.Fatalf("arrival %d at %v, want %v", i, a.At, want)
		}
		if wantKey := keyNames(0, 2)[i%2]; a.Key != wantKey {
			t.Fatalf("arrival %d has key %q, want %q", i, a.Key, wantKey)
		}
	}
}
