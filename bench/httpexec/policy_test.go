package httpexec

import (
	"net/http"
	"testing"
	"time"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in     string
		limit  int64
		window time.Duration
		ok     bool
	}{
		{in: `"default";q=100;w=60`, limit: 100, window: time.Minute, ok: true},            // what httplimit sends
		{in: `burst;q=5;w=1, day;q=1000;w=86400`, limit: 5, window: time.Second, ok: true}, // the first of a list, a token name
		{in: `"a\"b";w=2;q=7`, limit: 7, window: 2 * time.Second, ok: true},                // an escaped quote, parameters in any order
		{in: `"x";q=10;w=1;qu="requests"`, limit: 10, window: time.Second, ok: true},       // other parameters ignored
		{in: `"x";q=10`},              // no window
		{in: `"x";q=0;w=1`},           // a zero quota
		{in: `"x";q=-1;w=1`},          // a negative one
		{in: `"x";q=1.5;w=1`},         // not an integer
		{in: `"x";q=1;w=99999999999`}, // a window beyond a Duration
		{in: `"unterminated;q=1;w=1`}, // a broken string
		{in: ``},                      // nothing
	} {
		p, ok := ParsePolicy(tc.in)
		if ok != tc.ok || p.Limit != tc.limit || p.Window != tc.window || ok && p.Burst != p.Limit {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %d per %v, %v", tc.in, p, ok, tc.limit, tc.window, tc.ok)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{in: "0", want: 0},                // now
		{in: "30", want: 30},              // delay-seconds
		{in: "999999999999", want: 86400}, // capped at a day
		{in: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90},
		{in: now.Add(90*time.Second + 100*time.Millisecond).Format(time.RFC850), want: 90}, // the obsolete form; the format drops the fraction
		{in: now.Add(-time.Hour).Format(http.TimeFormat), want: 0},                         // past: now
		{in: "Fri, 31 Dec 9999 23:59:59 GMT", want: 86400},                                 // beyond what a Duration holds: capped, not negative
		{in: "-1", want: BadRetryAfter},                                                    // no sign
		{in: "1.5", want: BadRetryAfter},                                                   // whole seconds only
		{in: "", want: BadRetryAfter},                                                      // empty
		{in: "tomorrow", want: BadRetryAfter},                                              // neither
	} {
		if got := parseRetryAfter([]byte(tc.in), now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestParseRetryAfterRoundsUp: a date part of a second ahead is a whole
// second.
func TestParseRetryAfterRoundsUp(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 300_000_000, time.UTC)
	if got := parseRetryAfter([]byte(now.Add(2*time.Second).Format(http.TimeFormat)), now); got != 2 {
		t.Errorf("1.7 s ahead: %d, want 2", got)
	}
}
