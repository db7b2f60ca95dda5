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

// TestReadingWeighsTimingUncertainty: in an HTTP run, whose instants are
// send instants, an excess inside a span so close to W that the run's
// timing uncertainty may have stretched it is said to be within theory;
// one in a span shorter by more is ABOVE it, with both figures given.
func TestReadingWeighsTimingUncertainty(t *testing.T) {
	span := func(d time.Duration) *int64 { v := int64(d); return &v }
	for _, tc := range []struct {
		name  string
		span  *int64 // OverTheorySpanNS
		u     time.Duration
		above bool
		want  string
	}{
		{name: "jitter", span: span(999 * time.Millisecond), u: 2 * time.Millisecond,
			want: "within its theory: more than 150 only within 999ms, inside this run's 2ms timing uncertainty of W."},
		{name: "beyond the uncertainty", span: span(900 * time.Millisecond), u: 2 * time.Millisecond, above: true,
			want: "ABOVE its theory (more than 150 within 900ms, beyond this run's 2ms timing uncertainty)."},
		{name: "exact instants", span: span(999 * time.Millisecond), above: true, want: "ABOVE its theory."},
		{name: "an older result without the span", u: 2 * time.Millisecond, above: true, want: "ABOVE its theory."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := result.Run{Algorithm: "http", Backend: "127.0.0.1:1", Replicas: 1, MaxAdmittedInWindow: 151, TheoryMaxInWindow: 150,
				BurstRatio: 1.51, OverTheorySpanNS: tc.span, TimingUncertaintyNS: int64(tc.u)}
			r := &result.Result{Policy: result.PolicyJSON{Limit: 100, WindowNS: int64(time.Second), Burst: 50}, Runs: []result.Run{run}}
			if got := Reading(r)[0]; !strings.HasSuffix(got, tc.want) {
				t.Errorf("reading %q, want it to end %q", got, tc.want)
			}
			if got := run.AboveTheory(r.Policy.WindowNS); got != tc.above {
				t.Errorf("AboveTheory = %v, want %v", got, tc.above)
			}
			if got := rows(r)[0].Over; got != tc.above {
				t.Errorf("table row tinted %v, want %v", got, tc.above)
			}
		})
	}
}

func TestHeadersReading(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *result.HeaderStats
		want string
	}{
		{name: "none", h: nil, want: ""},
		{name: "nothing tested", h: &result.HeaderStats{}, want: ""},
		{name: "honest", h: &result.HeaderStats{RetryAfterChecked: 15, RemainingChecked: 40},
			want: "Retry-After was right 15 of 15 times tested; remaining agreed with what followed 40 of 40 times tested."},
		{name: "overstated and missing", h: &result.HeaderStats{RetryAfterChecked: 15, RetryAfterOverstated: 12, OverstatedFactor: 4, RejectedNoRetryAfter: 3},
			want: "Retry-After overstated the wait 12 of 15 times tested (4.0x, median); 3 rejections had no Retry-After."},
		{name: "too early and lying", h: &result.HeaderStats{RetryAfterChecked: 2, RetryAfterEarly: 2, RemainingChecked: 5, RemainingContradicted: 5},
			want: "Retry-After was too early 2 of 2 times tested (retried then, rejected again); remaining was contradicted 5 of 5 times tested (said some were left; the next request was rejected)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HeadersReading(tc.h); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
