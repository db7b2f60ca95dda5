package fit_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench/fit"
)

// A limiter's decisions, seen from outside as sent and answered requests,
// name the limiter and its policy.
func ExampleRun() {
	e, _ := all.Lookup("sliding-log")
	lim, _ := e.New(algorithms.Policy{Limit: 20, Window: time.Second})
	rng := rand.New(rand.NewPCG(1, 2))
	var reqs []fit.Request
	for at := time.Duration(0); at < 10*time.Second; at += time.Duration(rng.ExpFloat64() / 60 * 1e9) {
		// Poisson arrivals at 60 per second: three times the limit.
		d, _ := lim.Allow(at, "k", 1)
		reqs = append(reqs, fit.Request{Sent: at, Done: at + time.Millisecond, Key: "k", Admitted: d.Allowed})
	}
	res, _ := fit.Run(reqs, fit.Options{})
	fmt.Println("The service " + res.Sentence())
	// Output:
	// The service behaves like sliding-log of 20 per 1s; 100.0% of 625 requests predicted, 1.8% too close to call; denied requests not counted; the scope cannot be told from one client
}
