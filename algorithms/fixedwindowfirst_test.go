package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

func TestFixedWindowFirstSteps(t *testing.T) {
	never := algorithms.Never
	// 3 per second; the burst is ignored.
	w, err := algorithms.NewFixedWindowFirst(algorithms.Policy{Limit: 3, Window: ms(1000), Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, w, []step{
		{at: ms(1500), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(1000)},
			why: "the first request opens the window [1.5s, 2.5s) at its own instant"},
		{at: ms(2400), cost: 2, want: algorithms.Decision{Remaining: 1, RetryAfter: ms(100), ResetAfter: ms(100)},
			why: "does not fit: wait until the window expires"},
		{at: ms(2500) - 1, cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 1},
			why: "fills the window 1ns before it expires; the aligned edge at 2s meant nothing"},
		{at: ms(2500), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
			why: "expired: this request opens [2.5s, 3.5s)"},
		{at: ms(2000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1500), ResetAfter: ms(1500)},
			why: "back in time: decided as at 2.5s, in the full window"},
		{at: ms(3600), cost: 4, want: algorithms.Decision{Remaining: 3, RetryAfter: never},
			why: "above the limit: never; it opens no window"},
		{at: ms(3700), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: ms(1000)},
			why: "the rejection opened nothing: this opens [3.7s, 4.7s)"},
		{at: ms(4000), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(700)},
			why: "4s is an aligned edge, not this window's"},
	})
}

// TestFixedWindowFirstPhase: the same requests against a window aligned on
// multiples of W and one opened by the first request. An attack on the
// aligned edges falls inside one first-request window; an attack in phase
// with the first request gets 2L-1 through in a span W.
func TestFixedWindowFirstPhase(t *testing.T) {
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	type burst struct {
		at time.Duration
		n  int64 // unit requests at that instant
	}
	for _, tc := range []struct {
		name           string
		bursts         []burst
		aligned, first int64 // admitted by fixed-window, fixed-window-first
		firstMax       int64 // fixed-window-first's most admitted in a span W
	}{
		// Aligned: 1 + 9 in [0, 1s), 10 in [1s, 2s). First: all in [0.3s,
		// 1.3s), which holds 10.
		{name: "on the aligned edges", bursts: []burst{{ms(300), 1}, {ms(1000) - 1, 10}, {ms(1000), 10}},
			aligned: 20, first: 10, firstMax: 10},
		// Aligned: 1 in [0, 1s), then 10 of the 20 in [1s, 2s). First: 1 +
		// 9 in [0.3s, 1.3s), 10 in [1.3s, 2.3s): 19 within 1ns.
		{name: "in phase with the first request", bursts: []burst{{ms(300), 1}, {ms(1300) - 1, 10}, {ms(1300), 10}},
			aligned: 11, first: 20, firstMax: 19},
		// The opener of [0.3s, 1.3s) is not in (0.3s, 1.3s]: 2L-1 is the
		// most, even with the whole limit asked at the opening instant.
		{name: "opened with the whole limit", bursts: []burst{{ms(300), 10}, {ms(1300) - 1, 10}, {ms(1300), 10}},
			aligned: 20, first: 20, firstMax: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw, _ := algorithms.NewFixedWindow(p)
			ff, err := algorithms.NewFixedWindowFirst(p)
			if err != nil {
				t.Fatal(err)
			}
			var aligned, first int64
			var admits []admit
			for _, b := range tc.bursts {
				for range b.n {
					if mustAllow(t, fw, request{b.at, 1}).Allowed {
						aligned++
					}
					if mustAllow(t, ff, request{b.at, 1}).Allowed {
						first++
						admits = append(admits, admit{b.at, 1})
					}
				}
			}
			got := maxInSpan(admits, p.Window, false)
			if aligned != tc.aligned || first != tc.first || got != tc.firstMax {
				t.Fatalf("admitted %d aligned, %d first-request (most in a span W: %d); want %d, %d (%d)",
					aligned, first, got, tc.aligned, tc.first, tc.firstMax)
			}
		})
	}
}

// TestFixedWindowFirstIsExact: on random traces the first-request window
// decides as a brute-force model of it, every field, and never admits more
// than 2L-1 in a span W.
func TestFixedWindowFirstIsExact(t *testing.T) {
	for i := range crossTraces {
		r := newRand(6, i)
		p := crossPolicy(r)
		trace := crossTrace(r, p, p.Limit+1, crossRequests, false)
		ff, err := algorithms.NewFixedWindowFirst(p)
		if err != nil {
			t.Fatal(err)
		}
		var (
			open   bool
			start  time.Duration
			count  int64
			admits []admit
		)
		for j, q := range trace {
			if open && q.at >= start+p.Window {
				open, count = false, 0
			}
			var want algorithms.Decision
			switch {
			case count+q.cost <= p.Limit:
				if !open {
					open, start = true, q.at
				}
				count += q.cost
				want = algorithms.Decision{Allowed: true, Remaining: p.Limit - count, ResetAfter: start + p.Window - q.at}
				admits = append(admits, admit(q))
			case q.cost > p.Limit:
				want = algorithms.Decision{Remaining: p.Limit - count, RetryAfter: algorithms.Never}
				if open {
					want.ResetAfter = start + p.Window - q.at
				}
			default:
				want = algorithms.Decision{Remaining: p.Limit - count, RetryAfter: start + p.Window - q.at, ResetAfter: start + p.Window - q.at}
			}
			if got := mustAllow(t, ff, q); got != want {
				t.Fatalf("trace %d (%v) request %d %+v: %+v, want %+v", i, p, j, q, got, want)
			}
		}
		if got := maxInSpan(admits, p.Window, false); got > 2*p.Limit-1 {
			t.Fatalf("trace %d (%v): %d admitted in a span W, want <= 2L-1 = %d", i, p, got, 2*p.Limit-1)
		}
	}
}

func TestFixedWindowFirstErrors(t *testing.T) {
	checkErrors(t, "fixed-window-first", algorithms.NewFixedWindowFirst)
}
