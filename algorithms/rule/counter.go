package rule

import (
	"math"
	"math/bits"
)

// CounterRoll is a sliding counter's state at the instant t (ns): the
// start (ns) of its current window and the counts of the window before it
// and of the current one, from those of the window at start. Windows are w
// ns long and start at phase + j*w; a fresh state's start is
// math.MinInt64. The next window carries the current count as its
// previous one; a later one starts with neither. An instant before start
// (a clock that went backwards) counts against the current window. It
// divides only when t is past the next window: most requests fall in the
// window of the one before, or the next.
func CounterRoll(start, prev, curr, t, w, phase int64) (int64, int64, int64) {
	if t < start {
		return start, prev, curr
	}
	// t-start cannot overflow as a uint64 once t >= start, even for a fresh
	// state's start.
	switch d := uint64(t) - uint64(start); {
	case d < uint64(w):
		return start, prev, curr
	case d < 2*uint64(w) && start != math.MinInt64:
		return start + w, curr, 0
	}
	return FloorTo(t, w, phase), 0, 0
}

// CounterWeight is the part (ns) of the window before a sliding counter's
// current one, which started at start (ns), still inside the trailing
// window of w ns at the instant t (ns): start + w - t, in (0, w] for a t
// in the current window.
func CounterWeight(start, t, w int64) int64 {
	return start + w - t
}

// CounterFits reports whether a request of cost units fits a sliding
// counter whose previous window counted prev and whose current one counts
// curr, at an instant where the previous one weighs weight ns of w: the
// estimate prev*weight/w + curr leaves room for cost within limit. The
// comparison is exact, in 128 bits. curr may be far above limit.
func CounterFits(prev, curr, weight, cost, limit, w int64) bool {
	return cost <= limit-curr && !mulLess(limit-curr-cost, w, prev, weight)
}

// CounterMost is where a sliding counter that counts every request stops
// counting, for a limit of units per window of w ns: min(limit*w,
// math.MaxInt64). From limit*w on, the previous window's weight alone
// leaves no room until it has left, so stopping there changes no decision.
func CounterMost(limit, w int64) int64 {
	if hi, lo := bits.Mul64(uint64(limit), uint64(w)); hi == 0 && lo <= math.MaxInt64 {
		return int64(lo)
	}
	return math.MaxInt64
}

// CounterCount is a sliding counter's current count after it counts a
// request of cost units, admitted or denied, stopping at most (see
// CounterMost).
func CounterCount(curr, cost, most int64) int64 {
	if cost >= most-curr {
		return most
	}
	return curr + cost
}

// mulLess reports whether a*b < x*y for non-negative operands, exactly.
func mulLess(a, b, x, y int64) bool {
	hi1, lo1 := bits.Mul64(uint64(a), uint64(b))
	hi2, lo2 := bits.Mul64(uint64(x), uint64(y))
	return hi1 < hi2 || hi1 == hi2 && lo1 < lo2
}
