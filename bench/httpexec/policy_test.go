package httpexec

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in     string
		limit  int64
		window time.Duration
		ok     bool
	}{
		{in: `"default";q=100;w=60`, limit: 100, window: time.Minute, ok: true},                  // what httplimit sends
		{in: `burst;q=5;w=1, day;q=1000;w=86400`, limit: 5, window: time.Second, ok: true},       // the first of a list, a token name
		{in: `"a\"b";w=2;q=7`, limit: 7, window: 2 * time.Second, ok: true},                      // an escaped quote, parameters in any order
		{in: `"x";q=10;w=1;qu="requests"`, limit: 10, window: time.Second, ok: true},             // other parameters ignored
		{in: `"100-in-1min"; q=100; w=60; pk=:ZTQ1:`, limit: 100, window: time.Minute, ok: true}, // draft 08 as express-rate-limit sends it
		{in: `100;w=60`, limit: 100, window: time.Minute, ok: true},                              // drafts 03 to 07: the item is the quota
		{in: `10;w=1, 50;w=60`, limit: 10, window: time.Second, ok: true},                        // the first of those
		{in: `"x";comment="a;q=1,w=2";q=3;w=4`, limit: 3, window: 4 * time.Second, ok: true},     // a String parameter holding ; and ,
		{in: `100`},                       // a quota without a window
		{in: `"x";q=999999999999999;w=1`}, // more than one per nanosecond
		{in: `"x";q=1;w=1;c="open`},       // a String parameter left open
		{in: `"x";q=10`},                  // no window
		{in: `"x";q=0;w=1`},               // a zero quota
		{in: `"x";q=-1;w=1`},              // a negative one
		{in: `"x";q=1.5;w=1`},             // not an integer
		{in: `"x";q=1;w=99999999999`},     // a window beyond a Duration
		{in: `"unterminated;q=1;w=1`},     // a broken string
		{in: ``},                          // nothing
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

func TestReadPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   algorithms.Policy
		why    string
	}{
		{name: "none", want: algorithms.Policy{}, why: "no field, no policy"},
		{name: "RateLimit-Policy", fields: map[string]string{"RateLimit-Policy": `"default";q=5;w=1`, "X-RateLimit-Limit": "9"},
			want: algorithms.Policy{Limit: 5, Window: time.Second, Burst: 5}, why: "the policy field wins over a limit field"},
		{name: "X-RateLimit-Limit", fields: map[string]string{"X-RateLimit-Limit": " 10 "},
			want: algorithms.Policy{Limit: 10, Burst: 10}, why: "a limit alone, as ulule/limiter and GitHub send it: no window said"},
		{name: "RateLimit-Limit", fields: map[string]string{"RateLimit-Limit": "100", "X-RateLimit-Limit": "7"},
			want: algorithms.Policy{Limit: 100, Burst: 100}, why: "the drafts' field before the X- one"},
		{name: "RateLimit-Limit with policies", fields: map[string]string{"RateLimit-Limit": "50, 10;w=1, 50;w=60"},
			want: algorithms.Policy{Limit: 50, Window: time.Minute, Burst: 50}, why: "drafts 00 to 02: the window of the policy whose quota is the limit"},
		{name: "RateLimit dictionary", fields: map[string]string{"RateLimit": "limit=100, remaining=99, reset=60"},
			want: algorithms.Policy{Limit: 100, Burst: 100}, why: "draft 07's one field, as express-rate-limit sends it"},
		{name: "RateLimit item and X limit", fields: map[string]string{"RateLimit": `"d";r=4;t=1`, "X-RateLimit-Limit": "8"},
			want: algorithms.Policy{Limit: 8, Burst: 8}, why: "draft 08's RateLimit says no limit: the next field does"},
		{name: "draft 07 policy", fields: map[string]string{"RateLimit-Policy": "100;w=60", "RateLimit": "limit=100, remaining=99, reset=60"},
			want: algorithms.Policy{Limit: 100, Window: time.Minute, Burst: 100}, why: "express-rate-limit's draft-7 headers"},
		{name: "malformed policy, then a limit", fields: map[string]string{"RateLimit-Policy": `"x";q=0;w=1`, "X-RateLimit-Limit": "3"},
			want: algorithms.Policy{Limit: 3, Burst: 3}, why: "a policy that cannot be read falls back to the limit"},
		{name: "bad limits", fields: map[string]string{"RateLimit-Limit": "0", "X-RateLimit-Limit": "many"},
			want: algorithms.Policy{}, why: "a zero or unreadable limit is none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.fields {
				h.Set(k, v)
			}
			got := readPolicy(func(name string) []byte {
				if v := h.Values(name); len(v) > 0 {
					return []byte(v[0])
				}
				return nil
			})
			if got != tc.want {
				t.Errorf("%s: got %+v, want %+v", tc.why, got, tc.want)
			}
		})
	}
}

// FuzzParsePolicy: any value is read without panic, the same as a string
// and as bytes, and a policy read is valid.
func FuzzParsePolicy(f *testing.F) {
	for _, v := range []string{`"default";q=100;w=60`, `100;w=60, 5;w=1`, `"x";c="a;b";q=1;w=1`, `"open`, `;;,,`} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		p, ok := ParsePolicy(v)
		q, okBytes := parsePolicy([]byte(v))
		if p != q || ok != okBytes {
			t.Fatalf("%q: %+v %v as a string, %+v %v as bytes", v, p, ok, q, okBytes)
		}
		if _, err := p.Validate(); ok && err != nil {
			t.Fatalf("%q: %+v: %v", v, p, err)
		}
		readPolicy(func(string) []byte { return []byte(v) })
	})
}
