package wide

import (
	"math"
	"testing"
)

// TestWide: products past 64 bits divide exactly.
func TestWide(t *testing.T) {
	big := int64(math.MaxInt64)
	for _, tc := range []struct {
		name          string
		a, b, x, y, d int64
		floor, ceil   int64
	}{
		{name: "small", a: 3, b: 7, x: 4, y: 6, d: 4, floor: 5, ceil: 6},
		{name: "equal products", a: 6, b: 4, x: 3, y: 8, d: 3, floor: 8, ceil: 8},
		{name: "past 64 bits", a: big, b: 1 << 20, x: big, y: 1<<20 + 1, d: 1 << 21, floor: big / 2, ceil: big/2 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MulDiv(tc.a, tc.b, tc.d); got != tc.floor {
				t.Errorf("MulDiv = %d, want %d", got, tc.floor)
			}
			if got := MulDivCeil(tc.a, tc.b, tc.d); got != tc.ceil {
				t.Errorf("MulDivCeil = %d, want %d", got, tc.ceil)
			}
		})
	}
}
