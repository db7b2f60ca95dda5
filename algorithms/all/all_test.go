package all_test

import (
	"errors"
	"math/big"
	"slices"
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

func TestHTTPRateTheory(t *testing.T) {
	e, err := all.Lookup("httprate")
	if err != nil {
		t.Fatal(err)
	}
	// L at the last ns of a window, then, 2ns before the end of the next,
	// c more while round(2L/W + c - 1) + 1 <= L: c = L - round(2L/W) with
	// halves rounded up, computed here in rationals; at least L.
	theory := func(p algorithms.Policy) int64 {
		x := new(big.Rat).SetFrac64(2*p.Limit, int64(p.Window))
		x.Add(x, big.NewRat(1, 2))
		q := new(big.Int).Quo(x.Num(), x.Denom()).Int64()
		return max(2*p.Limit-q, p.Limit)
	}
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		want int64
	}{
		{name: "100 per second: 2L, the rounding's one more than sliding-counter", p: algorithms.Policy{Limit: 100, Window: time.Second}, want: 200},
		{name: "W = 4L ns: 2L/W = 1/2 rounds to 1", p: algorithms.Policy{Limit: 10, Window: 40}, want: 19},
		{name: "W just above 4L ns", p: algorithms.Policy{Limit: 10, Window: 41}, want: 20},
		{name: "W = 2L ns: the L weigh 1", p: algorithms.Policy{Limit: 5, Window: 10}, want: 9},
		{name: "W = L ns", p: algorithms.Policy{Limit: 4, Window: 4}, want: 6},
		{name: "window of 1ns: L", p: algorithms.Policy{Limit: 1, Window: 1}, want: 1},
	} {
		if got, ref := e.Theory(tc.p), theory(tc.p); got != tc.want || ref != tc.want {
			t.Errorf("%s: theory %d (in rationals %d), want %d", tc.name, got, ref, tc.want)
		}
	}
}

func TestHAProxyReqRateTheory(t *testing.T) {
	e, err := all.Lookup("haproxy-req-rate")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    algorithms.Policy
		want int64
	}{
		{name: "http_req_rate(10s), gt 100: 2L", p: algorithms.Policy{Limit: 100, Window: 10 * time.Second}, want: 200},
		{name: "P = L: the L weigh floor(L*1/P) = 1", p: algorithms.Policy{Limit: 1000, Window: time.Second}, want: 1999},
		{name: "P = 4ms, L = 10: 2L - 2", p: algorithms.Policy{Limit: 10, Window: 4 * time.Millisecond}, want: 18},
		{name: "odd P above L: 2L + 1, a third period's first millisecond", p: algorithms.Policy{Limit: 100, Window: 1001 * time.Millisecond}, want: 201},
		{name: "odd P = 3ms, L = 10: B = 7, 2L + ceil(7/3)", p: algorithms.Policy{Limit: 10, Window: 3 * time.Millisecond}, want: 23},
		{name: "not whole milliseconds: invalid", p: algorithms.Policy{Limit: 10, Window: 1500 * time.Microsecond}, want: 0},
	} {
		if got := e.Theory(tc.p); got != tc.want {
			t.Errorf("%s: theory %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestInMemoryNames: every entry but the peers, in the list's order.
func TestInMemoryNames(t *testing.T) {
	got := all.InMemoryNames()
	var want []string
	for _, e := range all.Entries() {
		if !e.Peer {
			want = append(want, e.Name)
		}
	}
	if !slices.Equal(got, want) || slices.Contains(got, "x-rate") || !slices.Contains(got, "gcra") {
		t.Fatalf("InMemoryNames() = %v, want %v, without the peers", got, want)
	}
}
