package algorithms_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// TestHTTPRateSteps: hand-computed decisions at fixed instants, 50 per
// second on windows at whole seconds. The estimate is prev*(W-diff)/W +
// curr; a request of n is admitted iff round(estimate) + n <= 50.
func TestHTTPRateSteps(t *testing.T) {
	never := algorithms.Never
	h, err := algorithms.NewHTTPRate(algorithms.Policy{Limit: 50, Window: time.Second, Burst: 7})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, h, []step{
		{at: ms(1999), cost: 50, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 991000001},
			why: "an empty [1s, 2s) takes all 50 at its last ms (the burst is ignored); 50 weigh below 1/2 from 2.990000001s, when 50 fit again"},
		{at: ms(2990), cost: 49, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 999795919},
			why: "the 50 of [1s, 2s) weigh 50*10ms/1s = 0.5, which rounds to 1: 1 + 49 <= 50; then 49 weigh below 1/2 from 3.989795919s (weight 10204081ns)"},
		{at: ms(2990), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: 1, ResetAfter: 999795919},
			why: "estimate 49.5 rounds to 50: 51 > 50, rejected and not counted; 1ns later the weight 9999999ns makes it 49.49999995"},
		{at: ms(2992), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 998000001},
			why: "estimate 50*8ms/1s + 49 = 49.4 rounds to 49: 49 + 1 = 50 <= 50, admitted although 49.4 + 1 > 50"},
		{at: ms(2992), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: 18000001, ResetAfter: 998000001},
			why: "estimate 50.4: rejected; the window is full, and in [3s, 4s) its 50 weigh below 49.5 from weight 989999999ns, at 3.010000001s"},
		{at: ms(2500), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: 510000001, ResetAfter: 1490000001},
			why: "back in time: decided as at 2.992s"},
		{at: ms(3500), cost: 51, want: algorithms.Decision{Remaining: 25, RetryAfter: never, ResetAfter: 490000001},
			why: "above the limit: never; the 50 of [2s, 3s) weigh 25"},
		{at: ms(3500), cost: 25, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 1480000001},
			why: "round(25) + 25 = 50; then 25 in [3s, 4s) weigh below 1/2 from weight 19999999ns, at 4.980000001s"},
		{at: ms(5200), cost: 50, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 1790000001},
			why: "[4s, 5s) had no request, so the 25 of [3s, 4s) are not the previous window's: nothing weighs"},
	})
}

// TestHTTPRateWindows: windows start at the instant the limiter was made
// (httprate v0.16's in-memory counter), or at multiples of W from Go's
// zero time (time.Time.Truncate: a custom counter, or httprate before
// v0.16), which TruncateOrigin places on a Unix-epoch clock.
func TestHTTPRateWindows(t *testing.T) {
	p := algorithms.Policy{Limit: 2, Window: time.Second}
	h, err := algorithms.NewHTTPRateAt(p, ms(10300))
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, h, []step{
		{at: ms(1299), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(751) + 1},
			why: "made at 10.3s: windows [0.3s, 1.3s), ...; 2 weigh below 1/2 from weight 249999999ns, at 2.050000001s"},
		{at: ms(1300), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(250) + 1, ResetAfter: ms(750) + 1},
			why: "1.3s opens a window: the 2 weigh 2, round(2) + 1 > 2; weigh below 1.5 from weight 749999999ns"},
	})
	for _, tc := range []struct {
		w    time.Duration
		want time.Duration // the first window start at or after the epoch
	}{
		{w: time.Second, want: 0},                         // the zero time is 719162 days before the epoch
		{w: time.Hour, want: 0},                           // so is every window that divides a day
		{w: 24 * time.Hour, want: 0},                      // midnight UTC
		{w: 7 * time.Second, want: 3 * time.Second},       // 62135596800s is 4s more than a multiple of 7s
		{w: 1500 * time.Millisecond, want: 0},             // 62135596800s is a multiple of 3s
		{w: 7 * 24 * time.Hour, want: 4 * 24 * time.Hour}, // Mondays: January 5, 1970
		{w: 13, want: 4},                                  // 62135596800*10^9 ns is 9 mod 13
		{w: 977 * time.Millisecond, want: 643 * time.Millisecond},
	} {
		got := algorithms.TruncateOrigin(tc.w)
		at := time.Unix(0, int64(got)).UTC()
		if !at.Truncate(tc.w).Equal(at) || got != tc.want {
			t.Errorf("TruncateOrigin(%v) = %v: Truncate gives %v; want %v, a window start in [0, W)", tc.w, got, at.Truncate(tc.w), tc.want)
		}
		// The window start just before it is W earlier.
		if before := at.Add(-1).Truncate(tc.w); !before.Equal(at.Add(-tc.w)) {
			t.Errorf("TruncateOrigin(%v) = %v: the window before starts at %v", tc.w, got, before)
		}
	}
}

// httprateRef is go-chi/httprate v0.16.1's RateLimiter over its local
// counter for one key, on time.Time as the library computes it: the
// window of t is t-offset truncated to W, plus offset; the counter keeps
// the latest window it counted in and that window's count and the
// previous one's, and a request is rejected iff int(math.Round(rate)) +
// n > limit.
type httprateRef struct {
	limit          int
	window, offset time.Duration
	latestWindow   time.Time
	latest, before int
}

// newHTTPRateRef is a RateLimiter made at made with the in-memory counter
// (its windows start there), or with truncate a custom counter's windows.
func newHTTPRateRef(limit int, w time.Duration, made time.Time, truncate bool) *httprateRef {
	made = made.UTC()
	r := &httprateRef{limit: limit, window: w, latestWindow: made}
	if !truncate {
		r.offset = made.Sub(made.Truncate(w))
	}
	return r
}

func (r *httprateRef) allow(now time.Time, n int) bool {
	now = now.UTC()
	cur := now.Add(-r.offset).Truncate(r.window).Add(r.offset)
	var currCount, prevCount int
	switch {
	case r.latestWindow.Equal(cur):
		currCount, prevCount = r.latest, r.before
	case r.latestWindow.Equal(cur.Add(-r.window)):
		prevCount = r.latest
	}
	diff := now.Sub(cur)
	rate := float64(prevCount)*(float64(r.window)-float64(diff))/float64(r.window) + float64(currCount)
	if int(math.Round(rate))+n > r.limit {
		return false
	}
	switch {
	case r.latestWindow.Equal(cur):
	case r.latestWindow.Equal(cur.Add(-r.window)):
		r.before, r.latest, r.latestWindow = r.latest, 0, cur
	default:
		r.before, r.latest, r.latestWindow = 0, 0, cur
	}
	r.latest += n
	return true
}

// TestHTTPRateMatchesHTTPRate: on random traces on a Unix-epoch clock
// (gaps from 0 to a few windows, never back) the model admits what the
// library's computation admits, request by request, with windows from the
// instant the limiter was made and with truncated ones; and its
// Remaining, RetryAfter and ResetAfter are exact by that computation.
func TestHTTPRateMatchesHTTPRate(t *testing.T) {
	epoch := time.Duration(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	for i := range crossTraces {
		r := newRand(20, i)
		p := algorithms.Policy{
			Limit:  []int64{1, 2, 3, 7, 50, 1000}[r.IntN(6)],
			Window: []time.Duration{13, time.Microsecond, 300 * time.Millisecond, time.Second, 7 * time.Second, time.Hour}[r.IntN(6)],
		}
		if int64(p.Window) < p.Limit {
			p.Window = time.Duration(p.Limit) * 3
		}
		made := epoch + time.Duration(r.Int64N(int64(p.Window)))
		truncate := i%3 == 0
		var h *algorithms.HTTPRate
		var err error
		if truncate {
			h, err = algorithms.NewHTTPRateAt(p, algorithms.TruncateOrigin(p.Window))
		} else {
			h, err = algorithms.NewHTTPRateAt(p, made)
		}
		if err != nil {
			t.Fatal(err)
		}
		ref := newHTTPRateRef(int(p.Limit), p.Window, time.Unix(0, int64(made)), truncate)
		at := made + time.Duration(r.Int64N(int64(p.Window)))
		for j := range 1000 {
			switch k := r.IntN(10); {
			case k < 3: // the same instant
			case k < 8:
				at += time.Duration(r.Int64N(int64(p.Window)/3 + 1))
			default:
				at += time.Duration(r.Int64N(3*int64(p.Window) + 1))
			}
			cost := 1 + r.Int64N(p.Limit+1)
			d := mustAllow(t, h, request{at, cost})
			if want := ref.allow(time.Unix(0, int64(at)), int(cost)); d.Allowed != want {
				t.Fatalf("trace %d (%v, truncate %v) request %d at %v cost %d: %+v, httprate allowed=%v", i, p, truncate, j, at, cost, d, want)
			}
			checkFields(t, fmt.Sprintf("trace %d (%v) request %d", i, p, j), d, at, cost, p.Limit, func(at time.Duration, n int64) bool {
				c := *ref
				return c.allow(time.Unix(0, int64(at)), int(n))
			})
		}
	}
}

// TestHTTPRateWorstReached: L at the last nanosecond of a window, then as
// many as are admitted 2ns before the end of the next one reach the
// theory, and random traces stay within it.
func TestHTTPRateWorstReached(t *testing.T) {
	for _, tc := range []struct {
		p    algorithms.Policy
		want int64
	}{
		{p: algorithms.Policy{Limit: 100, Window: time.Second}, want: 200}, // W > 4L ns: 2L, the 100 weigh 2e-7
		{p: algorithms.Policy{Limit: 10, Window: 41}, want: 20},            // 20/41 rounds to 0
		{p: algorithms.Policy{Limit: 10, Window: 40}, want: 19},            // 20/40 = 1/2 rounds to 1
		{p: algorithms.Policy{Limit: 5, Window: 10}, want: 9},              // weighs 1
		{p: algorithms.Policy{Limit: 3, Window: 4}, want: 4},               // 6/4 = 1.5 rounds to 2
		{p: algorithms.Policy{Limit: 2, Window: 2}, want: 2},               // weight W: nothing more than L
		{p: algorithms.Policy{Limit: 1, Window: 1}, want: 1},               // one instant per window
		{p: algorithms.Policy{Limit: 7, Window: 300 * time.Millisecond}, want: 14},
	} {
		if got := algorithms.HTTPRateWorst(tc.p); got != tc.want {
			t.Errorf("HTTPRateWorst(%v) = %d, want %d", tc.p, got, tc.want)
		}
		h, err := algorithms.NewHTTPRate(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		var admits []admit
		for _, at := range []time.Duration{2*tc.p.Window - 1, 3*tc.p.Window - 2} {
			for mustAllow(t, h, request{at, 1}).Allowed {
				admits = append(admits, admit{at, 1})
			}
		}
		if got := maxInSpan(admits, tc.p.Window, false); got != tc.want {
			t.Errorf("policy %v: the attack admitted %d in a span W, want the theory %d", tc.p, got, tc.want)
		}
	}
	for i := range crossTraces {
		r := newRand(21, i)
		p := crossPolicy(r)
		h, err := algorithms.NewHTTPRate(p)
		if err != nil {
			t.Fatal(err)
		}
		var admits []admit
		for _, q := range crossTrace(r, p, p.Limit, crossRequests, false) {
			if mustAllow(t, h, q).Allowed {
				admits = append(admits, admit(q))
			}
		}
		if got, bound := maxInSpan(admits, p.Window, false), algorithms.HTTPRateWorst(p); got > bound {
			t.Fatalf("trace %d (%v): %d admitted in a span W, above the theory %d", i, p, got, bound)
		}
	}
}

// TestHTTPRateRoundsUp: where SlidingCounter, exact, rejects a request
// whose estimate plus cost is above L, httprate admits it while the
// rounded estimate leaves room: 2L where SlidingCounter lets 2L-1 in.
func TestHTTPRateRoundsUp(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	h, _ := algorithms.NewHTTPRate(p)
	c, _ := algorithms.NewSlidingCounter(p)
	var nh, nc int
	for _, at := range []time.Duration{time.Second - 1, 2*time.Second - 2} {
		for range 150 {
			if mustAllow(t, h, request{at, 1}).Allowed {
				nh++
			}
			if mustAllow(t, c, request{at, 1}).Allowed {
				nc++
			}
		}
	}
	if nh != 200 || nc != 199 {
		t.Fatalf("httprate admitted %d, sliding-counter %d; want 200 and 199", nh, nc)
	}
}

func TestHTTPRatePolicies(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		ok   bool
	}{
		{name: "100 per minute", p: algorithms.Policy{Limit: 100, Window: time.Minute}, ok: true},
		{name: "a window of 1ns", p: algorithms.Policy{Limit: 1, Window: 1}, ok: true},
		{name: "more than one per ns", p: algorithms.Policy{Limit: 3, Window: 2}},
		{name: "zero limit", p: algorithms.Policy{Window: time.Second}},
	} {
		_, err := algorithms.NewHTTPRate(tc.p)
		if (err == nil) != tc.ok {
			t.Errorf("%s: NewHTTPRate(%v) = %v, want ok=%v", tc.name, tc.p, err, tc.ok)
		}
		if th := algorithms.HTTPRateWorst(tc.p); (th > 0) != tc.ok {
			t.Errorf("%s: HTTPRateWorst(%v) = %d, want 0 only for an invalid policy", tc.name, tc.p, th)
		}
	}
}

func TestHTTPRateErrors(t *testing.T) {
	checkErrors(t, "httprate", algorithms.NewHTTPRate)
}

// BenchmarkHTTPRate decides at 3x the rate: most requests are rejected
// and need their RetryAfter.
func BenchmarkHTTPRate(b *testing.B) {
	h, _ := algorithms.NewHTTPRate(algorithms.Policy{Limit: 100, Window: time.Second})
	r := rand.New(rand.NewPCG(1, 1))
	at := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		at += time.Duration(r.Int64N(int64(2 * time.Millisecond / 3)))
		_, _ = h.Allow(at, "k", 1)
	}
}
