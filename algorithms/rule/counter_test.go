package rule

import (
	"math"
	"testing"
)

// TestMulLess: products past 64 bits compare exactly.
func TestMulLess(t *testing.T) {
	big := int64(math.MaxInt64)
	for _, tc := range []struct {
		name       string
		a, b, x, y int64
		less       bool
	}{
		{name: "small", a: 3, b: 7, x: 4, y: 6, less: true},
		{name: "equal products", a: 6, b: 4, x: 3, y: 8, less: false},
		{name: "past 64 bits", a: big, b: 1 << 20, x: big, y: 1<<20 + 1, less: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mulLess(tc.a, tc.b, tc.x, tc.y); got != tc.less {
				t.Errorf("mulLess = %v, want %v", got, tc.less)
			}
		})
	}
}

// TestCounterRoll: CounterRoll, which divides only past the next window,
// moves a sliding counter as the division alone would: to the window
// holding t, the previous count carried when that window follows the old
// one.
func TestCounterRoll(t *testing.T) {
	const w, phase = 1000, 300
	for _, tc := range []struct {
		name                 string
		t, start, prev, curr int64
		want                 [3]int64
	}{
		{name: "in the window", t: 1299, start: 300, prev: 4, curr: 5, want: [3]int64{300, 4, 5}},
		{name: "before the window", t: 100, start: 300, prev: 4, curr: 5, want: [3]int64{300, 4, 5}},
		{name: "the next window", t: 1300, start: 300, prev: 4, curr: 5, want: [3]int64{1300, 5, 0}},
		{name: "the next window's end", t: 2299, start: 300, prev: 4, curr: 5, want: [3]int64{1300, 5, 0}},
		{name: "two windows on", t: 2300, start: 300, prev: 4, curr: 5, want: [3]int64{2300, 0, 0}},
		{name: "far on", t: 987654, start: 300, prev: 4, curr: 5, want: [3]int64{987300, 0, 0}},
		{name: "a key's first request", t: -700, start: math.MinInt64, want: [3]int64{-700, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, p, c := CounterRoll(tc.start, tc.prev, tc.curr, tc.t, w, phase)
			if got := [3]int64{s, p, c}; got != tc.want {
				t.Errorf("CounterRoll(%d) = %v, want %v", tc.t, got, tc.want)
			}
		})
	}
}
