package algorithms_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
)

func TestLeakyQueueSteps(t *testing.T) {
	never := algorithms.Never
	// 10 per second, queue of 4: each unit takes T = 100ms of service.
	q, err := algorithms.NewLeakyQueue(algorithms.Policy{Limit: 10, Window: ms(1000), Burst: 4})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, q, []step{
		{at: ms(1000), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 3, ResetAfter: ms(100)},
			why: "an idle server serves at once"},
		{at: ms(1000), cost: 2, want: algorithms.Decision{Allowed: true, Delay: ms(100), Remaining: 1, ResetAfter: ms(300)},
			why: "queued behind one unit"},
		{at: ms(1050), cost: 1, want: algorithms.Decision{Allowed: true, Delay: ms(250), Remaining: 0, ResetAfter: ms(350)},
			why: "3.5 units in the system with it: fits in 4"},
		{at: ms(1050), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(50), ResetAfter: ms(350)},
			why: "4.5 units would not fit"},
		{at: ms(1100), cost: 1, want: algorithms.Decision{Allowed: true, Delay: ms(300), Remaining: 0, ResetAfter: ms(400)},
			why: "one unit served since: exactly 4 in the system"},
		{at: ms(1000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(200), ResetAfter: ms(500)},
			why: "back in time, the server is busy for longer"},
		{at: ms(1100), cost: 5, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(400)},
			why: "above the queue: never"},
		{at: ms(2000), cost: 4, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "the queue emptied at 1.5s"},
	})
}

func TestLeakyQueueErrors(t *testing.T) {
	checkErrors(t, "leaky-queue", algorithms.NewLeakyQueue)
}
