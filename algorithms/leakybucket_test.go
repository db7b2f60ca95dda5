package algorithms_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
)

func TestLeakyBucketSteps(t *testing.T) {
	never := algorithms.Never
	// 10 per second, capacity 4: T = 100ms, B*T = 400ms.
	lb, err := algorithms.NewLeakyBucket(algorithms.Policy{Limit: 10, Window: ms(1000), Burst: 4})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, lb, []step{
		{at: ms(1000), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 3, ResetAfter: ms(100)},
			why: "an empty bucket admits; one unit drains in T"},
		{at: ms(1000), cost: 3, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "fills the bucket exactly"},
		{at: ms(1000), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(100), ResetAfter: ms(400)},
			why: "full: one unit drains in T"},
		{at: ms(1050), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(50), ResetAfter: ms(350)},
			why: "half a unit drained is not enough"},
		{at: ms(1100), cost: 1, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "exactly one unit drained"},
		{at: ms(900), cost: 1, want: algorithms.Decision{Remaining: 0, RetryAfter: ms(300), ResetAfter: ms(600)},
			why: "200ms earlier the bucket was fuller by 200ms"},
		{at: ms(1100), cost: 5, want: algorithms.Decision{Remaining: 0, RetryAfter: never, ResetAfter: ms(400)},
			why: "above the capacity: never; the rejection above changed nothing"},
		{at: ms(3000), cost: 4, want: algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: ms(400)},
			why: "drained empty after 2s, not below"},
	})
}

func TestLeakyBucketErrors(t *testing.T) {
	checkErrors(t, "leaky-bucket", algorithms.NewLeakyBucket)
}
