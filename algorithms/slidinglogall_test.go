package algorithms_test

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

func TestSlidingLogAllSteps(t *testing.T) {
	never := algorithms.Never
	// 3 per second; the burst is ignored.
	s, err := algorithms.NewSlidingLogAll(algorithms.Policy{Limit: 3, Window: ms(1000), Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, s, []step{
		{at: ms(1000), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(1000)},
			why: "an empty log admits"},
		{at: ms(1400), cost: 2, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1000), ResetAfter: ms(1000)},
			why: "2+2 > 3: rejected and recorded, so a retry waits for it to leave too, at 2.4s"},
		{at: ms(1500), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(900), ResetAfter: ms(1000)},
			why: "the plain log would admit (2+1 <= 3); the 2 rejected at 1.4s count"},
		{at: ms(2000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(400), ResetAfter: ms(1000)},
			why: "the 2 admitted at 1s have left, the rejected ones have not: 2+1+1 recorded"},
		{at: ms(2400), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
			why: "the 2 rejected at 1.4s have left: 1+1+1"},
		{at: ms(2400), cost: 4, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(1000)},
			why: "above the limit: never, and recorded (as 3: more would change nothing)"},
		{at: ms(3000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(400), ResetAfter: ms(1000)},
			why: "the 4 at 2.4s keeps everything out until 3.4s"},
		{at: ms(2500), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(900), ResetAfter: ms(1500)},
			why: "back in time: decided and recorded as at 3s, the latest instant"},
		{at: ms(4000), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
			why: "a client that stops for W starts afresh"},
	})
}

// TestSlidingLogAllIsExact: the sliding log of every request decides as a
// brute-force log that keeps every request as it came (no entry dropped,
// no cost cut to L), every field, on random traces with costs up to 2L;
// it never admits more than L in a span W.
func TestSlidingLogAllIsExact(t *testing.T) {
	for i := range crossTraces {
		r := newRand(7, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, 2*p.Limit, crossRequests, false)
		s, err := algorithms.NewSlidingLogAll(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := &exactLogAll{window: p.Window, limit: p.Limit}
		for j, q := range trace {
			got, want := mustAllow(t, s, q), ref.allow(q)
			if got != want {
				t.Fatalf("trace %d (%v) request %d %+v: sliding-log-all %+v, exact %+v", i, p, j, q, got, want)
			}
		}
		if got := maxInSpan(ref.admits, p.Window, false); got > p.Limit {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= %d", i, p, got, p.Limit)
		}
	}
}

// exactLogAll is the brute-force reference for SlidingLogAll on a trace
// that never goes back in time: every request kept in order, every sum
// recomputed.
type exactLogAll struct {
	window time.Duration
	limit  int64
	log    []admit // every request
	admits []admit
}

// used is the cost requested in (at-W, at], for at no earlier than the
// last request.
func (e *exactLogAll) used(at time.Duration) int64 {
	var sum int64
	for _, a := range slices.Backward(e.log) {
		if a.at <= at-e.window {
			break
		}
		sum += a.cost
	}
	return sum
}

func (e *exactLogAll) allow(q request) algorithms.Decision {
	d := algorithms.Decision{Allowed: e.used(q.at)+q.cost <= e.limit}
	e.log = append(e.log, admit(q))
	if d.Allowed {
		e.admits = append(e.admits, admit(q))
	}
	d.Remaining = max(e.limit-e.used(q.at), 0)
	d.ResetAfter = e.window // the newest request is this one
	switch {
	case d.Allowed:
	case q.cost > e.limit:
		d.RetryAfter = algorithms.Never
	default:
		// The first expiry instant at which the request fits; the request
		// itself expires at now+W, so one is found.
		live, _ := slices.BinarySearchFunc(e.log, q.at-e.window+1, func(a admit, at time.Duration) int {
			return cmp.Compare(a.at, at)
		})
		for _, a := range e.log[live:] {
			if at := a.at + e.window; e.used(at)+q.cost <= e.limit {
				d.RetryAfter = at - q.at
				break
			}
		}
	}
	return d
}

func TestSlidingLogAllErrors(t *testing.T) {
	checkErrors(t, "sliding-log-all", algorithms.NewSlidingLogAll)
}
