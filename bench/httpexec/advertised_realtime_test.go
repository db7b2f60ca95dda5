//go:build !race

package httpexec_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/result"
)

// TestExecutorLimitFromServer: a limit advertised without RateLimit-Policy
// (X-RateLimit-Limit, or draft 07's RateLimit-Policy) is the run's, with
// the window the field or the config gives; a limit alone, with no window
// given, is no policy.
func TestExecutorLimitFromServer(t *testing.T) {
	server := func(name, value string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Header().Set(name, value) }))
		t.Cleanup(s.Close)
		return s.URL
	}
	xLimit := server("X-RateLimit-Limit", "40")
	draft7 := server("RateLimit-Policy", "25;w=5")
	eachClient(t, func(t *testing.T, client string) {
		for _, tc := range []struct {
			name       string
			url        string
			window     time.Duration // given in the config
			wantLimit  int64
			wantWindow time.Duration
			wantSource string
		}{
			{name: "X-RateLimit-Limit with -window", url: xLimit, window: 2 * time.Second, wantLimit: 40, wantWindow: 2 * time.Second, wantSource: result.PolicyFromBoth},
			{name: "X-RateLimit-Limit alone", url: xLimit, wantWindow: time.Second, wantSource: result.PolicyNone},
			{name: "draft 07 RateLimit-Policy", url: draft7, wantLimit: 25, wantWindow: 5 * time.Second, wantSource: result.PolicyFromServer},
		} {
			lcfg := constant(200, 100*time.Millisecond, 1)
			lcfg.Policy.Window = tc.window
			run, pol := attack(t, httpexec.Config{URL: tc.url, Client: client}, lcfg)
			if pol.Limit != tc.wantLimit || pol.Window != tc.wantWindow || run.HTTP.PolicySource != tc.wantSource {
				t.Errorf("%s: policy %+v from %q, want %d per %v from %q", tc.name, pol, run.HTTP.PolicySource, tc.wantLimit, tc.wantWindow, tc.wantSource)
			}
		}
	})
}
