package httpexec_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// Send requests with a key each to a server that admits key "a" and turns
// "b" away, and read what a rate-limit benchmark counts.
func ExampleClient_Do() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=10;w=60`)
		if r.Header.Get("X-Api-Key") == "b" {
			w.Header().Set("Retry-After", "6")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()

	c, err := httpexec.New(httpexec.Config{URL: srv.URL + "/api", KeyHeader: "X-Api-Key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for _, key := range []string{"a", "b"} {
		r := c.Do(key, true)
		p, _ := httpexec.ParsePolicy(r.Policy)
		fmt.Printf("%s: %d, Retry-After %d, %d per %v, sent %d, on %s\n", key, r.Status, r.RetryAfter, p.Limit, p.Window, r.Attempts, c.Name())
	}
	fmt.Println("connections:", c.Dials())
	// Output:
	// a: 200, Retry-After -1, 10 per 1m0s, sent 1, on fasthttp
	// b: 429, Retry-After 6, 10 per 1m0s, sent 1, on fasthttp
	// connections: 1
}

func ExampleParsePolicy() {
	p, ok := httpexec.ParsePolicy(`"default";q=100;w=60`)
	fmt.Println(p.Limit, p.Window, p.Burst, ok)
	// Output: 100 1m0s 100 true
}
