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

func ExampleOnFull() {
	// 1 request per second per key, in a table of two keys (one shard).
	p := algorithms.Policy{Limit: 1, Window: time.Second}
	newGCRA := func(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }
	for _, onFull := range []keyed.OnFull{keyed.Reject, keyed.EvictLossy} {
		l, err := keyed.New(p, newGCRA, keyed.Options{MaxKeys: 2, OnFull: onFull})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(onFull)
		for _, r := range []struct {
			at  time.Duration
			key string
		}{
			{0, "alice"},
			{0, "alice"},                      // used up: full again at 1s
			{250 * time.Millisecond, "bob"},   // full again at 1.25s
			{500 * time.Millisecond, "eve"},   // a third key, and no key can go before 1s
			{500 * time.Millisecond, "alice"}, // still used up, unless she was evicted
			{time.Second, "eve"},              // alice is full again: eve takes her slot
		} {
			d, err := l.Allow(r.at, r.key, 1)
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("  %-6v %-5s allowed=%-5v table-full=%-5v retry-after=%v\n", r.at, r.key, d.Allowed, d.TableFull, d.RetryAfter)
		}
		fmt.Printf("  %+v\n", l.Stats())
	}
	// Output:
	// reject
	//   0s     alice allowed=true  table-full=false retry-after=0s
	//   0s     alice allowed=false table-full=false retry-after=1s
	//   250ms  bob   allowed=true  table-full=false retry-after=0s
	//   500ms  eve   allowed=false table-full=true  retry-after=500ms
	//   500ms  alice allowed=false table-full=false retry-after=500ms
	//   1s     eve   allowed=true  table-full=false retry-after=0s
	//   {Keys:2 Evictions:1 LossyEvictions:0 TableFull:1}
	// evict-lossy
	//   0s     alice allowed=true  table-full=false retry-after=0s
	//   0s     alice allowed=false table-full=false retry-after=1s
	//   250ms  bob   allowed=true  table-full=false retry-after=0s
	//   500ms  eve   allowed=true  table-full=false retry-after=0s
	//   500ms  alice allowed=true  table-full=false retry-after=0s
	//   1s     eve   allowed=false table-full=false retry-after=500ms
	//   {Keys:2 Evictions:2 LossyEvictions:2 TableFull:0}
}
