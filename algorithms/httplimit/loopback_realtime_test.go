//go:build !race

package httplimit_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/httplimit"
)

// TestLoopback: the headers and the problem body survive a real HTTP/1.1
// round trip, and the peer is keyed by its loopback address.
func TestLoopback(t *testing.T) {
	lim := &fakeLimiter{d: algorithms.Decision{RetryAfter: 1500 * time.Millisecond, ResetAfter: time.Minute}}
	m := mustNew(t, httplimit.Config{Policy: algorithms.Policy{Limit: 5, Window: time.Minute}, Limiter: lim})
	srv := httptest.NewServer(m.Wrap(&hello{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	if _, err := io.Copy(&body, resp.Body); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d|%s|%s|%s|%s", resp.StatusCode, resp.Header.Get("RateLimit-Policy"), resp.Header.Get("RateLimit"),
		resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
	if want := `429|"default";q=5;w=60|"default";r=0;t=2|2|application/problem+json`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !strings.Contains(body.String(), `"retry_after":2,`) {
		t.Errorf("body %s", body.String())
	}
	if fmt.Sprint(lim.keys) != "[127.0.0.1]" {
		t.Errorf("keys %v, want [127.0.0.1]", lim.keys)
	}
	if lim.nows[0] <= 0 {
		t.Errorf("default clock gave %v, want the time since the Unix epoch", lim.nows[0])
	}
}
