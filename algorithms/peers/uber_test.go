package peers_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/peers"
)

// TestUberDelays checks the exact delays of the uber pacer on scripts of
// unit requests, each step a (instant, count) burst.
func TestUberDelays(t *testing.T) {
	const t0 = 3 * time.Second
	ms := time.Millisecond
	// steady returns n delays 0, T, 2T, ... after `free` zeros.
	steady := func(n, free int, T time.Duration) []time.Duration {
		out := make([]time.Duration, n)
		for i := free; i < n; i++ {
			out[i] = time.Duration(i-free+1) * T
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		p      algorithms.Policy
		warmup time.Duration // one request at warmup, before the burst, if > 0
		at     time.Duration
		n      int
		want   []time.Duration
	}{
		{
			// A fresh library has no slack: one at once, then one every W/L.
			name: "fresh, 100 at one instant",
			p:    algorithms.Policy{Limit: 10, Window: time.Second},
			at:   t0, n: 100,
			want: steady(100, 1, 100*ms),
		},
		{
			// Slack B-1 = 9: after a long idle, B = 10 at once, then paced.
			name:   "idle, 100 at one instant",
			p:      algorithms.Policy{Limit: 10, Window: time.Second},
			warmup: t0, at: t0 + time.Hour, n: 100,
			want: steady(100, 10, 100*ms),
		},
		{
			// Burst 1 is slack 0 (ratelimit.WithoutSlack).
			name:   "burst 1 after idle",
			p:      algorithms.Policy{Limit: 10, Window: time.Second, Burst: 1},
			warmup: t0, at: t0 + time.Hour, n: 5,
			want: steady(5, 1, 100*ms),
		},
		{
			// Idle for exactly 4 intervals after a request: slack of 3
			// accrued, so 4 at once (the default branch of Take).
			name:   "partial slack",
			p:      algorithms.Policy{Limit: 10, Window: time.Second},
			warmup: t0, at: t0 + 400*ms, n: 6,
			want: steady(6, 4, 100*ms),
		},
		{
			// Instant 0, where a virtual run starts: paced, because the
			// adapters' epoch is not the Unix epoch (the library reads a
			// state of 0 Unix nanoseconds as "never used").
			name: "at instant zero",
			p:    algorithms.Policy{Limit: 10, Window: time.Second},
			at:   0, n: 5,
			want: steady(5, 1, 100*ms),
		},
		{
			// W not a multiple of L: the library truncates W/L.
			name: "truncated interval",
			p:    algorithms.Policy{Limit: 3, Window: time.Second},
			at:   t0, n: 4,
			want: steady(4, 1, 333333333),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := peers.NewUber(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.warmup > 0 {
				if _, err := u.Allow(tc.warmup, "k", 1); err != nil {
					t.Fatal(err)
				}
			}
			B := tc.p.WithDefaults().Burst
			for i, want := range tc.want {
				d, err := u.Allow(tc.at, "k", 1)
				if err != nil {
					t.Fatal(err)
				}
				T := tc.p.Window / time.Duration(tc.p.Limit)
				if wd := (algorithms.Decision{Allowed: true, Delay: want, ResetAfter: want + time.Duration(B)*T}); d != wd {
					t.Fatalf("request %d at %v: %+v, want %+v", i+1, tc.at, d, wd)
				}
			}
		})
	}
}

// TestUberSteadyArrivals: requests arriving exactly every W/L are never
// delayed, and a request of cost n is paced as n unit requests.
func TestUberSteadyArrivals(t *testing.T) {
	const t0 = 3 * time.Second
	u, err := peers.NewUber(algorithms.Policy{Limit: 10, Window: time.Second, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		at := t0 + time.Duration(i)*100*time.Millisecond
		if d, err := u.Allow(at, "k", 1); err != nil || d.Delay != 0 {
			t.Fatalf("request %d at the rate: %+v, %v; want no delay", i+1, d, err)
		}
	}
	last := t0 + 49*100*time.Millisecond
	if d, err := u.Allow(last, "k", 3); err != nil || d.Delay != 300*time.Millisecond {
		t.Fatalf("cost 3 right after: %+v, %v; want a delay of 300ms", d, err)
	}
}
