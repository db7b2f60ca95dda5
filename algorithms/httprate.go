package algorithms

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms/rule"
)

// HTTPRate is go-chi/httprate v0.16.1's limiter on its default in-memory
// counter (LimitBy, LimitByIP, NewRateLimiter without WithLimitCounter),
// for one key: a sliding window counter whose estimate is a float64,
// rounded to a whole number before it is compared.
//
// Windows. They are [s, s+W) with s = phase + k*W. httprate v0.16 aligns
// an in-memory counter's windows to the instant its RateLimiter was made
// (NewHTTPRateAt); NewHTTPRate takes that instant to be the clock's zero,
// the start of a virtual-time run. httprate before v0.16, and any custom
// LimitCounter (e.g. on Redis), cut windows with time.Time.Truncate(W),
// at multiples of W since Go's zero time: NewHTTPRateAt(p, TruncateOrigin(W))
// on a clock whose zero is the Unix epoch.
//
// The rule. The state is the cost admitted in the current window and in
// the one before; the previous count is used only when its window is
// exactly the one before the current one, and both are zero after a
// window with no request. A request of cost n at diff = now - s ns into
// its window computes, in float64 as httprate does,
//
//	rate = prev*(W - diff)/W + curr
//
// and is rejected iff int(math.Round(rate)) + n > L. An admitted request
// adds n to the current window; a rejected one changes nothing. The
// rounding (half away from zero) admits a request whenever the estimate
// is below L - n + 1/2, not L - n: at L = 50 an estimate of 49.4 admits a
// request of 1 (round(49.4) + 1 = 50) and 49.5 rejects it. Burst is
// ignored; the units are cost units and nanoseconds.
//
// What that admits. A window holds at most L, since round(rate) >= curr.
// In a half-open span W at most max(L, 2L - floor(2L/W + 1/2)) (W in ns;
// HTTPRateWorst): L at the last nanosecond of a window, then, 2ns before
// the end of the next one, where those L weigh 2L/W, as many as the
// rounding lets in. That is 2L whenever W > 4L ns, one more than
// SlidingCounter's 2L - 1. The bound is derived in exact arithmetic,
// which float64 matches for it while 4*L*W < 2^53 (W in ns: e.g. 2
// million per second, 600 per hour).
//
// Time. httprate reads the wall clock (time.Now().UTC(), without its
// monotonic reading): set back into an earlier window, it finds neither
// count and clears both, so that a clock set back creates quota. Here a
// request at an instant earlier than the latest one seen is decided as if
// at that latest instant, as ratebench's other windows are. httprate also
// reads the clock twice per request (for the window it counts in, then
// for the rate), which here is one instant.
//
// RetryAfter is the time until the first instant at which the same
// request is admitted if nothing else happens, ResetAfter until a request
// of L is (from then on the state decides as a fresh one), both found on
// the same float64 computation, exact to the nanosecond. (httprate's own
// Retry-After header is W in whole seconds.) The zero value is not
// usable; use NewHTTPRate. Safe for concurrent use: a mutex makes each
// decision one step, as httprate's own mutex does around its read and
// increment; no allocation.
type HTTPRate struct {
	limit  int64 // L
	window int64 // W, ns
	phase  int64 // windows start at phase + k*W; 0 <= phase < W

	mu     sync.Mutex
	start  int64 // start of the current window; math.MinInt64 at first
	prev   int64 // cost admitted in the window before start
	curr   int64 // cost admitted since start, <= L
	latest int64 // latest instant seen; math.MinInt64 at first
}

// NewHTTPRate returns an HTTPRate for p with windows at multiples of W
// from the clock's zero, as httprate's for a RateLimiter made at that
// zero, or an error wrapping ErrInvalidPolicy.
func NewHTTPRate(p Policy) (*HTTPRate, error) {
	return NewHTTPRateAt(p, 0)
}

// NewHTTPRateAt returns an HTTPRate for p whose windows start at made +
// k*W, as httprate's for a RateLimiter made at the instant made (a
// duration since the clock's zero), or an error wrapping
// ErrInvalidPolicy.
func NewHTTPRateAt(p Policy, made time.Duration) (*HTTPRate, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("httprate: %w", err)
	}
	w := int64(p.Window)
	phase := int64(made) % w
	if phase < 0 {
		phase += w
	}
	return &HTTPRate{limit: p.Limit, window: w, phase: phase, start: math.MinInt64, latest: math.MinInt64}, nil
}

// unixAfterZeroTime is the Unix epoch's distance from Go's zero time
// (January 1, year 1, UTC), in seconds: 719162 days.
const unixAfterZeroTime = 62135596800

// TruncateOrigin returns where time.Time.Truncate(w) starts its windows
// on a clock whose zero is the Unix epoch: the instant in [0, w) that is
// a multiple of w since Go's zero time. It is 0 whenever w divides a day,
// and, e.g., 3s for 7s. For w <= 0 it returns 0.
func TruncateOrigin(w time.Duration) time.Duration {
	if w <= 0 {
		return 0
	}
	// The zero time is unixAfterZeroTime*10^9 ns before the epoch; that
	// product overflows int64, so it is taken modulo w in 128 bits.
	hi, lo := bits.Mul64(unixAfterZeroTime, uint64(time.Second))
	_, r := bits.Div64(hi%uint64(w), lo, uint64(w))
	return time.Duration((uint64(w) - r) % uint64(w))
}

// HTTPRateWorst returns the most cost an HTTPRate for p admits in any
// half-open span W, max(L, 2L - floor(2L/W + 1/2)) with W in ns (see
// HTTPRate), or 0 for an invalid policy.
func HTTPRateWorst(p Policy) int64 {
	p, err := p.Validate()
	if err != nil {
		return 0
	}
	w := int64(p.Window)
	q, r := 2*p.Limit/w, 2*p.Limit%w
	if 2*r >= w { // floor(2L/W + 1/2) rounds up
		q++
	}
	return max(2*p.Limit-q, p.Limit)
}

// Allow implements Limiter; key is ignored.
func (h *HTTPRate) Allow(now time.Duration, _ string, cost int64) (Decision, error) {
	if cost < 1 {
		return Decision{}, fmt.Errorf("httprate: %w: %d", ErrInvalidCost, cost)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.advance(now)
	estimate := rule.HTTPRateEstimate(h.prev, h.curr, t-h.start, h.window)
	allowed := rule.HTTPRateFits(estimate, cost, h.limit)
	var rate int64
	if allowed {
		h.curr = rule.FixedTake(h.curr, cost)
		rate = h.rounded(h.prev, h.curr, t-h.start)
	} else {
		rate = int64(math.Round(estimate))
	}
	d := Decision{Allowed: allowed, Remaining: max(h.limit-rate, 0)}
	if full := h.firstFit(h.limit, t); full > t {
		d.ResetAfter = time.Duration(full - int64(now))
	}
	if !allowed {
		d.RetryAfter = Never
		if cost <= h.limit {
			d.RetryAfter = time.Duration(h.firstFit(cost, t) - int64(now))
		}
	}
	return d, nil
}

// advance moves the counts to the window of now, or of the latest instant
// seen when now is earlier, and returns that instant.
func (h *HTTPRate) advance(now time.Duration) int64 {
	h.latest = max(h.latest, int64(now))
	t := h.latest
	h.start, h.prev, h.curr = rule.CounterRoll(h.start, h.prev, h.curr, t, h.window, h.phase)
	return t
}

// rounded is int(math.Round(rate)) for the counts prev and curr at diff
// ns into the current window, rate computed in float64 exactly as
// httprate computes it.
func (h *HTTPRate) rounded(prev, curr, diff int64) int64 {
	return int64(math.Round(rule.HTTPRateEstimate(prev, curr, diff, h.window)))
}

// fits reports whether a request of cost n <= L is admitted by the counts
// prev and curr at diff ns into their window.
func (h *HTTPRate) fits(prev, curr, diff, n int64) bool {
	return rule.HTTPRateFits(rule.HTTPRateEstimate(prev, curr, diff, h.window), n, h.limit)
}

// firstFit returns the first instant at or after t, the latest instant
// seen, at which a request of cost n <= L is admitted if nothing else
// happens: in the current window, in the next (where the current count
// is the previous one), or at the start of the one after, which is empty.
func (h *HTTPRate) firstFit(n, t int64) int64 {
	next := h.start + h.window
	if u, ok := h.firstIn(h.start, h.prev, h.curr, n, t, next-1); ok {
		return u
	}
	if u, ok := h.firstIn(next, h.curr, 0, n, next, next+h.window-1); ok {
		return u
	}
	return next + h.window
}

// firstIn returns the first instant in [lo, hi] at which a request of
// cost n is admitted by the counts prev and curr of the window starting at
// s, and whether there is one. Within a window the estimate only falls as
// time passes (each float64 step is monotonic), so the instants that
// admit are a suffix of the window. Exact arithmetic gives the first one
// nearly always, and one or two float64 estimates confirm it; a binary
// search settles the rest.
func (h *HTTPRate) firstIn(s, prev, curr, n, lo, hi int64) (int64, bool) {
	ok := func(u int64) bool { return h.fits(prev, curr, u-s, n) }
	if curr < exactFloat && (prev == 0 || curr > h.limit-n) {
		// The estimate is curr exactly, or at least curr: float64
		// holds curr exactly, and adding a weight >= 0 never rounds
		// below it.
		if curr <= h.limit-n {
			return lo, true
		}
		return 0, false
	}
	g, exact := h.guess(s, prev, curr, n)
	return firstAdmitted(lo, hi, g, exact, ok)
}

// exactFloat bounds the counts that float64 holds exactly.
const exactFloat = 1 << 53

// guess returns, for prev > 0 and curr+n <= L, the first instant at which
// the estimate of the window starting at s is below m + 1/2 in exact
// arithmetic, m = L - n - curr: when the weight s+W-u is below
// (2m+1)*W / (2*prev). It returns false if that quotient does not fit.
func (h *HTTPRate) guess(s, prev, curr, n int64) (int64, bool) {
	room := uint64(2*(h.limit-n-curr) + 1)
	hi, lo := bits.Mul64(room, uint64(h.window))
	if hi >= 2*uint64(prev) {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, 2*uint64(prev))
	if r == 0 {
		q-- // the weight must be below the quotient, not equal to it
	}
	if q >= uint64(h.window) {
		return s, true // the whole window
	}
	return s + h.window - int64(q), true
}
