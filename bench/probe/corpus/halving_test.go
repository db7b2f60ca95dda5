package corpus

import (
	"slices"
	"testing"
	"time"
)

func TestHalving(t *testing.T) {
	type req struct {
		at  time.Duration
		key string
	}
	// burst returns n requests of key at instant at.
	burst := func(at time.Duration, key string, n int) []req {
		return slices.Repeat([]req{{at, key}}, n)
	}
	for _, tc := range []struct {
		name   string
		limit  int64
		runs   [][]req // in order
		admits []int   // how many of each run are admitted
	}{
		{
			// A first burst sees the whole limit, as a window of limit.
			name: "first burst", limit: 8,
			runs:   [][]req{burst(0, "a", 12)},
			admits: []int{8},
		},
		{
			// Four rejections halve 8 four times, to 1, which it stays at.
			name: "each rejection halves, down to 1", limit: 8,
			runs:   [][]req{burst(0, "a", 12), burst(time.Second, "a", 3)},
			admits: []int{8, 1},
		},
		{
			// One rejection in a window leaves half for the next.
			name: "the next window has half", limit: 8,
			runs:   [][]req{burst(0, "a", 9), burst(1500*time.Millisecond, "a", 8)},
			admits: []int{8, 4},
		},
		{
			// Window 1 without a request: window 2 has the limit again.
			name: "an idle window restores the limit", limit: 8,
			runs:   [][]req{burst(0, "a", 12), burst(2*time.Second, "a", 10)},
			admits: []int{8, 8},
		},
		{
			// b's limit is its own: a's rejections do not halve it.
			name: "keys apart", limit: 8,
			runs:   [][]req{burst(0, "a", 12), burst(time.Second, "b", 9)},
			admits: []int{8, 8},
		},
		{
			// A request stamped before the window last seen counts in
			// that window.
			name: "a clock that goes back stands still", limit: 2,
			runs:   [][]req{burst(time.Second, "a", 1), burst(500*time.Millisecond, "a", 2)},
			admits: []int{1, 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHalving(tc.limit, time.Second)
			for i, run := range tc.runs {
				n := 0
				for _, r := range run {
					if h.allow(r.at, r.key) {
						n++
					}
				}
				if n != tc.admits[i] {
					t.Errorf("run %d: %d admitted, want %d", i, n, tc.admits[i])
				}
			}
		})
	}
}
