//go:build !race

package httpexec_test

import (
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// TestDoAllocs: on the fasthttp client Do allocates nothing of its own
// for a 200 or a 429 with Retry-After and RateLimit, and only the
// policy's string when asked for it. (The race detector allocates on its own: not under it.)
func TestDoAllocs(t *testing.T) {
	c, err := httpexec.New(httpexec.Config{URL: fastServer(t), KeyHeader: "X-Key"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name       string
		wantPolicy bool
		max        float64
	}{
		// The key set per request, the status, Retry-After and RateLimit read.
		{name: "plain", max: 0},
		// Response.Policy is a copy of the field.
		{name: "policy", wantPolicy: true, max: 1},
	} {
		i := 0
		allocs := testing.AllocsPerRun(500, func() {
			if r := c.Do(keys[i%len(keys)], tc.wantPolicy); r.Kind != httpexec.None || r.Status == 429 && r.RetryAfter != 7 || r.Quota != (httpexec.Quota{Remaining: 42, ResetAfter: 3e9}) {
				t.Fatalf("%+v", r)
			}
			i++
		})
		if allocs > tc.max {
			t.Errorf("%s: %v allocations per Do, want at most %v", tc.name, allocs, tc.max)
		}
	}
}
