package algorithms_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
)

func TestSlidingCounterSteps(t *testing.T) {
	never := algorithms.Never
	// 10 per second; the burst is ignored.
	c, err := algorithms.NewSlidingCounter(algorithms.Policy{Limit: 10, Window: ms(1000), Burst: 2})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, c, []step{
		{at: ms(1500), cost: 6, want: algorithms.Decision{Allowed: true, Remaining: 4, ResetAfter: ms(1500)},
			why: "window [1s, 2s); reset at the end of the next one"},
		{at: ms(2250), cost: 5, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1750)},
			why: "estimate 6*0.75 + 0 = 4.5, +5 fits in 10"},
		{at: ms(2250), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(83.333334), ResetAfter: ms(1750)},
			why: "4.5+5+1 > 10 until 6*w <= 4 (w = 666666666ns), at 2.333333334s"},
		{at: ms(2500), cost: 6, want: algorithms.Decision{Remaining: 2, RetryAfter: ms(700), ResetAfter: ms(1500)},
			why: "5+6 > 10 in this window; in the next, 5*w <= 4 from w = 0.8s, at 3.2s"},
		{at: ms(2400), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: ms(1600)},
			why: "back in time: decided as at 2.5s, estimate 3+5"},
		{at: ms(3200), cost: 11, want: algorithms.Decision{Remaining: 5, RetryAfter: never, ResetAfter: ms(800)},
			why: "above the limit: never; estimate 6*0.8 = 4.8, gone at 4s"},
		{at: ms(5500), cost: 10, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(1500)},
			why: "two windows later nothing weighs"},
	})
}

func TestSlidingCounterErrors(t *testing.T) {
	checkErrors(t, "sliding-counter", algorithms.NewSlidingCounter)
}
