// Package peers adapts other rate-limiting libraries to algorithms.Limiter,
// so that the harness drives and measures them exactly like ratebench's own
// algorithms:
//
//	name (CLI)  library                      kind
//	x-rate      golang.org/x/time/rate       meter (token bucket in float64)
//	uber        go.uber.org/ratelimit        pacer (delays, never rejects)
//
// The adapters are faithful: they pass every request to the library as it
// comes and report what the library decided, quirks included (see the type
// docs). They never read the real clock: the instant now, a duration since
// the clock's zero, becomes the wall time Instant(now), that is the fixed
// epoch 2000-01-01T00:00:00Z plus now.
//
// Constructors: NewXRate and NewUber return the concrete types (for their
// extra methods and tests); NewXRateLimiter and NewUberLimiter have the
// signature func(algorithms.Policy) (algorithms.Limiter, error) that a
// registry table wants, and return a nil interface (not a typed nil) on
// error.
package peers

import "time"

// Names of the adapters on the command line.
const (
	XRateName = "x-rate"
	UberName  = "uber"
)

// epoch is the wall time of the clock's zero. It is not the Unix epoch on
// purpose: go.uber.org/ratelimit keeps its state in Unix nanoseconds and
// takes a state of 0 for "never used", so with the Unix epoch every request
// at instant 0 (where a virtual-time run starts) would be served at once,
// unpaced. Instants from about -30 years to +260 years are representable.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Instant returns the wall time the adapters hand to the libraries for the
// instant now (a duration since the clock's zero): 2000-01-01T00:00:00Z plus
// now. It has no monotonic reading and does not depend on the real clock.
func Instant(now time.Duration) time.Time {
	return epoch.Add(now)
}
