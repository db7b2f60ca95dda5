package algorithms_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// fuzzSpec describes one algorithm to the common fuzz body.
type fuzzSpec struct {
	new func(algorithms.Policy) (algorithms.Limiter, error)
	// windowed: the capacity is L, the burst is ignored.
	windowed bool
	// shaper: admitted units are counted at the instants they are served,
	// now+Delay+k*T for the k-th unit of a request, as DESIGN section 2 says.
	shaper bool
	// latest: a request earlier than the latest instant seen is decided as
	// if at that instant (it counts against the current window, or is logged
	// there), so the spans count it there. The buckets need no such thing:
	// going back in time finds them fuller, and their bound holds on the
	// instants as given.
	latest bool
	// bound is the most cost admitted (served) in any half-open span W.
	bound func(algorithms.Policy) int64
	// twin, when set, must decide alike on every request, every field
	// (Delay aside when noDelay).
	twin    func(algorithms.Policy) (algorithms.Limiter, error)
	noDelay bool
	// countsDenied: a rejected request counts, so the final checks probe
	// each on its own replay of the trace (a rejected probe would count
	// against the next one).
	countsDenied bool
	// unit is the time unit of the decoded windows and gaps; 0 means 1ns.
	// A limiter on a coarser clock (nginx's milliseconds) needs traces that
	// cross its ticks now and then rather than never.
	unit time.Duration
	// forwardBound: the bound over spans W is checked only on traces whose
	// instants never go back. nginx drains nothing for time going back and
	// does not account for it either, so an admit at an earlier instant
	// after a later one drained the state can exceed the bound.
	forwardBound bool
	// windowUnit, when set, is the unit of the decoded windows instead of
	// unit, and a window is at least two of them: HAProxy's periods are
	// whole milliseconds, from 2ms, while its requests fall anywhere.
	windowUnit time.Duration
	// monotone: a request at an instant earlier than the latest one seen
	// is decided exactly as at that instant, so that going back creates
	// no quota: the trace with each instant raised to the latest one
	// before it gets the same decisions (Allowed, Remaining, and the
	// instant RetryAfter points to).
	monotone bool
}

func bPlusL(p algorithms.Policy) int64 { return p.WithDefaults().Burst + p.Limit }
func twoL(p algorithms.Policy) int64   { return 2 * p.Limit }
func oneL(p algorithms.Policy) int64   { return p.Limit }

// twoLMinusOne is FixedWindowFirst's worst case: the request that opened a
// window is never in a span W with the next window's.
func twoLMinusOne(p algorithms.Policy) int64 { return 2*p.Limit - 1 }

// limiterOf turns a constructor of a concrete type into one of a Limiter.
func limiterOf[L algorithms.Limiter](f func(algorithms.Policy) (L, error)) func(algorithms.Policy) (algorithms.Limiter, error) {
	return func(p algorithms.Policy) (algorithms.Limiter, error) {
		l, err := f(p)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

var (
	specTokenBucket = fuzzSpec{new: limiterOf(algorithms.NewTokenBucket), bound: bPlusL}
	specGCRA        = fuzzSpec{new: limiterOf(algorithms.NewGCRA), bound: bPlusL,
		twin: limiterOf(algorithms.NewTokenBucket)}
	specLeakyBucket = fuzzSpec{new: limiterOf(algorithms.NewLeakyBucket), bound: bPlusL,
		twin: limiterOf(algorithms.NewGCRA)}
	specLeakyQueue = fuzzSpec{new: limiterOf(algorithms.NewLeakyQueue), shaper: true, bound: oneL,
		twin: limiterOf(algorithms.NewGCRA), noDelay: true}
	specFixedWindow    = fuzzSpec{new: limiterOf(algorithms.NewFixedWindow), windowed: true, latest: true, bound: twoL}
	specSlidingLog     = fuzzSpec{new: limiterOf(algorithms.NewSlidingLog), windowed: true, latest: true, bound: oneL}
	specSlidingCounter = fuzzSpec{new: limiterOf(algorithms.NewSlidingCounter), windowed: true, latest: true,
		bound: slidingCounterBound}
	specFixedWindowFirst = fuzzSpec{new: limiterOf(algorithms.NewFixedWindowFirst), windowed: true, latest: true, bound: twoLMinusOne}
	specSlidingLogAll    = fuzzSpec{new: limiterOf(algorithms.NewSlidingLogAll), windowed: true, latest: true, bound: oneL,
		countsDenied: true}
	specSlidingCounterAll = fuzzSpec{new: limiterOf(algorithms.NewSlidingCounterAll), windowed: true, latest: true,
		bound: slidingCounterBound, countsDenied: true}
	specTokenBucketDebt = fuzzSpec{new: limiterOf(algorithms.NewTokenBucketDebt), bound: bPlusL, countsDenied: true}
	// An eighth of a millisecond: windows of 1/8ms to 9ms, gaps up to 28ms.
	specNginxLimitReq = fuzzSpec{new: limiterOf(algorithms.NewNginxLimitReq), bound: algorithms.NginxLimitReqWorst,
		unit: time.Millisecond / 8, forwardBound: true}
	// Windows of L to L+63ns: from 4L ns down, where the rounded weight
	// of a previous window is more than 0.
	specHTTPRate = fuzzSpec{new: limiterOf(algorithms.NewHTTPRate), windowed: true, latest: true,
		bound: algorithms.HTTPRateWorst, monotone: true}
	// Periods of 2 to 72ms, even and odd; gaps of -8ms to 56ms in quarters
	// of a millisecond.
	specHAProxyReqRate = fuzzSpec{new: limiterOf(algorithms.NewHAProxyReqRate), windowed: true, latest: true,
		bound: algorithms.HAProxyReqRateWorst, countsDenied: true, unit: time.Millisecond / 4,
		windowUnit: time.Millisecond, monotone: true}
)

func FuzzTokenBucket(f *testing.F)    { fuzzLimiter(f, specTokenBucket) }
func FuzzGCRA(f *testing.F)           { fuzzLimiter(f, specGCRA) }
func FuzzLeakyBucket(f *testing.F)    { fuzzLimiter(f, specLeakyBucket) }
func FuzzLeakyQueue(f *testing.F)     { fuzzLimiter(f, specLeakyQueue) }
func FuzzFixedWindow(f *testing.F)    { fuzzLimiter(f, specFixedWindow) }
func FuzzSlidingLog(f *testing.F)     { fuzzLimiter(f, specSlidingLog) }
func FuzzSlidingCounter(f *testing.F) { fuzzLimiter(f, specSlidingCounter) }

func FuzzFixedWindowFirst(f *testing.F)  { fuzzLimiter(f, specFixedWindowFirst) }
func FuzzSlidingLogAll(f *testing.F)     { fuzzLimiter(f, specSlidingLogAll) }
func FuzzSlidingCounterAll(f *testing.F) { fuzzLimiter(f, specSlidingCounterAll) }
func FuzzTokenBucketDebt(f *testing.F)   { fuzzLimiter(f, specTokenBucketDebt) }
func FuzzNginxLimitReq(f *testing.F)     { fuzzLimiter(f, specNginxLimitReq) }
func FuzzHTTPRate(f *testing.F)          { fuzzLimiter(f, specHTTPRate) }
func FuzzHAProxyReqRate(f *testing.F)    { fuzzLimiter(f, specHAProxyReqRate) }

// fuzzLimiter seeds the corpus and runs the common body.
func fuzzLimiter(f *testing.F, s fuzzSpec) {
	// Byte 0: L-1 (mod 8); byte 1: W-L in ns (mod 64); byte 2: B-1 (mod
	// 8); then pairs: gap+32 in ns (so -32..223), cost-1 (mod 2*capacity).
	f.Add([]byte{9, 0, 9, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0})
	// The boundary attack (W = 8ns, 1000ns a window start): 4 at 999, 4 at 1000.
	f.Add([]byte{3, 4, 3, 31, 0, 32, 0, 32, 0, 32, 0, 33, 0, 32, 0, 32, 0, 32, 0, 40, 0, 32, 3})
	// Back in time after filling, and costs above the capacity.
	f.Add([]byte{2, 3, 5, 32, 2, 40, 1, 0, 0, 20, 255, 64, 0, 10, 0, 32, 7, 200, 3, 31, 0})
	// The sliding counter's worst case: L at the last ns of a window, then
	// as much as fits 2ns before the end of the next (L = 3, W = 10ns).
	f.Add([]byte{2, 7, 0, 41, 0, 32, 0, 32, 0, 32, 0, 41, 0, 32, 0, 32, 0, 32, 0})
	r := rand.New(rand.NewPCG(7, 7))
	for range 8 {
		b := make([]byte, 3+2*r.IntN(60))
		for i := range b {
			b[i] = byte(r.Uint32())
			if i >= 3 && i%2 == 1 {
				b[i] = byte(r.IntN(32 + 3*32)) // mostly forward, small gaps
			}
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, s, data) })
}

// decodeFuzz turns fuzz bytes into a small policy and a trace of at most
// 256 requests, instants possibly going back, costs 1..2*capacity; times
// in units of s.unit.
func decodeFuzz(s fuzzSpec, data []byte) (algorithms.Policy, []request) {
	if len(data) < 5 {
		return algorithms.Policy{}, nil
	}
	unit := max(s.unit, 1)
	limit := 1 + int64(data[0]%8)
	window := time.Duration(limit+int64(data[1]%64)) * unit
	if s.windowUnit > 0 {
		window = time.Duration(1+limit+int64(data[1]%64)) * s.windowUnit
	}
	p := algorithms.Policy{Limit: limit, Window: window, Burst: 1 + int64(data[2]%8)}
	capacity := p.Burst
	if s.windowed {
		capacity = p.Limit
	}
	var trace []request
	at := 1000 * unit
	for i := 3; i+1 < len(data) && len(trace) < 256; i += 2 {
		at += time.Duration(int64(data[i])-32) * unit
		trace = append(trace, request{at: at, cost: 1 + int64(data[i+1])%(2*capacity)})
	}
	return p, trace
}

// fuzzBody runs the trace and checks every decision, the bound over spans
// W, the twin, and at the end that the last decision's Remaining,
// RetryAfter and ResetAfter are exact.
func fuzzBody(t *testing.T, s fuzzSpec, data []byte) {
	p, trace := decodeFuzz(s, data)
	if trace == nil {
		return
	}
	l, err := s.new(p)
	if err != nil {
		t.Fatalf("New(%v): %v", p, err)
	}
	var twin algorithms.Limiter
	if s.twin != nil {
		if twin, err = s.twin(p); err != nil {
			t.Fatal(err)
		}
	}
	capacity := p.WithDefaults().Burst
	if s.windowed {
		capacity = p.Limit
	}
	interval := p.Interval()
	latest := time.Duration(math.MinInt64)
	var admits []admit
	bounded := -1 // with forwardBound, the admits before time first went back
	var d algorithms.Decision
	for i, q := range trace {
		d, err = l.Allow(q.at, "k", q.cost)
		if err != nil {
			t.Fatalf("policy %v request %d %+v: %v", p, i, q, err)
		}
		if s.forwardBound && bounded < 0 && q.at < latest {
			bounded = len(admits)
		}
		latest = max(latest, q.at)
		fail := func(why string) {
			t.Helper()
			t.Fatalf("policy %v request %d %+v = %+v: %s", p, i, q, d, why)
		}
		switch {
		case d.Remaining < 0 || d.Remaining > capacity:
			fail("Remaining out of [0, capacity]")
		case d.Allowed == (d.RetryAfter > 0) || d.RetryAfter < 0:
			fail("RetryAfter > 0 must mean rejected")
		case d.ResetAfter < 0:
			fail("negative ResetAfter")
		case d.Delay < 0 || d.Delay > 0 && (!d.Allowed || !s.shaper):
			fail("a delay only for an admit by a shaper, never negative")
		case q.cost > capacity && (d.Allowed || d.RetryAfter != algorithms.Never):
			fail("a cost above the capacity must be rejected for ever")
		case q.cost <= capacity && d.RetryAfter == algorithms.Never:
			fail("a cost within the capacity must be admitted some day")
		case s.shaper && d.Allowed && d.Delay+time.Duration(q.cost)*interval > time.Duration(p.WithDefaults().Burst)*interval:
			fail("more than B units in the queue")
		}
		if twin != nil {
			dt, err := twin.Allow(q.at, "k", q.cost)
			if err != nil {
				t.Fatal(err)
			}
			if s.noDelay {
				dt.Delay = d.Delay
			}
			if dt != d {
				t.Fatalf("policy %v request %d %+v: %+v, its twin %+v", p, i, q, d, dt)
			}
		}
		if !d.Allowed {
			continue
		}
		switch {
		case s.shaper:
			for k := range q.cost {
				admits = append(admits, admit{q.at + d.Delay + time.Duration(k)*interval, 1})
			}
		case s.latest:
			admits = append(admits, admit{latest, q.cost})
		default:
			admits = append(admits, admit(q))
		}
	}
	checked := admits
	if bounded >= 0 {
		checked = admits[:bounded]
	}
	if got, bound := maxInSpan(checked, p.Window, false), s.bound(p); got > bound {
		t.Fatalf("policy %v: %d admitted in a span (t-W, t], bound %d; admits %v", p, got, bound, admits)
	}
	if got := maxInSpan(admits, p.Window, true); s.shaper && got > p.Limit+1 {
		t.Fatalf("policy %v: %d served in a span [t-W, t], bound L+1; served %v", p, got, admits)
	}
	checkLast(t, s, p, trace, d, capacity)
	if s.monotone {
		checkMonotone(t, s, p, trace)
	}
}

// checkMonotone replays the trace with each instant raised to the latest
// one before it and checks that every decision is the same: Allowed,
// Remaining, and for a rejection the instant now+RetryAfter.
func checkMonotone(t *testing.T, s fuzzSpec, p algorithms.Policy, trace []request) {
	l, _ := s.new(p)
	raised, _ := s.new(p)
	latest := time.Duration(math.MinInt64)
	for i, q := range trace {
		latest = max(latest, q.at)
		d, err := l.Allow(q.at, "k", q.cost)
		if err != nil {
			t.Fatal(err)
		}
		dr, err := raised.Allow(latest, "k", q.cost)
		if err != nil {
			t.Fatal(err)
		}
		retry := func(d algorithms.Decision, at time.Duration) time.Duration {
			if d.RetryAfter == 0 || d.RetryAfter == algorithms.Never {
				return d.RetryAfter
			}
			return at + d.RetryAfter
		}
		if d.Allowed != dr.Allowed || d.Remaining != dr.Remaining || retry(d, q.at) != retry(dr, latest) {
			t.Fatalf("policy %v request %d %+v = %+v, but at the latest instant %v: %+v", p, i, q, d, latest, dr)
		}
	}
}

// checkLast replays the trace on fresh limiters and checks that the last
// decision d was exact: a request of Remaining units at the same instant is
// admitted and one of Remaining+1 is not; the same request is admitted at
// now+RetryAfter and not 1ns earlier; the whole capacity at now+ResetAfter
// and not 1ns earlier. For a limiter that counts denied requests, each
// probe runs on its own replay.
func checkLast(t *testing.T, s fuzzSpec, p algorithms.Policy, trace []request, d algorithms.Decision, capacity int64) {
	q := trace[len(trace)-1]
	replay := func() algorithms.Limiter {
		l, _ := s.new(p)
		for _, r := range trace {
			if _, err := l.Allow(r.at, "k", r.cost); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	// again is the limiter for a probe that follows another: the same one,
	// or a new replay when a rejected probe would count.
	again := func(l algorithms.Limiter) algorithms.Limiter {
		if s.countsDenied {
			return replay()
		}
		return l
	}
	probe := func(l algorithms.Limiter, at time.Duration, cost int64, want bool, what string) {
		t.Helper()
		got, err := l.Allow(at, "k", cost)
		if err != nil {
			t.Fatal(err)
		}
		if got.Allowed != want {
			t.Fatalf("policy %v, last request %+v = %+v: %s: Allow(%v, %d) = %+v, want allowed=%v",
				p, q, d, what, at, cost, got, want)
		}
	}
	l := replay()
	probe(l, q.at, d.Remaining+1, false, "Remaining+1")
	if d.Remaining > 0 {
		probe(again(l), q.at, d.Remaining, true, "Remaining")
	}
	if !d.Allowed && d.RetryAfter != algorithms.Never {
		l := replay()
		probe(l, q.at+d.RetryAfter-1, q.cost, false, "1ns before RetryAfter")
		probe(again(l), q.at+d.RetryAfter, q.cost, true, "at RetryAfter")
	}
	l = replay()
	if d.ResetAfter > 0 {
		probe(l, q.at+d.ResetAfter-1, capacity, false, "1ns before ResetAfter")
		l = again(l)
	}
	probe(l, q.at+d.ResetAfter, capacity, true, "at ResetAfter")
}
