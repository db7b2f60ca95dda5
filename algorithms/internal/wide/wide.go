// Package wide is exact arithmetic on products of two int64s, in 128 bits:
// what the sliding counter's weighted estimate needs, in memory and when
// decoding Redis's replies. The functions are pure and safe for concurrent
// use.
package wide

import "math/bits"

// MulDiv is floor(a*b/d) for non-negative operands whose quotient fits 63
// bits.
func MulDiv(a, b, d int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(d))
	return int64(q)
}

// MulDivCeil is ceil(a*b/d) for non-negative operands whose quotient fits
// 63 bits.
func MulDivCeil(a, b, d int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, r := bits.Div64(hi, lo, uint64(d))
	if r != 0 {
		q++
	}
	return int64(q)
}
