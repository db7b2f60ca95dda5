package workload

import (
	"math"
	"testing"
	"time"
)

func TestRampCount(t *testing.T) {
	tests := []struct {
		name          string
		rate, rateEnd float64
		duration      time.Duration
	}{
		// Rising: the classic find-the-knee ramp.
		{name: "up", rate: 100, rateEnd: 10000, duration: 10 * time.Second},
		// Falling to almost nothing.
		{name: "down", rate: 5000, rateEnd: 1, duration: 10 * time.Second},
		// Flat: a ramp with equal ends is the constant generator.
		{name: "flat", rate: 1000, rateEnd: 1000, duration: 5 * time.Second},
		// Long and slow: the float arithmetic keeps its precision.
		{name: "long", rate: 1, rateEnd: 10, duration: 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := collect(t, Spec{Name: "ramp", Rate: tt.rate, RateEnd: tt.rateEnd, Duration: tt.duration})
			integral := (tt.rate + tt.rateEnd) / 2 * tt.duration.Seconds()
			if math.Abs(float64(len(as))-integral) > integral/100 {
				t.Fatalf("%d arrivals, want %.0f within 1%%", len(as), integral)
			}
			// The rate follows the line: the first half of a rising ramp
			// holds fewer arrivals than the second.
			half := tt.duration / 2
			first, second := countIn(as, 0, half), countIn(as, half, tt.duration)
			wantFirst := (tt.rate + (tt.rate+tt.rateEnd)/2) / 2 * half.Seconds()
			if math.Abs(float64(first)-wantFirst) > wantFirst/100+1 {
				t.Fatalf("first half holds %d arrivals (second %d), want %.0f", first, second, wantFirst)
			}
		})
	}
}

// TestRampFlatIsConstant: with Rate == RateEnd, the ramp's instants are the
// constant generator's (same formula, i/Rate).
func TestRampFlatIsConstant(t *testing.T) {
	r := collect(t, Spec{Name: "ramp", Rate: 7, RateEnd: 7, Duration: 10 * time.Second})
	c := collect(t, Spec{Name: "constant", Rate: 7, Duration: 10 * time.Second})
	if len(r) != len(c) {
		t.Fatalf("ramp yields %d, constant %d", len(r), len(c))
	}
	for i := range r {
		if d := r[i].At - c[i].At; d < -1 || d > 1 {
			t.Fatalf("arrival %d: ramp at %v, constant at %v", i, r[i].At, c[i].At)
		}
	}
}
