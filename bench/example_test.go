package bench_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// everyOther is a user's own limiter: it admits every second request.
type everyOther struct {
	mu sync.Mutex
	n  int
}

func (e *everyOther) Allow(time.Duration, string, int64) (algorithms.Decision, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	return algorithms.Decision{Allowed: e.n%2 == 1}, nil
}

// A user's own limiter runs through the same workloads, engine and measures
// as the built-in ones.
func ExampleSimulate() {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := bench.Config{Policy: p, Workload: &workload.Constant{Rate: 400, Duration: 10 * time.Second, Keys: 1, Cost: 1}}
	mine := call.Target{Name: "every-other", Theory: p.Limit, New: func() (algorithms.Limiter, error) {
		return &everyOther{}, nil
	}}
	runs, err := bench.Simulate(context.Background(), cfg, []call.Target{mine})
	if err != nil {
		panic(err)
	}
	r := runs[0]
	fmt.Printf("%s: admitted %d of %d, burst ratio %.2f\n", r.Algorithm, r.Admitted, r.Offered, r.BurstRatio)
	// Output: every-other: admitted 2000 of 4000, burst ratio 2.00
}
