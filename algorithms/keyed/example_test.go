package keyed_test

import (
	"fmt"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

func ExampleNew() {
	// 2 requests per second per key, burst 2, with GCRA (one word per key).
	l, err := keyed.New(algorithms.Policy{Limit: 2, Window: time.Second},
		func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) },
		keyed.Options{MaxKeys: 1000})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range []struct {
		at  time.Duration
		key string
	}{
		{0, "alice"},
		{0, "alice"},
		{0, "alice"}, // alice's burst is used up
		{0, "bob"},   // bob has his own
		{500 * time.Millisecond, "alice"},
	} {
		d, err := l.Allow(r.at, r.key, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-6v %-5s allowed=%-5v remaining=%d retry-after=%v\n", r.at, r.key, d.Allowed, d.Remaining, d.RetryAfter)
	}
	fmt.Println("keys:", l.Stats().Keys)
	fmt.Println("swept at 2s:", l.Sweep(2*time.Second))
	// Output:
	// 0s     alice allowed=true  remaining=1 retry-after=0s
	// 0s     alice allowed=true  remaining=0 retry-after=0s
	// 0s     alice allowed=false remaining=0 retry-after=500ms
	// 0s     bob   allowed=true  remaining=1 retry-after=0s
	// 500ms  alice allowed=true  remaining=0 retry-after=0s
	// keys: 2
	// swept at 2s: 2
}
