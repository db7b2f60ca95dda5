package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/httplimit"
)

// Protect a handler with 1 request per minute per client IP (a per-IP GCRA,
// the default limiter). The clock is fixed here so that the output does not
// depend on the wall clock; leave Now nil in a server.
func ExampleMiddleware() {
	mw, err := httplimit.New(httplimit.Config{
		Policy: algorithms.Policy{Limit: 1, Window: time.Minute},
		Now:    func() time.Duration { return 1_750_000_020 * time.Second },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") }))
	// In a server: http.ListenAndServe(":8080", h)

	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code)
		for _, k := range []string{"RateLimit-Policy", "RateLimit", "Retry-After", "Content-Type"} {
			if v := w.Header().Get(k); v != "" {
				fmt.Printf("%s: %s\n", k, v)
			}
		}
		fmt.Print(w.Body.String())
	}
	// Output:
	// 200
	// RateLimit-Policy: "default";q=1;w=60
	// RateLimit: "default";r=0;t=60
	// Content-Type: text/plain; charset=utf-8
	// hello
	// 429
	// RateLimit-Policy: "default";q=1;w=60
	// RateLimit: "default";r=0;t=60
	// Retry-After: 60
	// Content-Type: application/problem+json
	// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request quota exceeded","status":429,"detail":"quota of policy \"default\" (1 per 1m0s) exceeded; retry after 60 s","retry_after":60,"violated-policies":["default"]}
}
