package rule

import "math"

// NginxUnit is the thousandths of a request that nginx's limit_req keeps
// its excess in, per request.
const NginxUnit = 1000

// nginxBackLimit is how far back (ms) nginx takes its clock as standing
// still; further back, it takes 1ms forward.
const nginxBackLimit = 60000

// NginxFullMs is the milliseconds in which nginx's limit_req, draining
// rate (>= 1) thousandths of a request per second, drains the fullest
// excess of a burst of most requests (the first included):
// ceil(10^6*most/rate).
func NginxFullMs(rate, most int64) int64 {
	return (most*1_000_000 + rate - 1) / rate
}

// NginxRoll is the excess (thousandths) that nginx's limit_req gives a
// request at the millisecond m, from the excess of its state and last, the
// millisecond of the admit that last moved it (math.MinInt64 before any),
// draining rate thousandths per second; and the milliseconds it counts as
// elapsed, 0 when last is not to move. Going back at most a minute drains
// nothing; further back counts as 1ms forward. A fresh state gives excess
// 0. From fullMs elapsed on (NginxFullMs for an excess within the burst,
// math.MaxInt64 for none) the excess has drained away.
func NginxRoll(excess, last, m, rate, fullMs int64) (base, elapsed int64) {
	if last == math.MinInt64 {
		return 0, 1 // a new node: excess 0, last set
	}
	e := m - last
	switch {
	case e < -nginxBackLimit:
		e = 1
	case e < 0:
		e = 0
	}
	if e >= fullMs { // drained whatever excess is; rate*e may not fit
		return 0, e
	}
	return max(excess-rate*e/1000+NginxUnit, 0), e
}

// NginxFits reports whether a request of cost requests fits nginx's
// limit_req when its first request is given excess base (NginxRoll), for
// a burst of most requests (the first included), burst = (most-1)*1000
// thousandths: all of them are admitted or none.
func NginxFits(base, cost, most, burst int64) bool {
	return cost <= most && base+(cost-1)*NginxUnit <= burst
}

// NginxTake is the excess and last after such a request, given base and
// elapsed by NginxRoll at the millisecond m, is admitted.
func NginxTake(base, elapsed, last, m, cost int64) (excess, newLast int64) {
	if elapsed != 0 {
		last = m
	}
	return base + (cost-1)*NginxUnit, last
}
