package algorithms

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/internal/wide"
	"github.com/ratebench/ratebench/algorithms/rule"
)

// NginxLimitReq is nginx's limit_req with nodelay, for one zone and one
// key: a leaky bucket kept in thousandths of a request ("excess") and
// drained on a millisecond clock, with nginx's integer arithmetic.
//
// Policy mapping. L per W with burst B is limit_req_zone rate=L/W and
// limit_req burst=B-1 nodelay. nginx keeps the rate as a whole number of
// thousandths of a request per second: here floor(L*10^12/W), W in ns,
// which is exactly nginx's rate=Lr/s for W = 1s and rate=Lr/m (L*1000/60,
// truncated) for W = 1min; a policy whose rate is below one thousandth of
// a request per second is invalid, as is a burst above 2^40. nginx's burst
// counts the requests admitted on top of the first, so burst=20 is B = 21:
// after idle, B requests are admitted at once.
//
// The decision. Time is cut into milliseconds, m = floor(now/1ms). The
// state is excess (0 <= excess <= (B-1)*1000) and last, the millisecond of
// the admit that last moved it. A request at millisecond m finds elapsed
// e = m - last, taken as 1 when below -60000 (a clock that went back more
// than a minute) and as 0 when between -60000 and 0, and is given
// max(excess - floor(rate*e/1000) + 1000, 0); it is rejected iff that is
// above (B-1)*1000. Admitted, it stores that as excess, and m as last
// unless e was taken as 0. A rejected request changes nothing, and an
// admitted one is never delayed (nodelay). The first request (nginx
// creates the key's node) gets excess 0, as one after a long idle does.
// nginx counts requests, not cost: a request of cost n is decided as n
// requests at the same instant, all admitted or none, so that it is
// admitted iff the n-th of them would be; one above B is rejected with
// RetryAfter Never.
//
// What that admits. Once the burst is used, the drain allows one request
// per 1000/rate seconds, in whole milliseconds counted from the last admit,
// and the thousandths that floor(rate*e/1000) drops are lost at every
// admit (at rate=1r/m, 16 thousandths per second, less than one request a
// minute). Rejected requests do not count. In a half-open span W on
// instants that never go back, at most
//
//	min(B + floor(rate*D/10^6), B*(D+1)),  D = ceil(W/1ms),
//
// are admitted: each admit raises excess by 1000 and excess stays within
// (B-1)*1000, so besides B only what drained between the first and last
// admit of the span (at most rate*D/1000 thousandths, their milliseconds
// being at most D apart) is admitted; and no millisecond admits more than
// B. That is B + L for W = 1s (B in the last nanosecond of a millisecond,
// then one every 1000/L ms until the millisecond 1000 later), but twice B in a span of 1ns when W is under a millisecond
// and the rate drains B in one: the millisecond clock lets both sides of
// a tick through. Time going back drains nothing and is not accounted for
// (an admit then finds the state as it is, not fuller), so on instants
// that go back the bound can be exceeded; and going back more than a
// minute counts as 1ms forward and moves last back, so that coming forward
// again drains the whole stretch a second time: as in nginx, that creates
// quota.
//
// RetryAfter is the time until the millisecond from which the drain since
// last makes room for the same request; ResetAfter until the one from which
// excess has drained away, so that B fit again. The zero value is not
// usable; use NewNginxLimitReq. Safe for concurrent use: a mutex makes
// each decision one step; no allocation.
type NginxLimitReq struct {
	rate   int64 // thousandths of a request per second, >= 1
	burst  int64 // nginx's burst in thousandths, (B-1)*1000
	most   int64 // B, the largest cost admitted at once
	fullMs int64 // ms to drain the fullest excess: ceil(10^6*B/rate)

	mu     sync.Mutex
	excess int64 // thousandths, 0 <= excess <= burst
	last   int64 // ms of the admit that last moved excess; noLast before any
}

const (
	nginxTick     = int64(time.Millisecond)
	nginxUnit     = rule.NginxUnit // thousandths in a request
	nginxMaxBurst = 1 << 40        // so that 10^6*B fits an int64 with room
	noLast        = math.MinInt64
)

// nginxRate returns nginx's rate for p, floor(L*10^12/W) thousandths of a
// request per second, and the milliseconds a full bucket takes to drain,
// or an error wrapping ErrInvalidPolicy.
func nginxRate(p Policy) (Policy, int64, int64, error) {
	p, err := p.Validate()
	if err != nil {
		return p, 0, 0, err
	}
	// L <= W, so the quotient is at most 10^12.
	hi, lo := bits.Mul64(uint64(p.Limit), 1e12)
	q, _ := bits.Div64(hi, lo, uint64(p.Window))
	rate := int64(q)
	switch {
	case rate < 1:
		return p, 0, 0, fmt.Errorf("%w: limit %d per %v is below 0.001 request per second, nginx's smallest rate", ErrInvalidPolicy, p.Limit, p.Window)
	case p.Burst > nginxMaxBurst:
		return p, 0, 0, fmt.Errorf("%w: burst %d is above %d", ErrInvalidPolicy, p.Burst, int64(nginxMaxBurst))
	}
	fullMs := rule.NginxFullMs(rate, p.Burst)
	if fullMs > int64(maxSpan)/nginxTick {
		return p, 0, 0, fmt.Errorf("%w: burst %d at %d thousandths per second takes too long to drain", ErrInvalidPolicy, p.Burst, rate)
	}
	return p, rate, fullMs, nil
}

// NewNginxLimitReq returns a NginxLimitReq for p with no request seen, or
// an error wrapping ErrInvalidPolicy.
func NewNginxLimitReq(p Policy) (*NginxLimitReq, error) {
	p, rate, fullMs, err := nginxRate(p)
	if err != nil {
		return nil, fmt.Errorf("nginx-limit-req: %w", err)
	}
	return &NginxLimitReq{
		rate:   rate,
		burst:  (p.Burst - 1) * nginxUnit,
		most:   p.Burst,
		fullMs: fullMs,
		last:   noLast,
	}, nil
}

// NginxLimitReqWorst returns the most cost a NginxLimitReq for p admits in
// any half-open span W on instants that never go back,
// min(B + floor(rate*D/10^6), B*(D+1)) with D = ceil(W/1ms) (see
// NginxLimitReq), or 0 for an invalid policy.
func NginxLimitReqWorst(p Policy) int64 {
	p, rate, _, err := nginxRate(p)
	if err != nil {
		return 0
	}
	ticks := (int64(p.Window) + nginxTick - 1) / nginxTick // D
	worst := p.Burst + wide.MulDiv(rate, ticks, 1_000_000)
	if hi, lo := bits.Mul64(uint64(p.Burst), uint64(ticks+1)); hi == 0 && lo < uint64(worst) {
		worst = int64(lo)
	}
	return worst
}

// Allow implements Limiter; key is ignored.
func (g *NginxLimitReq) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("nginx-limit-req: %w: %d", ErrInvalidCost, cost)
	}
	m := rule.Millis(int64(now), 0)
	g.mu.Lock()
	defer g.mu.Unlock()
	base, elapsed := rule.NginxRoll(g.excess, g.last, m, g.rate, g.fullMs)
	if rule.NginxFits(base, cost, g.most, g.burst) {
		g.excess, g.last = rule.NginxTake(base, elapsed, g.last, m, cost)
		return Decision{
			Allowed:    true,
			Remaining:  g.remaining(g.excess + nginxUnit), // at m, elapsed is now 0
			ResetAfter: g.resetAfter(now),
		}, nil
	}
	retry := Never
	if cost <= g.most {
		// Admitted once floor(rate*e/1000) >= need. A fresh state admits
		// every cost up to B, so last is set here.
		need := g.excess + cost*nginxUnit - g.burst
		retry = time.Duration((g.last+ceilDiv(need*nginxUnit, g.rate))*nginxTick - int64(now))
	}
	return Decision{
		Remaining:  g.remaining(base),
		RetryAfter: retry,
		ResetAfter: g.resetAfter(now),
	}, nil
}

// remaining is the number of requests of one admitted at the same instant
// when the first would be given excess base.
func (g *NginxLimitReq) remaining(base int64) int64 {
	if base > g.burst {
		return 0
	}
	return (g.burst-base)/nginxUnit + 1
}

// resetAfter is the time until the millisecond from which excess has
// drained away, or zero when it has by now.
func (g *NginxLimitReq) resetAfter(now time.Duration) time.Duration {
	if g.last == noLast {
		return 0
	}
	at := (g.last + ceilDiv((g.excess+nginxUnit)*nginxUnit, g.rate)) * nginxTick
	return time.Duration(max(at-int64(now), 0))
}

// ceilDiv is ceil(a/b) for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 {
	return (a + b - 1) / b
}
