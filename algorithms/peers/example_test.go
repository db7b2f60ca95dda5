package peers_test

import (
	"fmt"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/peers"
)

func ExampleNewXRate() {
	// 2 per second, burst 2: x/time/rate's rate.NewLimiter(2, 2).
	x, err := peers.NewXRate(algorithms.Policy{Limit: 2, Window: time.Second})
	if err != nil {
		panic(err)
	}
	for _, at := range []time.Duration{0, 0, 0, 499 * time.Millisecond, 500 * time.Millisecond} {
		d, _ := x.Allow(at, "k", 1)
		fmt.Printf("at %v: allowed=%v remaining=%d retry-after=%v reset-after=%v\n",
			at, d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter)
	}
	// Output:
	// at 0s: allowed=true remaining=1 retry-after=0s reset-after=500ms
	// at 0s: allowed=true remaining=0 retry-after=0s reset-after=1s
	// at 0s: allowed=false remaining=0 retry-after=500ms reset-after=1s
	// at 499ms: allowed=false remaining=0 retry-after=1ms reset-after=501ms
	// at 500ms: allowed=true remaining=0 retry-after=0s reset-after=1s
}

func ExampleNewUber() {
	// 10 per second, burst 3: ratelimit.New(10, Per(time.Second), WithSlack(2)).
	// A fresh limiter has no slack yet: one at once, then one every 100ms.
	u, err := peers.NewUber(algorithms.Policy{Limit: 10, Window: time.Second, Burst: 3})
	if err != nil {
		panic(err)
	}
	for range 4 {
		d, _ := u.Allow(time.Second, "k", 1)
		fmt.Println("served after", d.Delay)
	}
	// Output:
	// served after 0s
	// served after 100ms
	// served after 200ms
	// served after 300ms
}
