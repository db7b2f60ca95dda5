package peers

import (
	"fmt"
	"math"
	"sync"
	"time"

	"go.uber.org/ratelimit"

	"github.com/ratebench/ratebench/algorithms"
)

// Uber adapts go.uber.org/ratelimit, a pacer: it never rejects, it says
// when each request may go. The library is built with
// ratelimit.New(L, ratelimit.Per(W), ratelimit.WithSlack(B-1)) on a virtual
// clock; Allow sets the clock to Instant(now), calls Take and reports the
// instant Take returns, minus now, as Decision.Delay.
//
// Mapping of the policy, and where it is not exact:
//
//   - Interval: the library spaces requests by W/L truncated to the
//     nanosecond (ratebench rounds up), so when W is not a multiple of L it
//     is faster than L per W by less than one nanosecond per request.
//   - Burst: slack s lets the library serve s+1 requests at one instant
//     after an idle period of at least (s+1)*T, then one every T; s = B-1
//     makes that B, as in a token bucket of capacity B used as a shaper.
//     But a fresh library has no slack: its first Take sets its state to
//     now, so a new Uber serves one request at once and paces the rest; it
//     reaches its burst B only after B*T without requests.
//
// Decision fields: Allowed is always true and RetryAfter 0. Remaining is 0:
// the library does not expose how much slack it holds (with a zero delay
// its state, somewhere in [now-(B-1)T, now], is not observable). ResetAfter
// is Delay + B*T, the time until B requests would again be served at once:
// exact when the request was delayed (the library's state is then the
// instant it returned), an upper bound when it was served at once.
//
// The zero value is not usable; use NewUber. Safe for concurrent use: a
// mutex serialises decisions, because the virtual clock is shared state.
type Uber struct {
	mu       sync.Mutex
	clock    virtualClock
	lim      ratelimit.Limiter
	interval time.Duration // T as the library computes it, W/L truncated
	burst    int64
}

// virtualClock is the ratelimit.Clock of an Uber: Now is the instant of the
// request being decided, and Sleep returns at once without moving the
// clock. Take does not read the clock after it sleeps (it returns the
// instant it computed), so nothing else is needed. Guarded by Uber.mu.
type virtualClock struct {
	now time.Time
}

// Now implements ratelimit.Clock.
func (c *virtualClock) Now() time.Time { return c.now }

// Sleep implements ratelimit.Clock; it does not sleep.
func (c *virtualClock) Sleep(time.Duration) {}

// NewUber returns an Uber for p, or an error wrapping
// algorithms.ErrInvalidPolicy.
func NewUber(p algorithms.Policy) (*Uber, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, fmt.Errorf("peers: uber: %w", err)
	}
	if p.Limit > math.MaxInt || p.Burst > math.MaxInt {
		return nil, fmt.Errorf("peers: uber: %w: limit %d or burst %d does not fit an int", algorithms.ErrInvalidPolicy, p.Limit, p.Burst)
	}
	u := &Uber{interval: p.Window / time.Duration(p.Limit), burst: p.Burst}
	u.lim = ratelimit.New(int(p.Limit),
		ratelimit.Per(p.Window),
		ratelimit.WithSlack(int(p.Burst-1)),
		ratelimit.WithClock(&u.clock))
	return u, nil
}

// NewUberLimiter is NewUber for a registry: it returns an
// algorithms.Limiter, nil on error.
func NewUberLimiter(p algorithms.Policy) (algorithms.Limiter, error) {
	u, err := NewUber(p)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// Allow implements algorithms.Limiter; key is ignored. The library has no
// cost: a request of cost n calls Take n times at now (so it takes O(n)
// time) and its Delay is the last one's. Every request is admitted,
// whatever its cost.
func (u *Uber) Allow(now time.Duration, _ string, cost int64) (algorithms.Decision, error) {
	if cost < 1 {
		return algorithms.Decision{}, fmt.Errorf("peers: uber: %w: %d", algorithms.ErrInvalidCost, cost)
	}
	at := Instant(now)
	u.mu.Lock()
	u.clock.now = at
	var served time.Time
	for range cost {
		served = u.lim.Take()
	}
	u.mu.Unlock()
	delay := served.Sub(at)
	return algorithms.Decision{
		Allowed:    true,
		Delay:      delay,
		ResetAfter: delay + time.Duration(u.burst)*u.interval,
	}, nil
}
