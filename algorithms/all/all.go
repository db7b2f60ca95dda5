// Package all is the one written-out list of the algorithms and peer
// adapters ratebench knows, with the theory each is measured against. It is
// ranged over by the CLI, the engines and the benchmark matrix; nothing
// registers itself.
package all

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/peers"
)

// Entry describes one algorithm. It is a plain record.
type Entry struct {
	Name     string // CLI name
	Describe string // one line
	// Theory is the worst case admitted (served, for shapers) in any span
	// W by one instance, TheoryText the same as a formula.
	Theory     func(algorithms.Policy) int64
	TheoryText string
	// IgnoresBurst: window algorithms, whose capacity is L.
	IgnoresBurst bool
	// Shaper: admitted requests are delayed (Decision.Delay); Pacer: a
	// shaper that never rejects.
	Shaper, Pacer bool
	// CountsDenied: a rejected request takes quota as an admitted one
	// does, so a client that keeps sending is held off.
	CountsDenied bool
	// RetrySlack is how far RetryAfter and ResetAfter may be off the
	// exact instant, for an algorithm that computes in floating point;
	// 0: exact to the nanosecond.
	RetrySlack time.Duration
	// Peer: an adapter over another library.
	Peer bool
	New  func(algorithms.Policy) (algorithms.Limiter, error)
}

func bPlusL(p algorithms.Policy) int64   { p = p.WithDefaults(); return p.Burst + p.Limit }
func twoL(p algorithms.Policy) int64     { return 2 * p.Limit }
func oneL(p algorithms.Policy) int64     { return p.Limit }
func lPlusOne(p algorithms.Policy) int64 { return p.Limit + 1 }

// twoLMinusOne is the worst case of a window opened by a request: the
// opener, at the window's start, is never in a span W with the next
// window's requests.
func twoLMinusOne(p algorithms.Policy) int64 { return 2*p.Limit - 1 }

// slidingCounterWorst is 2L - ceil(2L/W) with W in ns: L at the last
// nanosecond of a window, then as much as the weighted estimate lets in
// just before the end of the next one.
func slidingCounterWorst(p algorithms.Policy) int64 {
	w := int64(p.Window)
	return max(2*p.Limit-(2*p.Limit+w-1)/w, p.Limit)
}

// wrap turns a constructor of a concrete type into one of a Limiter, so
// that a nil pointer never hides in a non-nil interface.
func wrap[T algorithms.Limiter](f func(algorithms.Policy) (T, error)) func(algorithms.Policy) (algorithms.Limiter, error) {
	return func(p algorithms.Policy) (algorithms.Limiter, error) {
		l, err := f(p)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// Entries returns every algorithm, in-memory ones first, then peers.
func Entries() []Entry {
	return []Entry{
		{Name: "token-bucket", Describe: "token bucket, starts full, continuous refill: capacity B, refill L/W",
			Theory: bPlusL, TheoryText: "B + L", New: wrap(algorithms.NewTokenBucket)},
		{Name: "gcra", Describe: "generic cell rate algorithm (one TAT word): interval W/L, tolerance for B",
			Theory: bPlusL, TheoryText: "B + L", New: wrap(algorithms.NewGCRA)},
		{Name: "leaky-bucket", Describe: "leaky bucket as a meter: capacity B, leaks L/W, rejects when full",
			Theory: bPlusL, TheoryText: "B + L", New: wrap(algorithms.NewLeakyBucket)},
		{Name: "leaky-queue", Describe: "leaky bucket as a queue (shaper): serves at L/W, queues up to B, rejects when full",
			Theory: lPlusOne, TheoryText: "L + 1 served", Shaper: true, New: wrap(algorithms.NewLeakyQueue)},
		{Name: "fixed-window", Describe: "counter per aligned window: L per window W",
			Theory: twoL, TheoryText: "2L (window boundary)", IgnoresBurst: true, New: wrap(algorithms.NewFixedWindow)},
		{Name: "sliding-log", Describe: "exact log of admits: L in any trailing W",
			Theory: oneL, TheoryText: "L", IgnoresBurst: true, New: wrap(algorithms.NewSlidingLog)},
		{Name: "sliding-counter", Describe: "weighted previous + current window counter: approximately L",
			Theory: slidingCounterWorst, TheoryText: "≈ L typical, 2L - 1 worst", IgnoresBurst: true, New: wrap(algorithms.NewSlidingCounter)},
		{Name: "fixed-window-first", Describe: "counter per window opened by the first request after the last one expired (INCR + EXPIRE): L per W",
			Theory: twoLMinusOne, TheoryText: "2L - 1 (window boundary)", IgnoresBurst: true, New: wrap(algorithms.NewFixedWindowFirst)},
		{Name: "sliding-log-all", Describe: "sliding log of every request, rejected too: L in any trailing W, a client that keeps sending is starved",
			Theory: oneL, TheoryText: "L", IgnoresBurst: true, CountsDenied: true, New: wrap(algorithms.NewSlidingLogAll)},
		{Name: "sliding-counter-all", Describe: "weighted previous + current window counting every request, rejected too: approximately L, starves overload",
			Theory: slidingCounterWorst, TheoryText: "≈ L typical, 2L - 1 worst", IgnoresBurst: true, CountsDenied: true, New: wrap(algorithms.NewSlidingCounterAll)},
		{Name: "token-bucket-debt", Describe: "token bucket whose rejected requests take their cost too, down to -B tokens: capacity B, refill L/W",
			Theory: bPlusL, TheoryText: "B + L", CountsDenied: true, New: wrap(algorithms.NewTokenBucketDebt)},
		{Name: "nginx-limit-req", Describe: "nginx limit_req nodelay: rate L/W in 0.001 r/s on 1ms ticks, burst=B-1 (B after idle)",
			Theory: algorithms.NginxLimitReqWorst, TheoryText: "B + ⌊rate·⌈W/1ms⌉/10⁶⌋ (B + L for W = 1s)", New: wrap(algorithms.NewNginxLimitReq)},
		{Name: "httprate", Describe: "go-chi/httprate v0.16.1 in memory: weighted previous + current window in float64, rounded, then + cost <= L",
			Theory: algorithms.HTTPRateWorst, TheoryText: "2L - ⌊2L/W + ½⌋, W in ns (2L when W > 4L ns)", IgnoresBurst: true, New: wrap(algorithms.NewHTTPRate)},
		{Name: "haproxy-req-rate", Describe: "HAProxy 2.6 http_req_rate(W) and deny if sc_http_req_rate gt L: every request counted, periods opened by a request, on 1ms ticks",
			Theory: algorithms.HAProxyReqRateWorst, TheoryText: "2L - ⌊L/P⌋, P = W in ms (2L when P > L); odd P: 2L + ⌈(L - ⌊L/P⌋)/P⌉", IgnoresBurst: true, CountsDenied: true, New: wrap(algorithms.NewHAProxyReqRate)},
		{Name: "x-rate", Describe: "golang.org/x/time/rate Limiter.AllowN (token bucket, float64 tokens)",
			Theory: bPlusL, TheoryText: "B + L", Peer: true, RetrySlack: 1, New: peers.NewXRateLimiter},
		{Name: "uber", Describe: "go.uber.org/ratelimit Take on a virtual clock (pacer: delays, never rejects)",
			Theory: lPlusOne, TheoryText: "L + 1 served (+ slack)", Shaper: true, Pacer: true, Peer: true, New: peers.NewUberLimiter},
	}
}

// Names returns the CLI names of every entry.
func Names() []string {
	es := Entries()
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name
	}
	return names
}

// InMemoryNames returns the names of the entries that are not peers:
// ratebench's own algorithms.
func InMemoryNames() []string {
	var names []string
	for _, e := range Entries() {
		if !e.Peer {
			names = append(names, e.Name)
		}
	}
	return names
}

// Lookup returns the entry called name, in any case, or an error listing
// the names.
func Lookup(name string) (Entry, error) {
	for _, e := range Entries() {
		if strings.EqualFold(e.Name, name) {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("unknown algorithm %q (algorithms: %s)", name, strings.Join(Names(), ", "))
}
