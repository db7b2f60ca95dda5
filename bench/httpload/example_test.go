//go:build !race

package httpload_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/httplimit"
	"github.com/ratebench/ratebench/bench/httpload"
	"github.com/ratebench/ratebench/workload"
)

// Attack a server that admits 5 requests per minute per client with 10
// requests at 100 per second: the first 5 pass, the others are told to
// come back in 12 seconds (W/L). The policy is read from the responses'
// RateLimit-Policy field.
func ExampleAttack() {
	mw, err := httplimit.New(httplimit.Config{Policy: algorithms.Policy{Limit: 5, Window: time.Minute}})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })))
	defer srv.Close()

	res, err := httpload.Attack(context.Background(), httpload.Config{
		URL:      srv.URL,
		Workload: workload.Spec{Name: "constant", Rate: 100, Duration: 100 * time.Millisecond},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	run := res.Run
	fmt.Printf("offered %d: admitted %d, rejected %d, errors %d\n", run.Offered, run.Admitted, run.Rejected, run.Errors)
	fmt.Println("statuses:", run.StatusCodes, "Retry-After (s):", run.HTTP.RetryAfterS)
	fmt.Printf("policy %d per %v from %s\n", res.Policy.Limit, res.Policy.Window, run.HTTP.PolicySource)
	// Output:
	// offered 10: admitted 5, rejected 5, errors 0
	// statuses: map[200:5 429:5] Retry-After (s): map[12:5]
	// policy 5 per 1m0s from RateLimit-Policy
}

func ExampleParsePolicy() {
	p, ok := httpload.ParsePolicy(`"default";q=100;w=60`)
	fmt.Println(p.Limit, p.Window, p.Burst, ok)
	// Output: 100 1m0s 100 true
}
