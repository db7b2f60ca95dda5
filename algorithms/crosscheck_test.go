package algorithms_test

import (
	"cmp"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratebench/ratebench/algorithms"
)

// The cross-checks run every algorithm on seeded random traces (math/rand/v2
// PCG with explicit seeds) and compare it with another algorithm, with
// golang.org/x/time/rate, or with a brute-force reference, request by
// request.

const (
	crossTraces   = 50
	crossRequests = 5000
)

// request is one arrival of a trace.
type request struct {
	at   time.Duration
	cost int64
}

// admit is cost admitted (or, for a shaper, served) at an instant.
type admit struct {
	at   time.Duration
	cost int64
}

// crossPolicy draws a policy whose window is a multiple of its limit, so
// that the emission interval T = W/L is exact: T from one nanosecond (where
// every boundary is hit) to 10ms, bursts below, at and above L.
func crossPolicy(r *rand.Rand) algorithms.Policy {
	limit := []int64{1, 2, 3, 7, 10, 64}[r.IntN(6)]
	interval := []time.Duration{1, 3, 7, 100, time.Microsecond, 10 * time.Millisecond}[r.IntN(6)]
	burst := []int64{1, limit, 3 * limit, limit + 5}[r.IntN(4)]
	return algorithms.Policy{Limit: limit, Window: time.Duration(limit) * interval, Burst: burst}
}

// crossTrace draws n requests of cost 1..maxCost at gaps from 0 to 3T:
// equal instants, exact multiples of T, and anything between. With back,
// one gap in twenty goes back in time by up to 3T instead.
func crossTrace(r *rand.Rand, p algorithms.Policy, maxCost int64, n int, back bool) []request {
	interval := p.Interval()
	at := 3 * p.Window
	trace := make([]request, n)
	for i := range trace {
		switch k := r.IntN(20); {
		case k < 4: // same instant
		case k < 9: // exact multiple of T
			at += time.Duration(1+r.IntN(3)) * interval
		case back && k == 19:
			at -= time.Duration(r.Int64N(3*int64(interval) + 1))
		default:
			at += time.Duration(r.Int64N(3*int64(interval) + 1))
		}
		trace[i] = request{at: at, cost: 1 + r.Int64N(maxCost)}
	}
	return trace
}

// newRand returns the PCG source of trace i of a test.
func newRand(test uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(test, uint64(i)))
}

// maxInSpan returns the largest cost admitted in any half-open span
// (t-w, t], and, with closed, in any closed span [t-w, t].
func maxInSpan(admits []admit, w time.Duration, closed bool) int64 {
	a := slices.Clone(admits)
	slices.SortFunc(a, func(x, y admit) int { return cmp.Compare(x.at, y.at) })
	var best, sum int64
	lo := 0
	for hi := range a {
		sum += a[hi].cost
		for a[lo].at < a[hi].at-w || !closed && a[lo].at == a[hi].at-w {
			sum -= a[lo].cost
			lo++
		}
		best = max(best, sum)
	}
	return best
}

// TestBucketsAgree: token bucket, GCRA and the leaky bucket meter decide
// alike, every field, on every trace (ITU-T I.371 equivalence); the second
// half of the traces also goes back in time.
func TestBucketsAgree(t *testing.T) {
	for i := range crossTraces {
		r := newRand(1, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, p.WithDefaults().Burst, crossRequests, i >= crossTraces/2)
		tb, _ := algorithms.NewTokenBucket(p)
		g, _ := algorithms.NewGCRA(p)
		lb, err := algorithms.NewLeakyBucket(p)
		if err != nil {
			t.Fatal(err)
		}
		for j, q := range trace {
			dt := mustAllow(t, tb, q)
			dg := mustAllow(t, g, q)
			dl := mustAllow(t, lb, q)
			if dt != dg || dt != dl {
				t.Fatalf("trace %d (%v) request %d %+v:\ntoken-bucket %+v\ngcra         %+v\nleaky-bucket %+v", i, p, j, q, dt, dg, dl)
			}
		}
	}
}

// TestTokenBucketAgreesWithXRate: the token bucket and x/time/rate's
// AllowN, at epoch+now, admit the same requests, except where float64
// rounding decides a nanosecond boundary for the library.
//
// x/time/rate keeps its tokens in a float64 and admits when the wait it
// computes for the missing tokens, truncated to a whole nanosecond, is zero.
// Exactly at the boundary (time since the bucket emptied an exact multiple
// of T, the tokens exactly the cost) the float error is far below a
// nanosecond's worth and truncates away: both admit, never a disagreement
// there. One nanosecond before it, the library's wait is 1ns give or take
// the float error, and truncation turns 0.99999...ns into zero: it admits a
// request that the token bucket, exact, rejects with RetryAfter = 1ns. That
// is the only disagreement allowed; after one, the token bucket's word is
// set to the library's choice (the empty-at of that admit, 1ns ahead of
// now) so that the two go on from the same state, and the count is logged.
func TestTokenBucketAgreesWithXRate(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var early, decisions int
	for i := range crossTraces {
		r := newRand(2, i)
		p := crossPolicy(r).WithDefaults()
		trace := crossTrace(r, p, p.Burst, crossRequests, false)
		tb, err := algorithms.NewTokenBucket(p)
		if err != nil {
			t.Fatal(err)
		}
		var word atomic.Int64
		word.Store(tb.InitialWord())
		lim := rate.NewLimiter(rate.Limit(float64(p.Limit)/p.Window.Seconds()), int(p.Burst))
		for j, q := range trace {
			d, err := tb.DecideWord(&word, q.at, q.cost)
			if err != nil {
				t.Fatal(err)
			}
			decisions++
			ok := lim.AllowN(epoch.Add(q.at), int(q.cost))
			switch {
			case ok == d.Allowed:
			case ok && d.RetryAfter == 1:
				early++
				word.Store(int64(q.at) + 1)
			default:
				t.Fatalf("trace %d (%v) request %d %+v: token-bucket %+v, x/time/rate allowed=%v", i, p, j, q, d, ok)
			}
		}
	}
	t.Logf("%d decisions; x/time/rate admitted %d of them 1ns before the exact boundary (float64 rounding), none otherwise", decisions, early)
}

// TestSlidingLogIsExact: the sliding log decides exactly as a brute-force
// log (every field), so it never holds more than L in any (t-W, t] and it
// admits everything that an exact limiter admits.
func TestSlidingLogIsExact(t *testing.T) {
	for i := range crossTraces {
		r := newRand(3, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, p.Limit, crossRequests, false)
		s, err := algorithms.NewSlidingLog(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := &exactLog{window: p.Window, limit: p.Limit}
		for j, q := range trace {
			got, want := mustAllow(t, s, q), ref.allow(q)
			if got != want {
				t.Fatalf("trace %d (%v) request %d %+v: sliding-log %+v, exact %+v", i, p, j, q, got, want)
			}
		}
		if got := maxInSpan(ref.admits, p.Window, false); got > p.Limit {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= %d", i, p, got, p.Limit)
		}
	}
}

// exactLog is the brute-force reference for the sliding log on a trace
// that never goes back in time: every admit kept in order, every sum
// recomputed.
type exactLog struct {
	window time.Duration
	limit  int64
	admits []admit
}

// used is the cost admitted in (at-W, at], for at no earlier than the last
// admit.
func (e *exactLog) used(at time.Duration) int64 {
	var sum int64
	for _, a := range slices.Backward(e.admits) {
		if a.at <= at-e.window {
			break
		}
		sum += a.cost
	}
	return sum
}

func (e *exactLog) allow(q request) algorithms.Decision {
	used := e.used(q.at)
	var d algorithms.Decision
	if used+q.cost <= e.limit {
		e.admits = append(e.admits, admit(q))
		used += q.cost
		d.Allowed = true
	} else if q.cost > e.limit {
		d.RetryAfter = algorithms.Never
	} else {
		// The first expiry instant at which the request fits.
		live := e.admits[len(e.admits)-int(min(used, int64(len(e.admits)))):]
		for _, a := range live {
			if at := a.at + e.window; at > q.at && e.used(at)+q.cost <= e.limit {
				d.RetryAfter = at - q.at
				break
			}
		}
	}
	d.Remaining = e.limit - used
	if used > 0 {
		d.ResetAfter = e.admits[len(e.admits)-1].at + e.window - q.at
	}
	return d
}

// TestFixedWindowBounds: on random traces the fixed window admits what a
// per-window count admits, at most L per aligned window and at most 2L in
// any span W; and the boundary attack gets 2L through in one nanosecond.
func TestFixedWindowBounds(t *testing.T) {
	for i := range crossTraces {
		r := newRand(4, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, p.Limit, crossRequests, false)
		fw, err := algorithms.NewFixedWindow(p)
		if err != nil {
			t.Fatal(err)
		}
		perWindow := map[time.Duration]int64{}
		var admits []admit
		for j, q := range trace {
			d := mustAllow(t, fw, q)
			k := floorDiv(q.at, p.Window)
			if want := perWindow[k]+q.cost <= p.Limit; d.Allowed != want {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want allowed=%v with %d in its window", i, p, j, q, d, want, perWindow[k])
			}
			if d.Allowed {
				perWindow[k] += q.cost
				admits = append(admits, admit(q))
			}
		}
		if got := maxInSpan(admits, p.Window, false); got > 2*p.Limit {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= 2L = %d", i, p, got, 2*p.Limit)
		}
	}

	// The boundary attack: L at W-1ns, L at W, so 2L in a span of 1ns.
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	fw, _ := algorithms.NewFixedWindow(p)
	var admits []admit
	for _, at := range []time.Duration{p.Window - 1, p.Window} {
		for range p.Limit {
			if d := mustAllow(t, fw, request{at, 1}); !d.Allowed {
				t.Fatalf("boundary attack: Allow(%v, 1) = %+v, want allowed", at, d)
			}
			admits = append(admits, admit{at, 1})
		}
	}
	if got := maxInSpan(admits, 2, false); got != 2*p.Limit {
		t.Fatalf("boundary attack: %d admitted within 1ns, want 2L = %d", got, 2*p.Limit)
	}
}

func floorDiv(a, b time.Duration) time.Duration {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// slidingCounterBound is the most a SlidingCounter admits in a half-open
// span W: 2L - ceil(2L/W), W in nanoseconds, or L when W is 1ns (see
// SlidingCounter).
func slidingCounterBound(p algorithms.Policy) int64 {
	w := int64(p.Window)
	return max(p.Limit, 2*p.Limit-(2*p.Limit+w-1)/w)
}

// TestSlidingCounterBound: the sliding counter decides exactly as its
// estimate computed in rationals (math/big), never admits more than
// 2L - ceil(2L/W) in a span W on random traces, and the boundary attack
// reaches that bound. How far it strays from the exact sliding log is
// logged.
func TestSlidingCounterBound(t *testing.T) {
	var worst float64
	var differ, decisions int
	for i := range crossTraces {
		r := newRand(5, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, p.Limit, crossRequests, false)
		c, err := algorithms.NewSlidingCounter(p)
		if err != nil {
			t.Fatal(err)
		}
		exact, _ := algorithms.NewSlidingLog(p)
		counts := map[time.Duration]int64{}
		var admits []admit
		for j, q := range trace {
			d := mustAllow(t, c, q)
			k := floorDiv(q.at, p.Window)
			// estimate + cost <= L, and Remaining = floor(L - estimate),
			// estimate = prev*(W-e)/W + curr.
			w := big.NewRat(int64((k+1)*p.Window-q.at), int64(p.Window))
			est := new(big.Rat).Mul(big.NewRat(counts[k-1], 1), w)
			est.Add(est, big.NewRat(counts[k], 1))
			want := new(big.Rat).Add(est, big.NewRat(q.cost, 1)).Cmp(big.NewRat(p.Limit, 1)) <= 0
			if d.Allowed != want {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want allowed=%v (estimate %v)", i, p, j, q, d, want, est.FloatString(3))
			}
			if d.Allowed {
				counts[k] += q.cost
				est.Add(est, big.NewRat(q.cost, 1))
				admits = append(admits, admit(q))
			}
			left := new(big.Rat).Sub(big.NewRat(p.Limit, 1), est)
			if rem := new(big.Int).Quo(left.Num(), left.Denom()).Int64(); d.Remaining != rem {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want Remaining %d", i, p, j, q, d, rem)
			}
			decisions++
			if mustAllow(t, exact, q).Allowed != d.Allowed {
				differ++
			}
		}
		got := maxInSpan(admits, p.Window, false)
		if bound := slidingCounterBound(p); got > bound {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= %d", i, p, got, bound)
		}
		worst = max(worst, float64(got)/float64(p.Limit))
	}
	t.Logf("random traces: at most %.2fL in a span W; %.2f%% of %d decisions differ from the exact sliding log (which sees its own admits)",
		worst, 100*float64(differ)/float64(decisions), decisions)

	// The attack: L at the last nanosecond of a window, then as much as
	// admitted two nanoseconds before the end of the next one.
	for _, p := range []algorithms.Policy{
		{Limit: 10, Window: time.Second}, // 2L-1
		{Limit: 3, Window: 4},            // W < 2L ns: 2L-2
		{Limit: 5, Window: 10},           // W = 2L ns: 2L-1
		{Limit: 2, Window: 2},            // W = 2ns: 2L-L
		{Limit: 1, Window: 1},            // W = 1ns: L
	} {
		c, err := algorithms.NewSlidingCounter(p)
		if err != nil {
			t.Fatal(err)
		}
		var admits []admit
		for _, at := range []time.Duration{2*p.Window - 1, 3*p.Window - 2} {
			for {
				d := mustAllow(t, c, request{at, 1})
				if !d.Allowed {
					break
				}
				admits = append(admits, admit{at, 1})
			}
		}
		if got, want := maxInSpan(admits, p.Window, false), slidingCounterBound(p); got != want {
			t.Errorf("policy %v: the attack admitted %d in a span W, want the bound %d", p, got, want)
		}
	}
}

// mustAllow decides q on l and fails the test on an error.
func mustAllow(t testing.TB, l algorithms.Limiter, q request) algorithms.Decision {
	t.Helper()
	d, err := l.Allow(q.at, "k", q.cost)
	if err != nil {
		t.Fatalf("Allow(%v, %d): %v", q.at, q.cost, err)
	}
	return d
}

// step is one row of a scripted table test: a request and the exact
// decision it must get.
type step struct {
	at   time.Duration
	cost int64
	want algorithms.Decision
	why  string
}

// runSteps runs the steps in order on l and fails at the first decision
// that differs, naming the step.
func runSteps(t *testing.T, l algorithms.Limiter, steps []step) {
	t.Helper()
	for i, s := range steps {
		got, err := l.Allow(s.at, "k", s.cost)
		if err != nil {
			t.Fatalf("step %d (%s): Allow(%v, %d): %v", i+1, s.why, s.at, s.cost, err)
		}
		if got != s.want {
			t.Fatalf("step %d (%s): Allow(%v, %d) =\n%+v, want\n%+v", i+1, s.why, s.at, s.cost, got, s.want)
		}
	}
}

// ms is a number of milliseconds.
func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// checkErrors checks that the constructor and Allow of one algorithm
// return errors wrapping the sentinels and prefixed with its CLI name.
func checkErrors[L algorithms.Limiter](t *testing.T, name string, newFn func(algorithms.Policy) (L, error)) {
	t.Helper()
	_, err := newFn(algorithms.Policy{Limit: 10, Window: -time.Second})
	if !errors.Is(err, algorithms.ErrInvalidPolicy) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Fatalf("New(bad window) error = %v, want ErrInvalidPolicy prefixed %q", err, name+": ")
	}
	l, err := newFn(algorithms.Policy{Limit: 10, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Allow(time.Second, "k", 0)
	if !errors.Is(err, algorithms.ErrInvalidCost) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Fatalf("Allow(cost 0) error = %v, want ErrInvalidCost prefixed %q", err, name+": ")
	}
}

// TestDecisionsDoNotAllocate: no algorithm allocates to decide, admitted or
// rejected, whatever the instant.
func TestDecisionsDoNotAllocate(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second, Burst: 20}
	for name, s := range map[string]fuzzSpec{
		"token-bucket": specTokenBucket, "gcra": specGCRA, "leaky-bucket": specLeakyBucket,
		"leaky-queue": specLeakyQueue, "fixed-window": specFixedWindow,
		"sliding-log": specSlidingLog, "sliding-counter": specSlidingCounter,
		"fixed-window-first": specFixedWindowFirst, "sliding-log-all": specSlidingLogAll,
		"sliding-counter-all": specSlidingCounterAll, "token-bucket-debt": specTokenBucketDebt,
		"nginx-limit-req": specNginxLimitReq, "httprate": specHTTPRate, "haproxy-req-rate": specHAProxyReqRate,
	} {
		l, err := s.new(p)
		if err != nil {
			t.Fatal(err)
		}
		var at time.Duration
		allocs := testing.AllocsPerRun(1000, func() {
			at += 3 * time.Millisecond
			l.Allow(at, "k", 1+int64(at/time.Millisecond)%7)
			l.Allow(at-time.Second, "k", 2)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per decision, want 0", name, allocs)
		}
	}
}
