package corpus

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

func TestCheck(t *testing.T) {
	bucket := Truth{Algorithms: Buckets(), Limit: 20, Window: time.Second, Burst: 7, Scope: result.ScopeSource,
		CountsDenied: ptr(false), RejectStatus: 429, RateOnly: true}
	window := Truth{Algorithms: []string{"fixed-window"}, Limit: 40, Window: 1500 * time.Millisecond,
		Phase: ptr(time.Duration(0)), Scope: result.ScopeSource, RejectStatus: 429}
	outside := Truth{Limit: 40, Window: time.Second, Scope: result.ScopeSource, RejectStatus: 429, Outside: true}
	// gcra is the fit of bucket from four addresses, right in all.
	gcra := result.Fit{Algorithm: "gcra", Limit: 20, WindowNS: int64(time.Second), Burst: 7, Scope: result.ScopeSource,
		CountsDenied: ptr(false), AgreementPct: 99.5, AmbiguousPct: 1}
	// fixed is the fit of window from four addresses, right in all.
	fixed := result.Fit{Algorithm: "fixed-window", Limit: 40, WindowNS: int64(1500 * time.Millisecond), Burst: 40,
		UnixPhaseNS: ptr(int64(0)), Scope: result.ScopeSource, AgreementPct: 100}
	with := func(f result.Fit, change func(*result.Fit)) result.Fit { change(&f); return f }
	for _, tc := range []struct {
		name       string
		truth      Truth
		best       result.Fit
		sources    int
		confidence string
		statuses   []int
		offered    int64
		wall       time.Duration
		u          time.Duration // the probe's timing uncertainty
		want       []string      // the criteria that fail, in Check's order
	}{
		{
			// The reference: every criterion holds.
			name: "a right bucket", truth: bucket, best: gcra, sources: 4,
		},
		{
			// A window found with its limit, length and phase.
			name: "a right window", truth: window, best: fixed, sources: 4,
		},
		{
			// The fit may name a model outside the truth's list if it
			// says it decides as one in it.
			name: "an equivalent model is right", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.Algorithm, f.Equivalent = "other", []string{"other", "fixed-window"} }),
		},
		{
			// A sliding log is not a fixed window; and it has no phase.
			name: "a wrong model", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.Algorithm, f.UnixPhaseNS = "sliding-log", nil }),
			want: []string{"model", "phase"},
		},
		{
			// A bucket's capacity must be exact.
			name: "a capacity one too many", truth: bucket, sources: 4,
			best: with(gcra, func(f *result.Fit) { f.Burst = 8 }),
			want: []string{"capacity"},
		},
		{
			// 20.4 per second is 2% off.
			name: "a rate 2% off", truth: bucket, sources: 4,
			best: with(gcra, func(f *result.Fit) { f.Limit, f.WindowNS = 204, int64(10*time.Second) }),
			want: []string{"rate"},
		},
		{
			// The same rate at another window is right for a bucket.
			name: "a bucket's rate at another window", truth: bucket, sources: 4,
			best: with(gcra, func(f *result.Fit) { f.Limit, f.WindowNS = 1200, int64(time.Minute) }),
		},
		{
			// The same rate at another window is wrong for a window.
			name: "a window's rate at another window", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.Limit, f.WindowNS = 80, int64(3*time.Second) }),
			want: []string{"limit", "window"},
		},
		{
			// 1.49s is within 1% of 1.5s; the rate follows it.
			name: "a window 0.7% short", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.WindowNS = int64(1490 * time.Millisecond) }),
		},
		{
			// 1ms before the edge is 1ms from a phase of 0.
			name: "a phase across the edge", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.UnixPhaseNS = ptr(int64(1499 * time.Millisecond)) }),
		},
		{
			// 10ms is beyond the 5ms allowed.
			name: "a phase 10ms off", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.UnixPhaseNS = ptr(int64(10 * time.Millisecond)) }),
			want: []string{"phase"},
		},
		{
			// Answers that took up to 12ms place an edge no better than
			// that: 10ms off is as close as the probe could see.
			name: "a phase 10ms off, answers of 12ms", truth: window, sources: 4, u: 12 * time.Millisecond,
			best: with(fixed, func(f *result.Fit) { f.UnixPhaseNS = ptr(int64(10 * time.Millisecond)) }),
		},
		{
			// From one address a per-address limit is one limit.
			name: "one address sees global", truth: bucket, sources: 1,
			best: with(gcra, func(f *result.Fit) { f.Scope = result.ScopeGlobal }),
		},
		{
			// ... and "source" cannot come of one address.
			name: "source from one address", truth: bucket, sources: 1, best: gcra,
			want: []string{"scope"},
		},
		{
			// From four addresses a per-address limit must be found.
			name: "global from four addresses", truth: bucket, sources: 4,
			best: with(gcra, func(f *result.Fit) { f.Scope = result.ScopeGlobal }),
			want: []string{"scope"},
		},
		{
			// A fixed window decides alike whether it counts denied
			// requests or not: the fit must not say.
			name: "counts denied claimed where no trace can tell", truth: window, sources: 4,
			best: with(fixed, func(f *result.Fit) { f.CountsDenied = ptr(false) }),
			want: []string{"counts denied"},
		},
		{
			// A bucket's trace tells: a sure fit must say.
			name: "counts denied not said where the trace tells", truth: bucket, sources: 4, confidence: result.Sure,
			best: with(gcra, func(f *result.Fit) { f.CountsDenied = nil }),
			want: []string{"counts denied"},
		},
		{
			// Unsure (a group of models that count and that do not), it
			// may say it cannot tell, but never the wrong answer.
			name: "counts denied unknown from an unsure verdict", truth: bucket, sources: 4, confidence: result.Unsure,
			best: with(gcra, func(f *result.Fit) { f.CountsDenied = nil }),
		},
		{
			// 98.9% is below 99%, and 5.1% too close to call above 5%.
			name: "agreement and ambiguity", truth: bucket, sources: 4,
			best: with(gcra, func(f *result.Fit) { f.AgreementPct, f.AmbiguousPct = 98.9, 5.1 }),
			want: []string{"agreement"},
		},
		{
			// 503 is not the truth's 429, nor is a second status.
			name: "reject status", truth: bucket, best: gcra, sources: 4, statuses: []int{429, 503},
			want: []string{"reject status"},
		},
		{
			// Past both bounds.
			name: "requests and wall time", truth: bucket, best: gcra, sources: 4, offered: MaxRequests + 1, wall: MaxWall + time.Second,
			want: []string{"requests", "wall time"},
		},
		{
			// No model explains it, and the probe says so.
			name: "an outsider found unexplained", truth: outside, sources: 4, confidence: result.Unexplained,
			best: with(fixed, func(f *result.Fit) { f.AgreementPct = 80 }),
		},
		{
			// ... or only doubts the model it found.
			name: "an outsider found unsure", truth: outside, sources: 4, confidence: result.Unsure,
			best: with(fixed, func(f *result.Fit) { f.AgreementPct = 98 }),
			want: []string{"confidence"},
		},
		{
			// ... or says it is sure of a model.
			name: "an outsider found sure", truth: outside, sources: 4, confidence: result.Sure, best: fixed,
			want: []string{"confidence"},
		},
		{
			// ... or says nothing of its confidence.
			name: "an outsider without a confidence", truth: outside, sources: 4, best: fixed,
			want: []string{"confidence"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statuses := tc.statuses
			if statuses == nil {
				statuses = []int{429}
			}
			offered := tc.offered
			if offered == 0 {
				offered = 1000
			}
			res := &result.Result{Runs: []result.Run{{Offered: offered}},
				Probe: &result.Probe{Best: tc.best, RejectStatuses: statuses, Confidence: tc.confidence, UncertaintyNS: int64(tc.u)}}
			fails := Check(tc.truth, Run{Result: res, Sources: tc.sources, Wall: tc.wall})
			var got []string
			for _, f := range fails {
				criterion, _, _ := strings.Cut(f, ":")
				got = append(got, criterion)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("failed %q, want %q:\n%s", got, tc.want, strings.Join(fails, "\n"))
			}
		})
	}
}

func TestTruthString(t *testing.T) {
	for _, tc := range []struct {
		name  string
		truth Truth
		want  string
	}{
		{
			// A bucket says its capacity and what it counts.
			name:  "bucket",
			truth: Truth{Algorithms: []string{"gcra", "x-rate"}, Limit: 20, Window: time.Second, Burst: 7, Scope: result.ScopeSource, CountsDenied: ptr(false), RejectStatus: 429, RateOnly: true},
			want:  "gcra/x-rate of 20 per 1s with a burst of 7, per client address, denied not counted, 429",
		},
		{
			// A window on the clock says where it starts; nothing of
			// denied requests when no trace can tell.
			name:  "window on the clock",
			truth: Truth{Algorithms: []string{"httprate"}, Limit: 50, Window: time.Second, Phase: ptr(312 * time.Millisecond), Scope: result.ScopeSource, RejectStatus: 429},
			want:  "httprate of 50 per 1s, windows 312ms after each multiple of 1s of the Unix clock, per client address, 429",
		},
		{
			// An outsider names no model.
			name:  "outsider",
			truth: Truth{Limit: 40, Window: time.Second, Scope: result.ScopeGlobal, CountsDenied: ptr(true), RejectStatus: 503, Outside: true},
			want:  "no model of 40 per 1s, for all clients together, denied counted, 503",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.truth.String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
