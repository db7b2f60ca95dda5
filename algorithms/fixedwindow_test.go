package algorithms_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
)

func TestFixedWindowSteps(t *testing.T) {
	never := algorithms.Never
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"boundary", []step{
			{at: ms(1900), cost: 2, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(100)},
				why: "first admit of the window [1s, 2s)"},
			{at: ms(1950), cost: 2, want: algorithms.Decision{Remaining: 1, RetryAfter: ms(50), ResetAfter: ms(50)},
				why: "does not fit: wait for the next window"},
			{at: ms(2000) - 1, cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 1},
				why: "fills the window 1ns before its end"},
			{at: ms(2000), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
				why: "a new window: L more, 2L within 1ns"},
			{at: ms(1500), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(1500), ResetAfter: ms(1500)},
				why: "back in time counts against the current window, full"},
			{at: ms(2500), cost: 4, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(500)},
				why: "above the limit: never"},
			{at: ms(3000), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
				why: "the rejections took nothing from the next window"},
		}},
		{"negative instants", []step{
			{at: ms(-1500), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: ms(500)},
				why: "window [-2s, -1s): floor, not truncation"},
			{at: ms(-1000), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1000)},
				why: "window [-1s, 0)"},
			{at: -1, cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: 1, ResetAfter: 1},
				why: "full until 0"},
			{at: 0, cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: ms(1000)},
				why: "window [0, 1s)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 3 per second; the burst is ignored.
			fw, err := algorithms.NewFixedWindow(algorithms.Policy{Limit: 3, Window: ms(1000), Burst: 100})
			if err != nil {
				t.Fatal(err)
			}
			runSteps(t, fw, tc.steps)
		})
	}
}

func TestFixedWindowErrors(t *testing.T) {
	checkErrors(t, "fixed-window", algorithms.NewFixedWindow)
}
