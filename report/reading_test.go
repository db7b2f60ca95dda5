package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/fit"
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

func TestAdvertisedReading(t *testing.T) {
	sec := int64(time.Second)
	bucket := &fit.Result{Best: result.Fit{Algorithm: "gcra", Limit: 50, WindowNS: sec, Burst: 21}}
	window := &fit.Result{Best: result.Fit{Algorithm: "fixed-window", Limit: 100, WindowNS: 60 * sec, Burst: 100}}
	served := func(p result.PolicyJSON, source string) *result.Result {
		return &result.Result{Policy: p, Runs: []result.Run{{HTTP: &result.HTTPStats{PolicySource: source}}}}
	}
	probed := func(p *result.PolicyJSON) *result.Result { return &result.Result{Probe: &result.Probe{Advertised: p}} }
	for _, tc := range []struct {
		name string
		r    *result.Result
		f    *fit.Result
		want string
	}{
		{name: "bucket, same rate in other words", r: served(result.PolicyJSON{Limit: 500, WindowNS: 10 * sec}, "RateLimit-Policy"), f: bucket,
			want: "It advertises 500 per 10s (RateLimit-Policy), which matches the fit."},
		{name: "bucket, twice the rate", r: probed(&result.PolicyJSON{Limit: 100, WindowNS: sec}), f: bucket,
			want: "It advertises 100 per 1s (RateLimit-Policy), which is not what it does."},
		{name: "window of another length", r: probed(&result.PolicyJSON{Limit: 100, WindowNS: 60 * sec}), f: window,
			want: "It advertises 100 per 1m0s (RateLimit-Policy), which matches the fit."},
		{name: "window, same rate but other window", r: probed(&result.PolicyJSON{Limit: 50, WindowNS: 30 * sec}), f: window,
			want: "It advertises 50 per 30s (RateLimit-Policy), which is not what it does."},
		{name: "policy from flags", r: served(result.PolicyJSON{Limit: 50, WindowNS: sec}, "config"), f: bucket},
		{name: "probe, nothing advertised", r: probed(nil), f: bucket},
		{name: "shaper", r: probed(&result.PolicyJSON{Limit: 50, WindowNS: sec}), f: &fit.Result{Shaper: true}},
	} {
		if got := AdvertisedReading(tc.r, tc.f); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestNoPolicyInventsNone: an HTTP run with no limit known says so, and
// shows no burst ratio, rather than one against a made-up limit.
func TestNoPolicyInventsNone(t *testing.T) {
	r := &result.Result{Policy: result.PolicyJSON{WindowNS: int64(time.Second)}, Runs: []result.Run{{
		Algorithm: "http", Offered: 100, Admitted: 100, MaxAdmittedInWindow: 51, MaxWindowSpanNS: 98e7, MaxWindowEndNS: 2e9, DisagreementPct: -1, JainFairness: 1,
		HTTP: &result.HTTPStats{PolicySource: "none"}}}}
	got := Reading(r)
	if len(got) != 1 || !strings.Contains(got[0], "admitted at most 51 within 980ms") || !strings.Contains(got[0], "no limit known") {
		t.Errorf("reading %q", got)
	}
	var b strings.Builder
	if err := Table(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Inf") || strings.Contains(b.String(), "0.00") {
		t.Errorf("table shows a ratio:\n%s", b.String())
	}
	if s := subtitle(r); !strings.HasPrefix(s, "no limit known") {
		t.Errorf("subtitle %q", s)
	}
}
