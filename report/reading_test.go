package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
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
		{name: "honest", h: &result.HeaderStats{RetryAfterChecked: 15, RemainingChecked: 40, ResetChecked: 3},
			want: "Retry-After was right 15 of 15 times tested; remaining agreed with what followed 40 of 40 times tested; reset agreed with what followed 3 of 3 times tested."},
		{name: "overstated and missing", h: &result.HeaderStats{RetryAfterChecked: 15, RetryAfterOverstated: 12, OverstatedFactor: 4, RejectedNoRetryAfter: 3},
			want: "Retry-After overstated the wait 12 of 15 times tested (4.0x, median); not checked: 3 rejections without Retry-After."},
		{name: "too early and lying", h: &result.HeaderStats{RetryAfterChecked: 2, RetryAfterEarly: 2, RemainingChecked: 5, RemainingContradicted: 5, ResetChecked: 4, ResetContradicted: 1},
			want: "Retry-After was too early 2 of 2 times tested (the key waited, retried then, and was rejected again); " +
				"remaining was contradicted 5 of 5 times tested (said n were left; a later request was rejected before n could have been admitted); " +
				"reset was contradicted 1 of 4 times tested (the key waited past it and was rejected again)."},
		{name: "skipped only", h: &result.HeaderStats{RejectedNoRetryAfter: 412, AnsweredNoRemaining: 30, RejectedNoReset: 412},
			want: "not checked: 412 rejections without Retry-After, 30 answers without remaining, 412 rejections without reset."},
		{name: "untested", h: &result.HeaderStats{RemainingChecked: 9, RemainingUntested: 1200},
			want: "remaining agreed with what followed 9 of 9 times tested; not checked: 1,200 remaining counts that what followed could not test."},
		{name: "untested of each", h: &result.HeaderStats{RejectedNoRetryAfter: 2, RetryAfterUntested: 15, RemainingUntested: 1200, ResetUntested: 8},
			want: "not checked: 2 rejections without Retry-After, 15 Retry-After values, 1,200 remaining counts and 8 resets that what followed could not test."},
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
		{name: "unsure fit, another rate", r: probed(&result.PolicyJSON{Limit: 10000, WindowNS: sec}),
			f:    &fit.Result{Best: result.Fit{Algorithm: "fixed-window", Limit: 9796, WindowNS: 994e6, Burst: 9796}, Confidence: result.Unsure},
			want: "It advertises 10000 per 1s (RateLimit-Policy), which the fit, being unsure, neither confirms nor rules out."},
		{name: "unsure fit, same rate", r: probed(&result.PolicyJSON{Limit: 50, WindowNS: sec}), f: &fit.Result{Best: bucket.Best, Confidence: result.Unsure},
			want: "It advertises 50 per 1s (RateLimit-Policy), which matches the fit."},
		{name: "no model explains it", r: probed(&result.PolicyJSON{Limit: 40, WindowNS: sec}), f: &fit.Result{Best: window.Best, Confidence: result.Unexplained},
			want: "It advertises 40 per 1s (RateLimit-Policy), which the fit cannot check: no model explains what it does."},
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

// TestReadingRounds: the durations of a reading have three significant
// digits, a sim's instants a nanosecond off round ones and a live run's
// clock readings alike; a span just under W keeps the digits that tell
// it from W.
func TestReadingRounds(t *testing.T) {
	ns := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name      string
		span, end int64
		live      bool
		over      *int64 // OverTheorySpanNS
		u         time.Duration
		want      string
	}{
		{name: "sim", span: 19999999, end: 1009999999, want: "within 20ms around t=1.01s; theory 2.00x, within its theory."},
		{name: "sim, a third of a millisecond", span: 993333333, end: 2993333333, want: "within 993ms around t=2.99s;"},
		{name: "sim, exact", span: int64(9 * time.Millisecond), end: int64(999 * time.Millisecond), want: "within 9ms around t=999ms;"},
		{name: "live", span: 999061812, end: 1002958417, live: true, want: "within 999ms around t=1s;"},
		{name: "live, long run", span: 12345678, end: 83456789012, live: true, want: "within 12.3ms around t=1m23.5s;"},
		{name: "just under W", span: 999700001, end: 1500000000, want: "within 999.7ms around t=1.5s;"},
		{name: "within the uncertainty", span: 999700001, end: 1500000000, over: ns(999960001), u: 1234567,
			want: "more than 2000 only within 999.96ms, inside this run's 1.23ms timing uncertainty of W."},
		{name: "beyond the uncertainty", span: 999700001, end: 1500000000, over: ns(993333333), u: 1234567,
			want: "ABOVE its theory (more than 2000 within 993ms, beyond this run's 1.23ms timing uncertainty)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := result.Run{Algorithm: "gcra", MaxAdmittedInWindow: 2000, BurstRatio: 2, TheoryMaxInWindow: 2000,
				MaxWindowSpanNS: tc.span, MaxWindowEndNS: tc.end, OverTheorySpanNS: tc.over, TimingUncertaintyNS: int64(tc.u)}
			if tc.over != nil {
				run.MaxAdmittedInWindow, run.TheoryMaxInWindow = 2001, 2000
			}
			if tc.live {
				run.Live = &result.LiveStats{}
			}
			r := &result.Result{Policy: result.PolicyJSON{Limit: 1000, WindowNS: int64(time.Second), Burst: 1000}, Runs: []result.Run{run}}
			if got := Reading(r)[0]; !strings.Contains(got, tc.want) {
				t.Errorf("reading %q, want it to contain %q", got, tc.want)
			}
			if tc.over != nil {
				return
			}
			r.Policy.Limit = 0 // no limit known: the same durations
			if got, want := Reading(r)[0], strings.TrimSuffix(strings.SplitAfter(tc.want, ";")[0], ";"); !strings.Contains(got, want) {
				t.Errorf("reading without a limit %q, want it to contain %q", got, want)
			}
		})
	}
}

func TestRoundDigits(t *testing.T) {
	for _, tc := range []struct{ d, want time.Duration }{
		{0, 0}, {999, 999}, {1000, 1000}, {1005, 1010}, {19999999, 20 * time.Millisecond},
		{1009999999, 1010 * time.Millisecond}, {-1234567, -1230000}, {time.Hour + time.Second, time.Hour},
	} {
		if got := Round3(tc.d); got != tc.want {
			t.Errorf("Round3(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// TestSubtitleCountsRuns: "1 run", "2 runs".
func TestSubtitleCountsRuns(t *testing.T) {
	r := &result.Result{Policy: result.PolicyJSON{Limit: 100, WindowNS: int64(time.Second), Burst: 100}, Runs: []result.Run{{Algorithm: "gcra"}}}
	if s := subtitle(r); !strings.Contains(s, "; 1 run") || strings.Contains(s, "1 runs") {
		t.Errorf("subtitle of one run %q", s)
	}
	r.Runs = append(r.Runs, result.Run{Algorithm: "fixed-window"})
	if s := subtitle(r); !strings.Contains(s, "; 2 runs") {
		t.Errorf("subtitle of two runs %q", s)
	}
}

// TestDisagreementExplained: under the summary table of report.html, and
// under the differences on compare.html, one line says what disagreement
// measures and why a bucket's or a window's is high.
func TestDisagreementExplained(t *testing.T) {
	r := resulttest.Fixture()
	page, err := renderHTML(r, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := compareHTML(r, resulttest.Fixture(), nil, CompareOptions{NameA: "a", NameB: "b"})
	if err != nil {
		t.Fatal(err)
	}
	const line = "<p class=\"sub\">Disagree % is the share of decisions that differ from those of the exact sliding log of the same policy"
	for name, p := range map[string]string{"report.html": string(page), "compare.html": string(cmp)} {
		if n := strings.Count(p, line); n != 1 {
			t.Errorf("%s has the line on disagreement %d times, want once", name, n)
		}
		if !strings.Contains(p, "a bucket's burst B admits what the log refuses") || !strings.Contains(p, "a window does so at its edges") {
			t.Errorf("%s does not say when disagreement is high", name)
		}
	}
	if i, j := strings.Index(string(page), "</table>"), strings.Index(string(page), line); j < i {
		t.Error("report.html explains disagreement before the summary table")
	}
}

// TestMergeSaid: a merged page says whether it is the shards of one
// schedule read as one run or a plain sum of runs, in its subtitle and in
// its metadata, with how exact its most admitted in any W is and how far
// apart the hosts' clocks were.
func TestMergeSaid(t *testing.T) {
	for _, tc := range []struct {
		name     string
		info     result.MergeInfo
		subtitle string
		meta     []string
	}{
		{name: "traced shards on one host", info: result.MergeInfo{Inputs: 3, Shards: 3, Traced: true},
			subtitle: "3 shards merged as one run", meta: []string{"one run of 3 generators", "recounted"}},
		{name: "shards on hosts with clock errors", info: result.MergeInfo{Inputs: 2, Shards: 2, Traced: true, ClockErrorNS: 1234567},
			subtitle: "2 shards merged as one run", meta: []string{"up to 1.23ms apart"}},
		{name: "shards on hosts of unknown clocks", info: result.MergeInfo{Inputs: 2, Shards: 2, ClockErrorNS: -1},
			subtitle: "2 shards merged as one run", meta: []string{"lower bound", "unknown"}},
		{name: "a plain sum", info: result.MergeInfo{Inputs: 2},
			subtitle: "a plain sum of 2 runs", meta: []string{"not shards of one schedule", "lower bound"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resulttest.Fixture()
			r.Meta.Merge = &tc.info
			if s := subtitle(r); !strings.Contains(s, tc.subtitle) {
				t.Errorf("subtitle %q, want %q", s, tc.subtitle)
			}
			page, err := renderHTML(r, nil, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.meta {
				if !strings.Contains(string(page), want) {
					t.Errorf("page does not say %q", want)
				}
			}
		})
	}
	if s := subtitle(resulttest.Fixture()); strings.Contains(s, "merged") || strings.Contains(s, "sum") {
		t.Errorf("subtitle of a run that is no merge %q", s)
	}
}
