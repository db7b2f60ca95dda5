package rule

import (
	"math"
	"math/bits"
)

// HAProxyCounter is HAProxy's frequency counter of requests over a period
// of whole milliseconds (freq_ctr): the start of its current period, Tick
// (ms, even), the requests counted since, Curr, and in the period before,
// Prev; Open once a request has been counted.
type HAProxyCounter struct {
	Tick, Curr, Prev int64
	Open             bool
}

// HAProxyMost is where an HAProxyCounter's count stops for a deny
// threshold of limit requests and a period of period ms: min((limit+1) *
// period, math.MaxInt64). From there the previous period's weight alone
// rejects everything until it has left, so stopping changes no decision.
func HAProxyMost(limit, period int64) int64 {
	if hi, lo := bits.Mul64(uint64(limit)+1, uint64(period)); hi == 0 && lo <= math.MaxInt64 {
		return int64(lo)
	}
	return math.MaxInt64
}

// HAProxyCount is c after n requests at the millisecond m, one after the
// other, m being at or after every millisecond c has counted, for a period
// of period ms and counts that stop at most (HAProxyMost). A request within
// the period adds one to Curr. Otherwise the period rotates: Prev takes
// Curr, Curr is 1, and Tick moves on by the period or, when that period is
// over too (or nothing was counted yet), opens at m; Tick is then forced
// even. At most two of the requests rotate the counter: the first rotation
// leaves m - Tick <= period, equal only for an odd period, and a second
// then leaves it at most 1. Every request counts, denied ones too.
func HAProxyCount(c HAProxyCounter, m, n, period, most int64) HAProxyCounter {
	if !c.Open {
		return HAProxyCounter{Tick: m &^ 1, Curr: min(n, most), Open: true}
	}
	for range 2 {
		if m-c.Tick < period {
			break
		}
		next := c.Tick + period
		c.Prev, c.Curr = c.Curr, 1
		if m-next >= period { // the next period is over too
			c.Prev, next = 0, m
		}
		c.Tick = next &^ 1
		if n--; n == 0 {
			return c
		}
	}
	if n >= most-c.Curr {
		c.Curr = most
	} else {
		c.Curr += n
	}
	return c
}

// HAProxyFits reports whether the rate that HAProxy's deny rule reads at
// the millisecond m from c, which has just counted a request at m (so 0 <=
// m - Tick <= period), is at most limit: Curr + floor(Prev*remain/period)
// <= limit, remain = Tick + period - m. It is exact, and forms neither the
// sum nor the quotient: floor(x/period) <= r iff x < (r+1)*period.
func HAProxyFits(c HAProxyCounter, m, period, limit int64) bool {
	if c.Curr > limit {
		return false
	}
	return mulLess(c.Prev, c.Tick+period-m, limit-c.Curr+1, period)
}
