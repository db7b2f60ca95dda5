package algorithms_test

import (
	"fmt"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// GCRA at 10 per second (one unit every 100ms) with a burst of 2: two
// admits at once, then one per 100ms. Time is passed in, so the decisions
// do not depend on the wall clock.
func ExampleNewGCRA() {
	g, err := algorithms.NewGCRA(algorithms.Policy{Limit: 10, Window: time.Second, Burst: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, at := range []time.Duration{0, 0, 0, 50 * time.Millisecond, 100 * time.Millisecond} {
		d, err := g.Allow(at, "user-1", 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("t=%-5v allowed=%-5v remaining=%d retry-after=%-5v reset-after=%v\n",
			at, d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter)
	}
	// Output:
	// t=0s    allowed=true  remaining=1 retry-after=0s    reset-after=100ms
	// t=0s    allowed=true  remaining=0 retry-after=0s    reset-after=200ms
	// t=0s    allowed=false remaining=0 retry-after=100ms reset-after=200ms
	// t=50ms  allowed=false remaining=0 retry-after=50ms  reset-after=150ms
	// t=100ms allowed=true  remaining=0 retry-after=0s    reset-after=200ms
}

// A fixed window of 3 per second lets 3 through just before the window
// edge and 3 more just after it: 6 within 100ms, the boundary case.
func ExampleNewFixedWindow() {
	fw, err := algorithms.NewFixedWindow(algorithms.Policy{Limit: 3, Window: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []struct {
		at   time.Duration
		cost int64
	}{
		{900 * time.Millisecond, 2},
		{950 * time.Millisecond, 2},
		{999 * time.Millisecond, 1},
		{time.Second, 3},
		{1500 * time.Millisecond, 1},
	} {
		d, err := fw.Allow(r.at, "user-1", r.cost)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("t=%-6v cost=%d allowed=%-5v remaining=%d retry-after=%-5v reset-after=%v\n",
			r.at, r.cost, d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter)
	}
	// Output:
	// t=900ms  cost=2 allowed=true  remaining=1 retry-after=0s    reset-after=100ms
	// t=950ms  cost=2 allowed=false remaining=1 retry-after=50ms  reset-after=50ms
	// t=999ms  cost=1 allowed=true  remaining=0 retry-after=0s    reset-after=1ms
	// t=1s     cost=3 allowed=true  remaining=0 retry-after=0s    reset-after=1s
	// t=1.5s   cost=1 allowed=false remaining=0 retry-after=500ms reset-after=500ms
}
