//go:build !race

package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// TestProbeServe: probed, `ratebench serve` is found to run the algorithm
// it serves, with its policy (a bucket's rate within 1% and capacity
// within 1; a window's limit, length and phase), at least 99% of the
// scored requests predicted and at most 5% too close to call, within a
// minute and 10,000 requests.
func TestProbeServe(t *testing.T) {
	for _, tc := range []struct {
		algo         string
		limit, burst int64
	}{
		{algo: "gcra", limit: 50, burst: 20},
		{algo: "fixed-window", limit: 40},
		{algo: "sliding-log", limit: 30},
		{algo: "sliding-counter", limit: 60},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			args := []string{"-algo", tc.algo, "-limit", strconv.FormatInt(tc.limit, 10), "-window", "1s"}
			if tc.burst > 0 {
				args = append(args, "-burst", strconv.FormatInt(tc.burst, 10))
			}
			s := startServe(t, args...)
			dir := t.TempDir()
			out := filepath.Join(dir, "probe")
			start := time.Now()
			code, stdout, stderr := runCLI(t, dir, "probe", "-url", s.url, "-no-report", "-out", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			took := time.Since(start)
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			p := res.Probe
			if p == nil {
				t.Fatal("result.json has no probe")
			}
			b := p.Best
			t.Logf("%s in %v: %s", tc.algo, took.Round(time.Millisecond), p.Sentence)
			if b.AgreementPct < 99 || b.AmbiguousPct > 5 || b.CountsDenied {
				t.Errorf("best %s: %.2f%% predicted, %.2f%% too close to call; want >= 99%% and <= 5%%", b, b.AgreementPct, b.AmbiguousPct)
			}
			if tc.burst > 0 {
				rate := float64(b.Limit) / time.Duration(b.WindowNS).Seconds()
				if b.Algorithm != "gcra" || rate < 0.99*float64(tc.limit) || rate > 1.01*float64(tc.limit) || b.Burst < tc.burst-1 || b.Burst > tc.burst+1 {
					t.Errorf("best %s, want gcra of %d per 1s with a burst of %d", b, tc.limit, tc.burst)
				}
			} else {
				if b.Algorithm != tc.algo || b.Limit != tc.limit || b.WindowNS != int64(time.Second) {
					t.Errorf("best %s, want %s of %d per 1s", b, tc.algo, tc.limit)
				}
				// serve's windows start at whole seconds of the Unix clock.
				want := (int64(time.Second) - res.Runs[0].StartUnixNS%int64(time.Second)) % int64(time.Second)
				if d := (b.PhaseNS - want + 1e9 + 5e8) % 1e9; tc.algo != "sliding-log" && (d < 5e8-5e6 || d > 5e8+5e6) {
					t.Errorf("phase %v, want %v (windows on the Unix second) within 5ms", time.Duration(b.PhaseNS), time.Duration(want))
				}
			}
			if p.Requests > 10000 || took > time.Minute {
				t.Errorf("%d requests in %v: want at most 10,000 within a minute", p.Requests, took)
			}
			if !strings.Contains(stdout, "The service behaves like "+b.Algorithm) {
				t.Errorf("stdout:\n%s", stdout)
			}
		})
	}
}
