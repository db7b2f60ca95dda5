package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// TestReadingSaysWhyAboveTheory: a run above its theory because a
// fail-open policy admitted failed decisions, or because a key table
// forgot state, says so instead of blaming the algorithm.
func TestReadingSaysWhyAboveTheory(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  result.Run
		want string
	}{
		// Redis down, -fail-open: the overshoot is the admitted errors.
		{"fail open", result.Run{FailOpen: true, Errors: 40}, "ABOVE its theory, because 40 failed decisions were admitted by the fail-open policy."},
		// Failing closed cannot overshoot: no reason is invented.
		{"fail closed", result.Run{Errors: 40}, "ABOVE its theory."},
		// A lossy key table gave forgotten keys a fresh quota.
		{"lossy", result.Run{LossyEvictions: 7}, "ABOVE its theory, because the key table forgot the state of 7 keys."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			run.Algorithm, run.Backend, run.Replicas = "gcra", "redis", 1
			run.MaxAdmittedInWindow, run.TheoryMaxInWindow, run.BurstRatio = 260, 200, 2.6
			r := &result.Result{Policy: result.PolicyJSON{Limit: 100, WindowNS: int64(time.Second), Burst: 100}, Runs: []result.Run{run}}
			if got := Reading(r)[0]; !strings.HasSuffix(got, tc.want) {
				t.Errorf("reading %q, want it to end %q", got, tc.want)
			}
		})
	}
}
