package peers

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratebench/ratebench/algorithms"
)

// XRate adapts golang.org/x/time/rate: a rate.Limiter of limit L/W tokens
// per second (a float64) and burst B, starting full, asked with AllowN at
// Instant(now). It is the token bucket computed in float64: on a clock
// that does not go back it agrees with algorithms.TokenBucket except at
// boundaries, within float64 resolution. Typically it admits 1ns before the
// instant the bucket holds the cost (it truncates a wait of 0.99999...ns
// to zero); when B*T is very large (years) it may instead reject on the
// boundary or 1ns after it.
//
// Known quirk of the library, kept as is: a request admitted at an instant
// earlier than the previous admit moves the limiter's "last" time back, and
// the tokens of the span between the two instants are then refilled a
// second time: time going backwards can create quota. ratebench's own
// algorithms never do.
//
// The zero value is not usable; use NewXRate. Safe for concurrent use: a
// mutex makes each decision (AllowN and the TokensAt that fills the
// decision) one step.
type XRate struct {
	mu     sync.Mutex
	lim    *rate.Limiter
	burst  int64
	perSec float64 // rate, tokens per second, L/W
}

// NewXRate returns an XRate for p, or an error wrapping
// algorithms.ErrInvalidPolicy.
func NewXRate(p algorithms.Policy) (*XRate, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("peers: x-rate: %w", err)
	}
	if p.Burst > math.MaxInt {
		return nil, fmt.Errorf("peers: x-rate: %w: burst %d does not fit an int", algorithms.ErrInvalidPolicy, p.Burst)
	}
	r := rate.Limit(float64(p.Limit) / p.Window.Seconds())
	return &XRate{
		lim:    rate.NewLimiter(r, int(p.Burst)),
		burst:  p.Burst,
		perSec: float64(r),
	}, nil
}

// NewXRateLimiter is NewXRate for a registry: it returns an
// algorithms.Limiter, nil on error.
func NewXRateLimiter(p algorithms.Policy) (algorithms.Limiter, error) {
	x, err := NewXRate(p)
	if err != nil {
		return nil, err
	}
	return x, nil
}

// Allow implements algorithms.Limiter; key is ignored. A cost above the
// burst is rejected with RetryAfter algorithms.Never (AllowN would reject it
// forever). Otherwise the decision is AllowN(Instant(now), cost), and, from
// the tokens t the library holds at now after it:
//
//   - Remaining is floor(t), clamped to [0, B], plus one when t is less
//     than a nanosecond's refill short of the next whole token (the library
//     admits that unit too);
//   - RetryAfter (when rejected) is the wait for cost-t tokens, and
//     ResetAfter the wait for B-t tokens, where the wait for x tokens is
//     x*1e9/rate nanoseconds rounded down, not up: the library admits as
//     soon as its own wait, which it truncates to the nanosecond, is zero,
//     that is up to one nanosecond before the exact instant.
//
// Remaining is exactly what the library admits at the same instant.
// RetryAfter and ResetAfter are exact up to float64 rounding: within 1ns
// of the instant the library first admits for ordinary policies (the
// conformance test runs with a RetrySlack of 1ns), within about B*T*2^-50
// when B*T is large (tens of ns measured for 1 per hour, burst 100000).
func (x *XRate) Allow(now time.Duration, _ string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("peers: x-rate: %w: %d", algorithms.ErrInvalidCost, cost)
	}
	at := Instant(now)
	x.mu.Lock()
	ok := cost <= x.burst && x.lim.AllowN(at, int(cost))
	tokens := x.lim.TokensAt(at)
	x.mu.Unlock()
	d := algorithms.Decision{
		Allowed:    ok,
		Remaining:  x.remaining(tokens),
		ResetAfter: x.wait(float64(x.burst) - tokens),
	}
	switch {
	case ok:
	case cost > x.burst:
		d.RetryAfter = algorithms.Never
	default:
		d.RetryAfter = max(x.wait(float64(cost)-tokens), 1)
	}
	return d, nil
}

// remaining is floor(tokens), plus one when the library would admit one
// more unit anyway (the wait for it truncates to zero), within [0, B].
func (x *XRate) remaining(tokens float64) int64 {
	r := math.Floor(tokens)
	if r < float64(x.burst) && x.wait(r+1-tokens) == 0 {
		r++
	}
	return int64(max(0, min(r, float64(x.burst))))
}

// wait is the time the library needs to refill deficit tokens, rounded
// down to the nanosecond (the library truncates the same product), zero
// when there is no deficit.
func (x *XRate) wait(deficit float64) time.Duration {
	ns := deficit / x.perSec * float64(time.Second) // as rate.Limit.durationFromTokens
	switch {
	case ns <= 0:
		return 0
	case ns >= float64(algorithms.Never):
		return algorithms.Never
	}
	return time.Duration(ns)
}
