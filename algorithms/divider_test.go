package algorithms

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDividerExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	divisors := []int64{1, 2, 3, 7, 10, 1000, 333333333, 1e9, 1<<62 + 1, math.MaxInt64}
	for range 200 {
		divisors = append(divisors, 1+rng.Int64N(math.MaxInt64))
	}
	for _, d := range divisors {
		v := newDivider(d)
		xs := []int64{0, 1, d - 1, d, d + 1, math.MaxInt64, math.MaxInt64 - 1}
		if d < math.MaxInt64/3 {
			xs = append(xs, 2*d-1, 2*d, 3*d-1)
		}
		for range 200 {
			xs = append(xs, rng.Int64N(math.MaxInt64))
		}
		for _, x := range xs {
			if x < 0 {
				continue
			}
			if got, want := v.div(x), x/d; got != want {
				t.Fatalf("div(%d, %d) = %d, want %d", x, d, got, want)
			}
		}
	}
}

func FuzzDivider(f *testing.F) {
	f.Add(int64(10), int64(7))
	f.Fuzz(func(t *testing.T, x, d int64) {
		if x < 0 || d <= 0 {
			return
		}
		if got, want := newDivider(d).div(x), x/d; got != want {
			t.Fatalf("div(%d, %d) = %d, want %d", x, d, got, want)
		}
	})
}
