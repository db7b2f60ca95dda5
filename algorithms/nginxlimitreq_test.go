package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// us is a number of microseconds.
func us(x int64) time.Duration { return time.Duration(x) * time.Microsecond }

func TestNginxLimitReqSteps(t *testing.T) {
	never := algorithms.Never
	// rate=10r/s burst=1: 10000 thousandths per second, 10 per ms; excess
	// at most 1000.
	g, err := algorithms.NewNginxLimitReq(algorithms.Policy{Limit: 10, Window: ms(1000), Burst: 2})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, g, []step{
		{at: ms(1000) + us(900), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: us(99100)},
			why: "a new key: excess 0 at millisecond 1000; empty again from 1100"},
		{at: ms(1000) + us(950), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: us(199050)},
			why: "the same millisecond: excess 1000 = burst, the burst+1-th request"},
		{at: ms(1100) - 1, cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: 1, ResetAfter: ms(100) + 1},
			why: "millisecond 1099: 99ms drain 990, excess would be 1010; 1ns later it is millisecond 1100"},
		{at: ms(1100), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(200)},
			why: "100ms drain 1000: one request per 1000/rate = 100ms"},
		{at: ms(1150) + us(500), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: us(49500), ResetAfter: us(149500)},
			why: "50ms drain 500: 1500 > 1000; admitted at millisecond 1200"},
		{at: ms(1250), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(150)},
			why: "150ms drain 1500, clamped: 1000-1500+1000 = 500"},
		{at: ms(1250), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(150), ResetAfter: ms(150)},
			why: "two requests' worth: 1500 then 2500; 1500 must drain first"},
		{at: ms(1250), cost: 3, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(150)},
			why: "above burst+1: never"},
		{at: ms(5000), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(200)},
			why: "after idle: burst+1 at once, the rejections above changed nothing"},
	})
}

// TestNginxLimitReqBackwards: a clock that goes back up to a minute drains
// nothing; more than a minute is taken as 1ms forward and moves last back,
// so that coming forward again drains the same stretch twice, as in nginx.
func TestNginxLimitReqBackwards(t *testing.T) {
	// rate=1000r/s, no burst: 1ms drains one request.
	g, err := algorithms.NewNginxLimitReq(algorithms.Policy{Limit: 1000, Window: time.Second, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, g, []step{
		{at: 100 * time.Second, cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1)},
			why: "a new key"},
		{at: 100 * time.Second, cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1), ResetAfter: ms(1)},
			why: "the same millisecond: no drain"},
		{at: 41 * time.Second, cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(59001), ResetAfter: ms(59001)},
			why: "59s back: elapsed taken as 0, rejected"},
		{at: 30 * time.Second, cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1)},
			why: "70s back: taken as 1ms forward, which drains a request; last moves to 30s"},
		{at: 100 * time.Second, cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1)},
			why: "back to 100s: 70s drained again, quota nginx creates too"},
	})
}

// TestNginxLimitReqAdmits counts what nginx's configurations admit: burst+1
// after idle, then one per 1000/rate ms; the rate truncated to
// thousandths; and the millisecond clock around a tick.
func TestNginxLimitReqAdmits(t *testing.T) {
	type burst struct {
		at    time.Duration // of the first request
		every time.Duration // between requests
		n     int64
	}
	for _, tc := range []struct {
		name     string
		p        algorithms.Policy
		bursts   []burst
		admitted int64
		maxInW   int64 // most admitted in a span W
	}{
		// 30 at 5s: 21, burst+1. Then one every 10ms from 5.01s to 6s:
		// one request drains per 100ms, admitted at 5.1s, 5.2s, ..., 6s:
		// 10. The 21 and the 9 up to 5.9s are in one span W.
		{name: "rate=10r/s burst=20 nodelay", p: algorithms.Policy{Limit: 10, Window: time.Second, Burst: 21},
			bursts: []burst{{5 * time.Second, 0, 30}, {5*time.Second + ms(10), ms(10), 100}}, admitted: 31, maxInW: 30},
		// 30 in the last nanosecond of millisecond 4999, then one every
		// 1ms from 5s: the drain counts from millisecond 4999, so they are
		// admitted at 5.099s, ..., 5.999s: B + L = 31 in a span W, the
		// theory.
		{name: "burst+1 in the last ns of a millisecond", p: algorithms.Policy{Limit: 10, Window: time.Second, Burst: 21},
			bursts: []burst{{5*time.Second - 1, 0, 30}, {5 * time.Second, ms(1), 1000}}, admitted: 31, maxInW: 31},
		// rate=1r/m is 16 thousandths per second: one request drains in
		// 62.5s, not 60s. One request a second for 2 minutes: admitted at
		// 0s and 63s (a true 1 per minute: 0s, 60s, 120s).
		{name: "rate=1r/m truncated", p: algorithms.Policy{Limit: 1, Window: time.Minute, Burst: 1},
			bursts: []burst{{0, time.Second, 121}}, admitted: 2, maxInW: 1},
		// rate=30r/m is 500 thousandths per second exactly: one per 2s.
		{name: "rate=30r/m", p: algorithms.Policy{Limit: 30, Window: time.Minute, Burst: 1},
			bursts: []burst{{0, ms(500), 241}}, admitted: 61, maxInW: 30},
		// One per microsecond, burst 0: the clock's millisecond hides the
		// rate; 1 at 999.999us, then the tick at 1ms drains 1000 requests
		// but the bucket holds one: 2 within 1ns, its theory.
		{name: "a window under a millisecond", p: algorithms.Policy{Limit: 1, Window: time.Microsecond, Burst: 1},
			bursts: []burst{{ms(1) - 1, 0, 5}, {ms(1), 0, 5}}, admitted: 2, maxInW: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := algorithms.NewNginxLimitReq(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			var admits []admit
			for _, b := range tc.bursts {
				for k := range b.n {
					q := request{b.at + time.Duration(k)*b.every, 1}
					if mustAllow(t, g, q).Allowed {
						admits = append(admits, admit(q))
					}
				}
			}
			got, most := int64(len(admits)), maxInSpan(admits, tc.p.Window, false)
			if got != tc.admitted || most != tc.maxInW {
				t.Fatalf("admitted %d, at most %d in a span W; want %d, %d; admits %v", got, most, tc.admitted, tc.maxInW, admits)
			}
			if th := algorithms.NginxLimitReqWorst(tc.p); most > th {
				t.Fatalf("%d in a span W, above the theory %d", most, th)
			}
		})
	}
}

// TestNginxLimitReqWorstReached: the theory is reached: B in the last
// nanosecond of a millisecond, then as many as drain by the first
// nanosecond of the millisecond ceil(W/1ms) later.
func TestNginxLimitReqWorstReached(t *testing.T) {
	for _, p := range []algorithms.Policy{
		{Limit: 10, Window: time.Second, Burst: 21}, // B + L
		{Limit: 7, Window: time.Second, Burst: 3},   // B + L, at 143, 286, ..., 858, 1000ms
		{Limit: 4, Window: time.Millisecond, Burst: 4},
		{Limit: 1, Window: time.Microsecond, Burst: 3},         // 2B
		{Limit: 10, Window: 1500 * time.Millisecond, Burst: 2}, // rate 6666: B + 9
	} {
		g, err := algorithms.NewNginxLimitReq(p)
		if err != nil {
			t.Fatal(err)
		}
		start := 10*time.Second - 1 // the last ns of a millisecond
		end := start + 1 + ms(1)*((p.Window+ms(1)-1)/ms(1))
		var admits []admit
		for at := start; at <= end; at = (at/ms(1) + 1) * ms(1) { // each millisecond's first ns
			for mustAllow(t, g, request{at, 1}).Allowed {
				admits = append(admits, admit{at, 1})
			}
		}
		if got, want := maxInSpan(admits, p.Window, false), algorithms.NginxLimitReqWorst(p); got != want {
			t.Errorf("policy %v: %d admitted in a span W, want the theory %d", p, got, want)
		}
	}
}

// nginxRef is ngx_http_limit_req_lookup for one key and one limit, as
// nginx computes it, on the request's millisecond: rate and excess in
// thousandths, a new node admitted with excess 0.
type nginxRef struct {
	rate, burst  int64
	node         bool
	excess, last int64
}

// lookup decides one request at millisecond now and stores it if admitted.
func (r *nginxRef) lookup(now int64) bool {
	if !r.node {
		r.node, r.excess, r.last = true, 0, now
		return true
	}
	ms := now - r.last
	if ms < -60000 {
		ms = 1
	} else if ms < 0 {
		ms = 0
	}
	excess := r.excess - r.rate*ms/1000 + 1000
	if excess < 0 {
		excess = 0
	}
	if excess > r.burst {
		return false
	}
	r.excess = excess
	if ms != 0 {
		r.last = now
	}
	return true
}

// decide is cost lookups at the same instant, all stored or none.
func (r *nginxRef) decide(at time.Duration, cost int64) bool {
	c := *r
	m := int64(floorDiv(at, ms(1)))
	for range cost {
		if !c.lookup(m) {
			return false
		}
	}
	*r = c
	return true
}

// TestNginxLimitReqMatchesNginx: on random traces (gaps of a few
// milliseconds to seconds, now and then back by a little or by more than a
// minute) the model admits what nginx's lookup admits, request by request;
// and its Remaining, RetryAfter and ResetAfter are exact by that lookup.
func TestNginxLimitReqMatchesNginx(t *testing.T) {
	for i := range crossTraces {
		r := newRand(10, i)
		p := algorithms.Policy{
			Limit:  []int64{1, 2, 3, 7, 10, 60}[r.IntN(6)],
			Window: []time.Duration{ms(1), 3 * ms(1), ms(100), time.Second, time.Minute}[r.IntN(5)],
		}
		p.Burst = []int64{1, 2, p.Limit, p.Limit + 5}[r.IntN(4)]
		g, err := algorithms.NewNginxLimitReq(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := &nginxRef{rate: int64(p.Limit) * 1e12 / int64(p.Window), burst: (p.Burst - 1) * 1000}
		at := 2 * time.Minute
		for j := range 1000 {
			at += nginxGap(r, p)
			cost := 1 + r.Int64N(p.Burst+1)
			d := mustAllow(t, g, request{at, cost})
			if want := ref.decide(at, cost); d.Allowed != want {
				t.Fatalf("trace %d (%v) request %d at %v cost %d: %+v, nginx allowed=%v", i, p, j, at, cost, d, want)
			}
			checkFields(t, fmt.Sprintf("trace %d (%v) request %d", i, p, j), d, at, cost, p.Burst, func(at time.Duration, n int64) bool {
				c := *ref
				return c.decide(at, n)
			})
		}
	}
}

// nginxGap draws the time to the next request: mostly forward by up to a
// tenth of the window or a few ms, sometimes the same millisecond, now and
// then back by up to 2ms, or by more than a minute.
func nginxGap(r *rand.Rand, p algorithms.Policy) time.Duration {
	switch k := r.IntN(100); {
	case k < 20:
		return time.Duration(r.Int64N(int64(ms(1))))
	case k < 25:
		return -time.Duration(r.Int64N(int64(2 * ms(1))))
	case k == 25:
		return -61*time.Second - time.Duration(r.Int64N(int64(time.Second)))
	case k == 26:
		return 62 * time.Second
	default:
		return time.Duration(r.Int64N(int64(max(p.Window/10, 5*ms(1)))))
	}
}

func TestNginxLimitReqPolicies(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		ok   bool
	}{
		{"rate=1r/m", algorithms.Policy{Limit: 1, Window: time.Minute}, true},
		{"0.001 r/s: 1 per 1000s", algorithms.Policy{Limit: 1, Window: 1000 * time.Second}, true},
		{"below 0.001 r/s", algorithms.Policy{Limit: 1, Window: 1001 * time.Second}, false},
		{"burst above 2^40", algorithms.Policy{Limit: 1 << 20, Window: time.Second, Burst: 1<<40 + 1}, false},
		{"a burst that drains in centuries", algorithms.Policy{Limit: 1, Window: 999 * time.Second, Burst: 1 << 30}, false},
	} {
		_, err := algorithms.NewNginxLimitReq(tc.p)
		if (err == nil) != tc.ok {
			t.Errorf("%s: NewNginxLimitReq(%v) = %v, want ok=%v", tc.name, tc.p, err, tc.ok)
		}
		if th := algorithms.NginxLimitReqWorst(tc.p); (th > 0) != tc.ok {
			t.Errorf("%s: NginxLimitReqWorst(%v) = %d, want 0 only for an invalid policy", tc.name, tc.p, th)
		}
	}
}

func TestNginxLimitReqErrors(t *testing.T) {
	checkErrors(t, "nginx-limit-req", algorithms.NewNginxLimitReq)
}
