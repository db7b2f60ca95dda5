package algorithms_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

func TestSlidingCounterAllSteps(t *testing.T) {
	never := algorithms.Never
	// 3 per second, windows on whole seconds; the burst is ignored.
	c, err := algorithms.NewSlidingCounterAll(algorithms.Policy{Limit: 3, Window: ms(1000), Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, c, []step{
		{at: ms(1000), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(2000)},
			why: "an empty counter admits"},
		{at: ms(1500), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1250), ResetAfter: ms(1500)},
			why: "2+2 > 3: rejected and counted, 4 in [1s, 2s); 4 weighs 1 at 2.75s"},
		{at: ms(2500), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1000), ResetAfter: ms(1500)},
			why: "the previous 4 weigh 2: rejected (the plain counter's 2 would weigh 1 and admit); counted"},
		{at: ms(3500), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1500)},
			why: "the RetryAfter above: the 2 counted in [2s, 3s) weigh 1"},
		{at: ms(3500), cost: 6, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(1500)},
			why: "above the limit: never, and counted: 8 in [3s, 4s)"},
		{at: ms(4500), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(375), ResetAfter: ms(1500)},
			why: "the previous 8 weigh 4: rejected, counted; at 4.875s they weigh 1, and 1+1+1 fits"},
		{at: ms(4875), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1125)},
			why: "the RetryAfter above"},
		{at: ms(4500), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1250), ResetAfter: ms(1500)},
			why: "back in time: decided and counted as at 4.875s; the 4 counted in [4s, 5s) weigh 1 at 5.75s"},
		{at: ms(6000), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(2000)},
			why: "[5s, 6s) was empty: nothing weighs"},
	})
}

// TestSlidingCounterAllIsExact: on random traces with costs up to 2L the
// counter of every request decides as its estimate computed in rationals
// (math/big) with every request counted; its RetryAfter is the first
// instant at which that estimate lets the request in; it never admits more
// than 2L - ceil(2L/W) in a span W.
func TestSlidingCounterAllIsExact(t *testing.T) {
	for i := range crossTraces {
		r := newRand(8, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, 2*p.Limit, crossRequests/5, false)
		c, err := algorithms.NewSlidingCounterAll(p)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[time.Duration]int64{}
		// fits reports whether cost fits the estimate at, counts as they are.
		fits := func(at time.Duration, cost int64) bool {
			k := floorDiv(at, p.Window)
			w := big.NewRat(int64((k+1)*p.Window-at), int64(p.Window))
			est := new(big.Rat).Mul(big.NewRat(counts[k-1], 1), w)
			est.Add(est, big.NewRat(counts[k]+cost, 1))
			return est.Cmp(big.NewRat(p.Limit, 1)) <= 0
		}
		var admits []admit
		for j, q := range trace {
			want := fits(q.at, q.cost)
			counts[floorDiv(q.at, p.Window)] += q.cost
			d := mustAllow(t, c, q)
			if d.Allowed != want {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want allowed=%v", i, p, j, q, d, want)
			}
			if d.Allowed {
				admits = append(admits, admit(q))
			}
			var rem int64 // the largest cost that fits now
			for rem < p.Limit && fits(q.at, rem+1) {
				rem++
			}
			if d.Remaining != rem {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want Remaining %d", i, p, j, q, d, rem)
			}
			if !d.Allowed && q.cost <= p.Limit {
				at := q.at + d.RetryAfter
				if !fits(at, q.cost) || fits(at-1, q.cost) {
					t.Fatalf("trace %d (%v) request %d %+v: %+v: fits at +RetryAfter %v, 1ns before %v",
						i, p, j, q, d, fits(at, q.cost), fits(at-1, q.cost))
				}
			}
		}
		if got, bound := maxInSpan(admits, p.Window, false), slidingCounterBound(p); got > bound {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= %d", i, p, got, bound)
		}
	}
}

// TestSlidingCounterAllSaturates: a counter stops at L*W, from where the
// weight of the previous window rejects everything until it has left.
// After costs that add up beyond 2^63 the decisions, Remaining included,
// are those of the estimate on unbounded counts (math/big).
func TestSlidingCounterAllSaturates(t *testing.T) {
	p := algorithms.Policy{Limit: 3, Window: 10}
	c, err := algorithms.NewSlidingCounterAll(p)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[time.Duration]*big.Int{}
	count := func(k time.Duration) *big.Int {
		if counts[k] == nil {
			counts[k] = new(big.Int)
		}
		return counts[k]
	}
	for i, q := range []request{
		{25, 1 << 62}, {26, 1 << 62}, {27, 1<<63 - 1}, // [20, 30): far above 2^63
		{31, 1}, {39, 1}, // [30, 40): the huge count weighs more than L to the end
		{45, 2}, {45, 1}, {55, 1}, {58, 1}, {61, 3}, {79, 2}, {79, 1},
	} {
		k := floorDiv(q.at, p.Window)
		// estimate*W = prev*(W-e) + (curr+cost)*W, against L*W
		lw := big.NewInt(p.Limit * int64(p.Window))
		est := func() *big.Int {
			e := new(big.Int).Mul(count(k-1), big.NewInt(int64((k+1)*p.Window-q.at)))
			return e.Add(e, new(big.Int).Mul(count(k), big.NewInt(int64(p.Window))))
		}
		count(k).Add(count(k), big.NewInt(q.cost))
		want := algorithms.Decision{Allowed: est().Cmp(lw) <= 0}
		if left := new(big.Int).Sub(lw, est()); left.Sign() > 0 {
			want.Remaining = left.Div(left, big.NewInt(int64(p.Window))).Int64() // floor
		}
		d := mustAllow(t, c, q)
		if d.Allowed != want.Allowed || d.Remaining != want.Remaining {
			t.Fatalf("request %d %+v: %+v, want allowed=%v, Remaining %d", i, q, d, want.Allowed, want.Remaining)
		}
	}
}

func TestSlidingCounterAllErrors(t *testing.T) {
	checkErrors(t, "sliding-counter-all", algorithms.NewSlidingCounterAll)
}
