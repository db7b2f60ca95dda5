package algorithms

import "math/bits"

// divider divides non-negative int64s by a fixed positive d with one
// 64x64->128 multiply and one correction instead of a hardware division,
// which costs tens of cycles on the decision's hot path. m = floor((2^64-1)/d)
// makes the first quotient at most one too small. The zero value is not
// usable; use newDivider. Safe for concurrent use (read-only).
type divider struct {
	d, m uint64
}

func newDivider(d int64) divider {
	return divider{d: uint64(d), m: ^uint64(0) / uint64(d)}
}

// div returns floor(x/d) for x >= 0.
func (v divider) div(x int64) int64 {
	q, _ := bits.Mul64(uint64(x), v.m)
	if uint64(x)-q*v.d >= v.d {
		q++
	}
	return int64(q)
}
