package all_test

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
)

func TestEntries(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second, Burst: 50}
	seen := map[string]bool{}
	for _, e := range all.Entries() {
		if seen[e.Name] {
			t.Errorf("%s listed twice", e.Name)
		}
		seen[e.Name] = true
		if e.Describe == "" || e.TheoryText == "" {
			t.Errorf("%s: no description or theory text", e.Name)
		}
		if th := e.Theory(p); th < p.Limit || th > 2*p.Limit+p.Burst {
			t.Errorf("%s: theory %d outside [L, 2L+B]", e.Name, th)
		}
		l, err := e.New(p)
		if err != nil || l == nil {
			t.Fatalf("%s: New = %v, %v", e.Name, l, err)
		}
		if d, err := l.Allow(0, "k", 1); err != nil || !d.Allowed {
			t.Errorf("%s: first request = %+v, %v; want admitted", e.Name, d, err)
		}
		if l, err := e.New(algorithms.Policy{Window: time.Second}); l != nil || !errors.Is(err, algorithms.ErrInvalidPolicy) {
			t.Errorf("%s: New(zero limit) = %v, %v; want nil and ErrInvalidPolicy", e.Name, l, err)
		}
	}
	if _, err := all.Lookup("no-such"); err == nil {
		t.Error("Lookup(no-such) succeeded")
	}
}

func TestSlidingCounterTheory(t *testing.T) {
	e, _ := all.Lookup("sliding-counter")
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		want int64
	}{
		{"long window: 2L - 1", algorithms.Policy{Limit: 100, Window: time.Second}, 199},
		{"window of 1ns: L", algorithms.Policy{Limit: 1, Window: 1}, 1},
		{"window of 2L ns: 2L - 1", algorithms.Policy{Limit: 5, Window: 10}, 9},
	} {
		if got := e.Theory(tc.p); got != tc.want {
			t.Errorf("%s: theory %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNginxLimitReqTheory(t *testing.T) {
	e, err := all.Lookup("nginx-limit-req")
	if err != nil {
		t.Fatal(err)
	}
	// min(B + floor(rate*ceil(W/1ms)/10^6), B*(ceil(W/1ms)+1)), with rate
	// floor(L*10^12/W ns) thousandths of a request per second.
	theory := func(p algorithms.Policy) int64 {
		rate := new(big.Int).Div(new(big.Int).Mul(big.NewInt(p.Limit), big.NewInt(1e12)), big.NewInt(int64(p.Window)))
		ticks := (int64(p.Window) + 999_999) / 1_000_000
		extra := new(big.Int).Div(new(big.Int).Mul(rate, big.NewInt(ticks)), big.NewInt(1e6))
		return min(p.Burst+extra.Int64(), p.Burst*(ticks+1))
	}
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		want int64
	}{
		{"rate=10r/s burst=20: B + L", algorithms.Policy{Limit: 10, Window: time.Second, Burst: 21}, 31},
		{"rate=1r/m: 16 thousandths per second, 0.96 a minute", algorithms.Policy{Limit: 1, Window: time.Minute, Burst: 1}, 1},
		{"rate=30r/m: B + L", algorithms.Policy{Limit: 30, Window: time.Minute, Burst: 30}, 60},
		{"10 per 1.5s: rate 6666, one short of B + L", algorithms.Policy{Limit: 10, Window: 1500 * time.Millisecond, Burst: 10}, 19},
		{"4 per 1ms: both sides of a tick, 2B", algorithms.Policy{Limit: 4, Window: time.Millisecond, Burst: 4}, 8},
		{"1 per 1us: 2B, not B + 1000", algorithms.Policy{Limit: 1, Window: time.Microsecond, Burst: 1}, 2},
		{"5 per 2.5ms, B 1: min(1+5, 1*4)", algorithms.Policy{Limit: 5, Window: 2500 * time.Microsecond, Burst: 1}, 4},
	} {
		if got, ref := e.Theory(tc.p), theory(tc.p); got != tc.want || ref != tc.want {
			t.Errorf("%s: theory %d (in big integers %d), want %d", tc.name, got, ref, tc.want)
		}
	}
}

func TestFixedWindowFirstTheory(t *testing.T) {
	e, _ := all.Lookup("fixed-window-first")
	if got := e.Theory(algorithms.Policy{Limit: 100, Window: time.Second}); got != 199 {
		t.Errorf("theory %d, want 2L - 1 = 199: the opener is never in a span W with the next window", got)
	}
}
