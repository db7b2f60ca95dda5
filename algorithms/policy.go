package algorithms

import (
	"fmt"
	"math"
	"time"
)

// Policy is the one configuration every algorithm takes: Limit cost units
// per Window, with Burst units of headroom (capacity for token and leaky
// buckets, tolerance for GCRA, queue length for the leaky queue). Window
// algorithms ignore Burst. The zero value is invalid; a zero Burst means
// Limit (use WithDefaults or Validate, which fills it).
type Policy struct {
	Limit  int64         // L, cost units admitted per Window; >= 1
	Window time.Duration // W, > 0
	Burst  int64         // B, >= 1; 0 means Limit
}

// maxSpan bounds every duration an algorithm may derive from a policy, so
// that adding one to any instant of a 100-year run cannot overflow int64.
const maxSpan = time.Duration(math.MaxInt64 / 4)

// WithDefaults returns p with Burst set to Limit when it is zero.
func (p Policy) WithDefaults() Policy {
	if p.Burst == 0 {
		p.Burst = p.Limit
	}
	return p
}

// Validate returns p with defaults filled, or an error wrapping
// ErrInvalidPolicy that names the bad field. It never clamps.
func (p Policy) Validate() (Policy, error) {
	p = p.WithDefaults()
	switch {
	case p.Limit < 1:
		return p, fmt.Errorf("%w: limit %d must be >= 1", ErrInvalidPolicy, p.Limit)
	case p.Window <= 0:
		return p, fmt.Errorf("%w: window %v must be > 0", ErrInvalidPolicy, p.Window)
	case p.Burst < 1:
		return p, fmt.Errorf("%w: burst %d must be >= 1", ErrInvalidPolicy, p.Burst)
	case p.Window > maxSpan:
		return p, fmt.Errorf("%w: window %v is too long", ErrInvalidPolicy, p.Window)
	case int64(p.Window) < p.Limit:
		return p, fmt.Errorf("%w: limit %d per %v is more than one per nanosecond", ErrInvalidPolicy, p.Limit, p.Window)
	}
	if p.Burst > int64(maxSpan/p.Interval()) {
		return p, fmt.Errorf("%w: burst %d at %v per unit overflows", ErrInvalidPolicy, p.Burst, p.Interval())
	}
	return p, nil
}

// Interval is the emission interval W/L, rounded up to a whole nanosecond
// so that no algorithm built on it ever exceeds L per W. It is exact when
// W is a multiple of L (e.g. 100 per second: 10ms).
func (p Policy) Interval() time.Duration {
	return time.Duration((int64(p.Window) + p.Limit - 1) / p.Limit)
}

// Rate is the long-run rate in units per second, L/W.
func (p Policy) Rate() float64 {
	return float64(p.Limit) / p.Window.Seconds()
}

// PolicyFromFloat builds a Policy from float values as read from flags or
// files, rejecting NaN, Inf and fractions instead of truncating them.
func PolicyFromFloat(limit float64, window time.Duration, burst float64) (Policy, error) {
	for _, v := range []struct {
		name string
		x    float64
	}{{"limit", limit}, {"burst", burst}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x != math.Trunc(v.x) || math.Abs(v.x) > 1<<53 {
			return Policy{}, fmt.Errorf("%w: %s %v must be a whole number", ErrInvalidPolicy, v.name, v.x)
		}
	}
	return Policy{Limit: int64(limit), Window: window, Burst: int64(burst)}.Validate()
}

// String formats p as "L/W burst B".
func (p Policy) String() string {
	return fmt.Sprintf("%d/%v burst %d", p.Limit, p.Window, p.WithDefaults().Burst)
}
