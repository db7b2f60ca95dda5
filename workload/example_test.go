package workload_test

import (
	"fmt"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// ExampleNew prints the first arrivals of a constant stream: 4 per second
// over 2 keys, round-robin.
func ExampleNew() {
	st, err := workload.New(workload.Spec{Name: "constant", Rate: 4, Duration: time.Second, Keys: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for a, ok := st.Next(); ok; a, ok = st.Next() {
		fmt.Println(a.At, a.Key, a.Cost)
	}
	fmt.Println("err:", st.Err())
	// Output:
	// 0s k0 1
	// 250ms k1 1
	// 500ms k0 1
	// 750ms k1 1
	// err: <nil>
}

// ExampleSpec_Params shows the workload parameters recorded in result.json.
func ExampleSpec_Params() {
	s := workload.Spec{Name: "boundary", Limit: 100, Window: time.Second, Duration: time.Minute}
	p := s.Params()
	fmt.Println(p["name"], p["limit"], p["window_ns"], p["edge_ns"], p["every_windows"])
	// Output:
	// boundary 100 1000000000 10000000 2
}

// ExampleNames lists the generators as `ratebench list` would.
func ExampleNames() {
	for _, n := range workload.Names() {
		fmt.Printf("%-9s %s\n", n, workload.Describe(n))
	}
	// Output:
	// constant  evenly spaced arrivals, rate per second, keys round-robin
	// poisson   Poisson process: exponential gaps with mean 1/rate, keys uniform at random (seeded)
	// burst     N arrivals at the same instant every T (default 10 every 1s), or rate during On then silence during Off
	// boundary  limit arrivals just before a window edge and limit just after it, every 2 windows by default (lets a fixed window through 2L)
	// ramp      deterministic arrivals whose rate changes linearly from rate to rate-end over the duration
	// zipf      Poisson arrivals at rate, keys drawn Zipf(s) over K keys, k0 the most popular (seeded)
	// replay    replay:FILE replays a trace: CSV with header at_ns,key,cost, or JSON lines with the same fields
}

// ExampleArrivals hands an engine a schedule built in memory: a burst of
// three at once, then one 100ms later.
func ExampleArrivals() {
	var src workload.Source = &workload.Arrivals{Name: "burst-then-one", Keys: 1, Length: 200 * time.Millisecond,
		List: []workload.Arrival{{At: 0, Key: "k0", Cost: 1}, {At: 0, Key: "k0", Cost: 1}, {At: 0, Key: "k0", Cost: 1}, {At: 100 * time.Millisecond, Key: "k0", Cost: 1}}}
	st, err := src.Open(workload.Shard{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for a, ok := st.Next(); ok; a, ok = st.Next() {
		fmt.Println(a.At, a.Key)
	}
	fmt.Println(src.Record()["arrivals"], src.Span())
	// Output:
	// 0s k0
	// 0s k0
	// 0s k0
	// 100ms k0
	// 4 200ms
}

// ExampleConstant opens a constant workload built as a type, without a
// Spec: 4 arrivals per second over 2 keys, round-robin.
func ExampleConstant() {
	src := &workload.Constant{Rate: 4, Duration: time.Second, Keys: 2, Cost: 1}
	st, err := src.Open(workload.Shard{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for a, ok := st.Next(); ok; a, ok = st.Next() {
		fmt.Println(a.At, a.Key, a.Cost)
	}
	fmt.Println(src.Record()["name"], src.Span())
	// Output:
	// 0s k0 1
	// 250ms k1 1
	// 500ms k0 1
	// 750ms k1 1
	// constant 1s
}

// ExampleSpec_Source resolves a Spec, as flags and scenario files write
// it, into its generator's type, whose defaults are filled in.
func ExampleSpec_Source() {
	src, err := workload.Spec{Name: "boundary", Limit: 100, Window: time.Second, Duration: time.Minute}.Source()
	if err != nil {
		fmt.Println(err)
		return
	}
	b := src.(*workload.Boundary)
	fmt.Println(b.Limit, b.Edge, b.EveryWindows, b.Align)
	// Output:
	// 100 10ms 2 epoch
}
