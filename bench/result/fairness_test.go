package result

import "testing"

func TestJain(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []int64
		want float64
	}{
		{"equal shares are fair", []int64{5, 5, 5, 5}, 1},
		{"one takes all of four", []int64{8, 0, 0, 0}, 0.25},
		{"nothing admitted is not unfair", []int64{0, 0}, 1},
		{"two to one", []int64{2, 1}, 0.9},
	} {
		if got := Jain(tc.xs); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("%s: Jain(%v) = %v, want %v", tc.name, tc.xs, got, tc.want)
		}
	}
}
