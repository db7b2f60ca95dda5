//go:build !race

package httpexec_test

import (
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// TestDoAllocs: on the fasthttp client Do allocates nothing of its own
// for a 200 or a 429 with Retry-After and RateLimit, and only the
// policy's string when asked for it; from several source addresses as
// from one. (The race detector allocates on its own: not under it.)
func TestDoAllocs(t *testing.T) {
	url := fastServer(t)
	for _, sources := range []int{0, 3} {
		cfg := httpexec.Config{URL: url, KeyHeader: "X-Key"}
		if sources > 0 {
			cfg.SourceAddrs = loopbackSources(t, sources)
		}
		c, err := httpexec.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range keys[:max(sources, 1)] { // a connection from each source, before counting
			if r := c.Do(key, false); r.Kind != httpexec.None {
				t.Fatalf("%+v", r)
			}
		}
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
				t.Errorf("%d sources, %s: %v allocations per Do, want at most %v", sources, tc.name, allocs, tc.max)
			}
		}
		c.Close()
	}
}
