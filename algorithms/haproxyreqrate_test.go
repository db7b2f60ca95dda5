package algorithms_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// TestHAProxyReqRateSteps: hand-computed decisions at fixed instants,
// `deny if { sc_http_req_rate(0) gt 3 }` on http_req_rate(1s). The rate
// read is curr + floor(prev*remain/1000), remain = tick + 1000 - ms, every
// request counted first.
func TestHAProxyReqRateSteps(t *testing.T) {
	never := algorithms.Never
	h, err := algorithms.NewHAProxyReqRate(algorithms.Policy{Limit: 3, Window: time.Second, Burst: 9})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, h, []step{
		{at: ms(1001.5), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: ms(999.5)},
			why: "a new entry: the window opens at the request, at ms 1000 as 1001 is odd; 3 fit again at ms 2001, where the 1 weighs floor(999/1000) = 0"},
		{at: ms(1500), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1167)},
			why: "rate 3, not above 3; the 3 weigh 0 once remain <= 333, from ms 2667"},
		{at: ms(1999.999), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(251.001), ResetAfter: ms(751.001)},
			why: "rate 4: denied, and counted; in [2000, 3000) the 4 weigh at most 2 once 4*remain < 3000, from ms 2251"},
		{at: ms(2251), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(750)},
			why: "the period rotates to 2000: 1 + floor(4*749/1000) = 1 + floor(2.996) = 3, admitted where 3.996 would not be"},
		{at: ms(2251), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(500), ResetAfter: ms(1250)},
			why: "2 + 2: denied and counted; the 4 weigh 0 from remain 249, ms 2751"},
		{at: ms(2000), cost: 5, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(1858)},
			why: "back in time: decided and counted at ms 2251; above the threshold: never; the 7 of [2000, 3000) weigh 0 from remain 142 in the next period"},
		{at: ms(4858), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: ms(1001)},
			why: "two periods have passed since 2000: prev is 0 and the window opens at this request, ms 4858"},
		{at: ms(5857), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(668)},
			why: "the last ms of the period [4858, 5858): rate 3; the 3 weigh 0 from remain 333, ms 6525"},
		{at: ms(5858), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(334), ResetAfter: ms(1001)},
			why: "5858 - 4858 = P: the request rotates the period to 5858; 1 + floor(3*1000/1000) = 4, denied; 2 + floor(3*666/1000) = 3 at ms 6192; its 1 weighs 0 from ms 6859"},
	})
}

// TestHAProxyReqRateOddPeriod: with an odd period each rotation is forced
// to an even tick, 1ms before tick + P, so that the periods of
// http_req_rate(3ms) last 2ms; and a request can rotate the counter twice
// at one millisecond. Deny if the rate is above 2.
func TestHAProxyReqRateOddPeriod(t *testing.T) {
	h, err := algorithms.NewHAProxyReqRate(algorithms.Policy{Limit: 2, Window: 3 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, h, []step{
		{at: ms(10), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(3)},
			why: "a new entry opens at 10; a request of 2 at 13 rotates, starts its period at 12 and finds 1*2/3 = 0"},
		{at: ms(13), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(2)},
			why: "13 - 10 = P: the period moves to 13, forced even: 12; remain 2, floor(1*2/3) = 0; next to 14 at 15"},
		{at: ms(14), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(3), ResetAfter: ms(3)},
			why: "3 counted: denied; at 15 and 16 the 3 weigh 2 and 1; at 17 the first request rotates to 14 and the second, 17 - 14 = P, to 16"},
		{at: ms(17), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(2)},
			why: "rotated twice: prev is the 1 of the first, remain 2: 1 + floor(2/3) = 1"},
	})
}

// haproxyRef is one HAProxy 2.6 stick-table entry's http_req_rate(P) as
// its frequency counter computes it: 32-bit ticks and counts, the lowest
// bit of the tick a lock (never held here, one thread), a new entry all
// zero, and the read with its flapping correction and its branch for a
// read a period or more late.
type haproxyRef struct {
	tick, curr, prev uint32
	period           uint32
}

// update counts one request at millisecond now (update_freq_ctr_period).
func (r *haproxyRef) update(now uint32) {
	if now-r.tick < r.period {
		r.curr++
		return
	}
	tick := r.tick
	r.prev, r.curr = r.curr, 1
	tick += r.period
	if now-tick >= r.period {
		r.prev, tick = 0, now
	}
	r.tick = tick &^ 1
}

// read is the rate at millisecond now (read_freq_ctr_period).
func (r *haproxyRef) read(now uint32) uint64 {
	curr, past := uint64(r.curr), uint64(r.prev)
	remain := int32(r.tick + r.period - now)
	if remain < 0 {
		remain += int32(r.period)
		if remain < 0 {
			past = 0
		} else {
			past = curr
		}
		curr = 0
	}
	if curr == 0 && past <= 1 {
		return past
	}
	total := curr * uint64(r.period)
	if remain > 0 {
		total += past * uint64(remain)
	}
	return total / uint64(r.period)
}

// decide is cost requests at millisecond now, all counted, admitted iff
// the rate read after the last is at most limit, and never above it.
func (r *haproxyRef) decide(now uint32, cost, limit int64) bool {
	for range cost {
		r.update(now)
	}
	return r.read(now) <= uint64(limit) && cost <= limit
}

// TestHAProxyReqRateMatchesHAProxy: on random traces (gaps of up to three
// periods, now and then back) the model admits what HAProxy's counter
// admits, request by request, on HAProxy's clock, which never goes back;
// and its Remaining, RetryAfter and ResetAfter are exact by that counter.
func TestHAProxyReqRateMatchesHAProxy(t *testing.T) {
	for i := range crossTraces {
		r := newRand(22, i)
		p := algorithms.Policy{
			Limit:  []int64{1, 2, 3, 10, 100}[r.IntN(5)],
			Window: []time.Duration{2, 3, 7, 100, 1000, 1001, 60000}[r.IntN(7)] * time.Millisecond,
		}
		h, err := algorithms.NewHAProxyReqRate(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := &haproxyRef{period: uint32(p.Window / time.Millisecond)}
		// Far from the 32-bit wrap, where a new entry (tick 0) is not in
		// its first period.
		at := 3_000_000 * time.Second
		latest := time.Duration(math.MinInt64)
		ms := func(at time.Duration) uint32 { return uint32(max(at, latest) / time.Millisecond) }
		for j := range 1000 {
			switch k := r.IntN(20); {
			case k < 5: // the same instant
			case k < 17:
				at += time.Duration(r.Int64N(int64(p.Window)/max(p.Limit, 3) + 1))
			case k < 19:
				at += time.Duration(r.Int64N(3*int64(p.Window) + 1))
			default:
				at -= time.Duration(r.Int64N(int64(p.Window) + 1))
			}
			cost := 1 + r.Int64N(p.Limit+1)
			d := mustAllow(t, h, request{at, cost})
			if want := ref.decide(ms(at), cost, p.Limit); d.Allowed != want {
				t.Fatalf("trace %d (%v) request %d at %v cost %d: %+v, HAProxy allowed=%v", i, p, j, at, cost, d, want)
			}
			latest = max(latest, at)
			checkFields(t, fmt.Sprintf("trace %d (%v) request %d", i, p, j), d, at, cost, p.Limit, func(at time.Duration, n int64) bool {
				c := *ref
				return c.decide(ms(at), n, p.Limit)
			})
		}
	}
}

// TestHAProxyReqRateWorstReached: the theory is reached. With an even
// period: L in the last nanosecond of a period, then L - floor(L/P) in
// the first nanosecond of the next period's last millisecond. With an odd
// one, where periods last P-1 ms: L at the end of one, L - floor(L/P) in
// the next one's last millisecond, and what the third's first millisecond
// lets in. A request at the start opens the first period; random traces
// stay within the theory.
func TestHAProxyReqRateWorstReached(t *testing.T) {
	type burst struct {
		ms  int64 // from E, an even millisecond
		end bool  // at the last nanosecond of that millisecond, else the first
		n   int64
	}
	const e = 10_000
	for _, tc := range []struct {
		p    algorithms.Policy
		want int64
	}{
		{p: algorithms.Policy{Limit: 100, Window: time.Second}, want: 200},        // P > L: 2L
		{p: algorithms.Policy{Limit: 100, Window: time.Minute}, want: 200},        // the usual configurations
		{p: algorithms.Policy{Limit: 10, Window: 4 * time.Millisecond}, want: 18}, // floor(10/4) = 2
		{p: algorithms.Policy{Limit: 3, Window: 2 * time.Millisecond}, want: 5},
		{p: algorithms.Policy{Limit: 100, Window: 1001 * time.Millisecond}, want: 201}, // odd: 2L + ceil(100/1001)
		{p: algorithms.Policy{Limit: 1, Window: 3 * time.Millisecond}, want: 3},        // 3L in a span W
		{p: algorithms.Policy{Limit: 10, Window: 3 * time.Millisecond}, want: 23},      // B = 10 - 3, ceil(7/3) = 3
	} {
		if got := algorithms.HAProxyReqRateWorst(tc.p); got != tc.want {
			t.Errorf("HAProxyReqRateWorst(%v) = %d, want %d", tc.p, got, tc.want)
		}
		l, pm := tc.p.Limit, int64(tc.p.Window/time.Millisecond)
		var bursts []burst
		if pm%2 == 0 {
			bursts = []burst{{0, false, 1}, {2*pm - 1, true, l}, {3*pm - 1, false, l - l/pm}}
		} else {
			b := l - l/pm
			bursts = []burst{{0, false, 1}, {2*pm - 2, true, l}, {3*pm - 3, false, b}, {3*pm - 2, false, l - b*(pm-1)/pm}}
		}
		h, err := algorithms.NewHAProxyReqRate(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		var admits []admit
		for _, b := range bursts {
			at := time.Duration(e+b.ms) * time.Millisecond
			if b.end {
				at += time.Millisecond - 1
			}
			for range b.n {
				if d := mustAllow(t, h, request{at, 1}); !d.Allowed {
					t.Fatalf("policy %v: the attack's request at %v was denied: %+v", tc.p, at, d)
				}
				admits = append(admits, admit{at, 1})
			}
		}
		if got := maxInSpan(admits, tc.p.Window, false); got != tc.want {
			t.Errorf("policy %v: the attack admitted %d in a span W, want the theory %d", tc.p, got, tc.want)
		}
	}
	for i := range crossTraces {
		r := newRand(23, i)
		p := algorithms.Policy{Limit: []int64{1, 2, 3, 10}[r.IntN(4)], Window: time.Duration(2+r.IntN(9)) * time.Millisecond}
		h, err := algorithms.NewHAProxyReqRate(p)
		if err != nil {
			t.Fatal(err)
		}
		var admits []admit
		at := time.Second
		for range crossRequests {
			at += time.Duration(r.Int64N(int64(p.Window) / p.Limit))
			if mustAllow(t, h, request{at, 1}).Allowed {
				admits = append(admits, admit{at, 1})
			}
		}
		if got, bound := maxInSpan(admits, p.Window, false), algorithms.HAProxyReqRateWorst(p); got > bound {
			t.Fatalf("trace %d (%v): %d admitted in a span W, above the theory %d", i, p, got, bound)
		}
	}
}

// TestHAProxyReqRateForgetsLate: a per-key table forgets an entry only
// once it decides as a new one, two periods after its last request, not
// at its ResetAfter: forgotten there, the next request would open a
// window of its own where HAProxy's period goes on, and admit what
// HAProxy denies.
func TestHAProxyReqRateForgetsLate(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	newLimiter := func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewHAProxyReqRate(p) }
	k, err := keyed.New(p, newLimiter, keyed.Options{MaxKeys: 1, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	d, err := k.Allow(ms(1000), "a", 1)
	if err != nil || !d.Allowed || d.ResetAfter != ms(1001) {
		t.Fatalf("first request of a = %+v, %v; want admitted, full again at 2.001s", d, err)
	}
	// At 2.5s a's quota is full again, but its period [2000, 3000) and
	// the one after are HAProxy's: b must wait for a to be as new, at 3s.
	d, err = k.Allow(ms(2500), "b", 1)
	if err != nil || !d.TableFull || d.RetryAfter != ms(500) {
		t.Fatalf("b at 2.5s = %+v, %v; want refused until 3s, when a is as new", d, err)
	}
	if d, err = k.Allow(ms(3000), "b", 1); err != nil || !d.Allowed {
		t.Fatalf("b at 3s = %+v, %v; want admitted", d, err)
	}
}

func TestHAProxyReqRatePolicies(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		ok   bool
	}{
		{name: "http_req_rate(10s)", p: algorithms.Policy{Limit: 100, Window: 10 * time.Second}, ok: true},
		{name: "two ticks", p: algorithms.Policy{Limit: 1, Window: 2 * time.Millisecond}, ok: true},
		{name: "the largest delay", p: algorithms.Policy{Limit: 1, Window: (1<<31 - 1) * time.Millisecond}, ok: true},
		{name: "one tick", p: algorithms.Policy{Limit: 1, Window: time.Millisecond}},
		{name: "not whole milliseconds", p: algorithms.Policy{Limit: 1, Window: 1500 * time.Microsecond}},
		{name: "2^31 ms", p: algorithms.Policy{Limit: 1, Window: (1 << 31) * time.Millisecond}},
		{name: "zero limit", p: algorithms.Policy{Window: time.Second}},
	} {
		_, err := algorithms.NewHAProxyReqRate(tc.p)
		if (err == nil) != tc.ok {
			t.Errorf("%s: NewHAProxyReqRate(%v) = %v, want ok=%v", tc.name, tc.p, err, tc.ok)
		}
		if th := algorithms.HAProxyReqRateWorst(tc.p); (th > 0) != tc.ok {
			t.Errorf("%s: HAProxyReqRateWorst(%v) = %d, want 0 only for an invalid policy", tc.name, tc.p, th)
		}
	}
}

func TestHAProxyReqRateErrors(t *testing.T) {
	checkErrors(t, "haproxy-req-rate", algorithms.NewHAProxyReqRate)
}

// BenchmarkHAProxyReqRate decides at 3x the rate: most requests are denied
// and need their RetryAfter.
func BenchmarkHAProxyReqRate(b *testing.B) {
	h, _ := algorithms.NewHAProxyReqRate(algorithms.Policy{Limit: 100, Window: time.Second})
	r := rand.New(rand.NewPCG(1, 1))
	at := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		at += time.Duration(r.Int64N(int64(2 * time.Millisecond / 3)))
		_, _ = h.Allow(at, "k", 1)
	}
}
