//go:build !race

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/result"
)

// headerServer limits to 50 per second with a burst of burst (a GCRA on
// the wall clock) and answers with rate-limit fields as lie tells it to.
func headerServer(t *testing.T, burst int64, lie func(w http.ResponseWriter, d algorithms.Decision)) string {
	t.Helper()
	g, err := algorithms.NewGCRA(algorithms.Policy{Limit: 50, Window: time.Second, Burst: burst})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	start := time.Now()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		d, _ := g.Allow(time.Since(start), "", 1)
		mu.Unlock()
		lie(w, d)
		if !d.Allowed {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestHeaderHonesty: an attack reports a Retry-After that overstates the
// wait, rejections without one, and a remaining count that lies.
func TestHeaderHonesty(t *testing.T) {
	for _, tc := range []struct {
		name  string
		burst int64
		lie   func(w http.ResponseWriter, d algorithms.Decision)
		check func(t *testing.T, h *result.HeaderStats, run result.Run)
	}{
		{name: "overstated Retry-After", burst: 1, lie: func(w http.ResponseWriter, d algorithms.Decision) {
			if !d.Allowed {
				w.Header().Set("Retry-After", "5") // a slot frees every 20ms
			}
		}, check: func(t *testing.T, h *result.HeaderStats, _ result.Run) {
			if h.RetryAfterOverstated == 0 || h.RetryAfterOverstated != h.RetryAfterChecked || h.OverstatedFactor < 10 {
				t.Errorf("overstated %d of %d, factor %.1f: want all, at least 10x", h.RetryAfterOverstated, h.RetryAfterChecked, h.OverstatedFactor)
			}
		}},
		{name: "no Retry-After", burst: 1, lie: func(http.ResponseWriter, algorithms.Decision) {},
			check: func(t *testing.T, h *result.HeaderStats, run result.Run) {
				if h.RejectedNoRetryAfter != run.Rejected || run.Rejected == 0 {
					t.Errorf("%d rejections without Retry-After of %d", h.RejectedNoRetryAfter, run.Rejected)
				}
			}},
		{name: "remaining lies", burst: 1, lie: func(w http.ResponseWriter, d algorithms.Decision) {
			w.Header().Set("X-RateLimit-Remaining", "10")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10))
		}, check: func(t *testing.T, h *result.HeaderStats, _ result.Run) {
			if h.RemainingContradicted == 0 || h.RemainingChecked < h.RemainingContradicted {
				t.Errorf("remaining contradicted %d of %d: want some", h.RemainingContradicted, h.RemainingChecked)
			}
		}},
		{name: "honest remaining", burst: 20, lie: func(w http.ResponseWriter, d algorithms.Decision) {
			w.Header().Set("RateLimit", `"default";r=`+strconv.FormatInt(d.Remaining, 10)+`;t=1`)
		}, check: func(t *testing.T, h *result.HeaderStats, _ result.Run) {
			if h.RemainingContradicted != 0 || h.RemainingChecked == 0 {
				t.Errorf("remaining contradicted %d of %d: want none of some", h.RemainingContradicted, h.RemainingChecked)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := headerServer(t, tc.burst, tc.lie)
			out := filepath.Join(t.TempDir(), "atk")
			code, _, stderr := attackCLI(t, context.Background(), "-url", url, "-rate", "200", "-duration", "1s",
				"-limit", "50", "-window", "1s", "-no-report", "-no-trace", "-out", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			run := res.Runs[0]
			if run.HTTP == nil || run.HTTP.Headers == nil {
				t.Fatal("no headers in result.json")
			}
			tc.check(t, run.HTTP.Headers, run)
		})
	}
}
