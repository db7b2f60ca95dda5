package fit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
)

func TestParseExpectation(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want fit.Expectation
		bad  bool
	}{
		{in: "gcra 100/1s burst 20 per client-address", want: fit.Expectation{Algorithm: "gcra", Limit: 100, Window: time.Second, Burst: 20, Scope: fit.ScopeSource}},
		// Parts may be left out, and case does not matter.
		{in: "100/1s", want: fit.Expectation{Limit: 100, Window: time.Second}},
		{in: "Fixed-Window 40/1500ms", want: fit.Expectation{Algorithm: "fixed-window", Limit: 40, Window: 1500 * time.Millisecond}},
		// A unit alone is one of it; an alias of the bucket family is a name.
		{in: "x-rate 90/m per key", want: fit.Expectation{Algorithm: "x-rate", Limit: 90, Window: time.Minute, Scope: fit.ScopeKey}},
		{in: "per client address", want: fit.Expectation{Scope: fit.ScopeSource}},
		{in: "for all clients", want: fit.Expectation{Scope: fit.ScopeGlobal}},
		{in: "", bad: true},                // nothing expected is a mistake, not a pass
		{in: "gcar 100/1s", bad: true},     // not a model
		{in: "100/soon", bad: true},        // not a window
		{in: "0/1s", bad: true},            // no limit
		{in: "gcra burst", bad: true},      // a burst without its number
		{in: "per planet", bad: true},      // not a scope
		{in: "100/1s burst -3", bad: true}, // a burst below 1
	} {
		got, err := fit.ParseExpectation(tc.in)
		switch {
		case tc.bad && !errors.Is(err, fit.ErrBadExpectation):
			t.Errorf("%q: %+v, %v; want a bad expectation", tc.in, got, err)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestExpectationCheck(t *testing.T) {
	no := false
	bucket := fit.Fit{Algorithm: "gcra", Limit: 100, WindowNS: int64(time.Second), Burst: 20, Scope: fit.ScopeSource,
		CountsDenied: &no, Equivalent: []string{"gcra", "token-bucket", "leaky-bucket", "x-rate", "nginx-limit-req"}}
	window := fit.Fit{Algorithm: "fixed-window", Limit: 40, WindowNS: int64(1500 * time.Millisecond), Burst: 40, Scope: fit.ScopeGlobal}
	sure := func(f fit.Fit, scopes ...string) *fit.Result {
		return &fit.Result{Best: f, Confidence: result.Sure, Scopes: scopes}
	}
	unsure := &fit.Result{Best: bucket, Confidence: result.Unsure, Scopes: []string{fit.ScopeGlobal, fit.ScopeSource}}
	unsureOf := func(f fit.Fit, parts ...string) *fit.Result {
		return &fit.Result{Best: f, Confidence: result.Unsure, UnsureOf: parts, Scopes: []string{fit.ScopeGlobal, fit.ScopeSource}}
	}
	for _, tc := range []struct {
		why    string
		expect string
		res    *fit.Result
		want   int
		say    string
	}{
		{why: "every part as fitted", expect: "gcra 100/1s burst 20 per client-address", res: sure(bucket, fit.ScopeGlobal, fit.ScopeSource), want: fit.ExpectMatch},
		{why: "a model the fit's group holds, and the rate per another window", expect: "x-rate 6000/1m", res: sure(bucket, fit.ScopeGlobal), want: fit.ExpectMatch},
		{why: "a burst one off is within the fit's timing", expect: "100/1s burst 21", res: sure(bucket, fit.ScopeGlobal), want: fit.ExpectMatch},
		{why: "a rate 2% off", expect: "102/1s", res: sure(bucket, fit.ScopeGlobal), want: fit.ExpectContradicted, say: "rate"},
		{why: "another kind of limiter", expect: "sliding-log", res: sure(bucket, fit.ScopeGlobal), want: fit.ExpectContradicted, say: "not sliding-log"},
		{why: "a window's length matters, not only its rate", expect: "80/3s", res: sure(window, fit.ScopeGlobal), want: fit.ExpectContradicted, say: "window"},
		{why: "the wrong scope", expect: "per key", res: sure(bucket, fit.ScopeGlobal, fit.ScopeSource, fit.ScopeKey), want: fit.ExpectContradicted, say: "per key"},
		{why: "one client cannot tell a scope", expect: "100/1s per client-address", res: sure(bucket, fit.ScopeGlobal), want: fit.ExpectUnknown, say: "-source-addrs"},
		{why: "an unsure fit that does not say of what contradicts nothing", expect: "50/1s", res: unsure, want: fit.ExpectUnknown, say: "unsure"},
		{why: "unsure of a window's length and limit, the fit still knows its model", expect: "sliding-log 40/1500ms", res: unsureOf(window, fit.PartPolicy),
			want: fit.ExpectContradicted, say: "not sliding-log"},
		{why: "unsure of a window's length and limit, the fit cannot contradict them", expect: "fixed-window 41/1500ms", res: unsureOf(window, fit.PartPolicy),
			want: fit.ExpectUnknown, say: "unsure of its policy"},
		{why: "unsure of the model, the fit cannot contradict it", expect: "sliding-log", res: unsureOf(bucket, fit.PartModel, fit.PartPolicy),
			want: fit.ExpectUnknown, say: "unsure of its model"},
		{why: "unsure of the scope alone, a wrong rate is still wrong", expect: "50/1s per key", res: unsureOf(bucket, fit.PartScope),
			want: fit.ExpectContradicted, say: "rate"},
		{why: "an unsure fit still matches what it found", expect: "100/1s", res: unsure, want: fit.ExpectMatch},
		{why: "nothing explains the service", expect: "100/1s", res: &fit.Result{Best: bucket, Confidence: result.Unexplained}, want: fit.ExpectUnknown, say: "no model"},
	} {
		e, err := fit.ParseExpectation(tc.expect)
		if err != nil {
			t.Fatal(err)
		}
		got, say := e.Check(tc.res)
		if got != tc.want || !strings.Contains(say, tc.say) {
			t.Errorf("%s: %q: %d %q, want %d saying %q", tc.why, tc.expect, got, say, tc.want, tc.say)
		}
	}
}
