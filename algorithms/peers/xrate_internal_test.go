package peers

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// admits reports whether the library would admit cost at at, from its
// state now, by its own rule: reserveN admits when the wait it computes for
// the missing tokens, truncated to the nanosecond, is zero.
func (x *XRate) admits(at time.Duration, cost int64) bool {
	tok := x.lim.TokensAt(Instant(at)) - float64(cost)
	return cost <= x.burst && (tok >= 0 || time.Duration(-tok/x.perSec*float64(time.Second)) <= 0)
}

// firstAdmit is the smallest d in [lo, hi] such that cost is admitted at
// at+d (admission is monotone in time for a clock that does not go back).
func (x *XRate) firstAdmit(at, lo, hi time.Duration, cost int64) time.Duration {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if x.admits(at+mid, cost) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// drains counts the unit requests the library would admit at one instant,
// replaying its float64 arithmetic (tokens -= 1 each time).
func (x *XRate) drains(at time.Duration) int64 {
	tk := x.lim.TokensAt(Instant(at))
	var n int64
	for n < x.burst {
		tok := tk - 1
		if tok < 0 && time.Duration(-tok/x.perSec*float64(time.Second)) > 0 {
			break
		}
		tk, n = tok, n+1
	}
	return n
}

// floatTolerance is how far x/time/rate's float64 arithmetic may move a
// boundary: 1ns (it truncates its waits) plus a few ulps of a full bucket,
// B*T*2^-50, in nanoseconds.
func floatTolerance(p algorithms.Policy) time.Duration {
	p = p.WithDefaults()
	return 1 + time.Duration(float64(p.Burst)*float64(p.Window)/float64(p.Limit)/(1<<50))
}

// TestXRateFieldsAgainstLibraryRule measures, on seeded random traces, how
// far RetryAfter and ResetAfter are from the instant the library itself
// first admits (found by probing its state with TokensAt), and checks that
// Remaining is exactly what it would admit at the same instant. The
// offsets are logged; the largest must be within floatTolerance, which is
// 1ns for the conformance suite's policies (hence RetrySlack: 1).
func TestXRateFieldsAgainstLibraryRule(t *testing.T) {
	for _, p := range []algorithms.Policy{
		{Limit: 10, Window: time.Second},
		{Limit: 10, Window: time.Second, Burst: 4},
		{Limit: 10, Window: time.Second, Burst: 25},
		{Limit: 3, Window: time.Second, Burst: 7}, // T = 333333333.3ns
		{Limit: 1000, Window: time.Second, Burst: 50},
		{Limit: 7, Window: 13 * time.Millisecond, Burst: 3},
		{Limit: 1, Window: time.Hour, Burst: 100000}, // B*T = 11.4 years
	} {
		x, err := NewXRate(p)
		if err != nil {
			t.Fatal(err)
		}
		p = p.WithDefaults()
		T, tol := p.Interval(), floatTolerance(p)
		rng := rand.New(rand.NewPCG(1, uint64(p.Limit)))
		retry, reset := map[time.Duration]int{}, map[time.Duration]int{}
		now := 3 * time.Second
		steps := 20000
		if p.Burst > 1000 {
			steps = 1000 // drains replays up to B subtractions per step
		}
		for range steps {
			switch rng.IntN(6) {
			case 0: // same instant
			case 1:
				now += time.Duration(rng.Int64N(3))
			case 2:
				now += T - 1 + time.Duration(rng.Int64N(3))
			default:
				now += time.Duration(rng.Int64N(int64(T)))
			}
			cost := 1 + rng.Int64N(min(p.Burst, 3))
			d, err := x.Allow(now, "k", cost)
			if err != nil {
				t.Fatal(err)
			}
			if got := x.drains(now); got != d.Remaining {
				t.Fatalf("policy %v at %v: Remaining %d, the library admits %d more", p, now, d.Remaining, got)
			}
			if !d.Allowed {
				e := x.firstAdmit(now, max(d.RetryAfter-2*tol, 1), d.RetryAfter+2*tol, cost) - d.RetryAfter
				retry[e]++
				if e < -tol || e > tol {
					t.Fatalf("policy %v at %v cost %d: RetryAfter %v, the library admits %v later", p, now, cost, d.RetryAfter, e)
				}
			}
			e := x.firstAdmit(now, max(d.ResetAfter-2*tol, 0), d.ResetAfter+2*tol, p.Burst) - d.ResetAfter
			reset[e]++
			if e < -tol || e > tol {
				t.Fatalf("policy %v at %v: ResetAfter %v, the library admits B %v later", p, now, d.ResetAfter, e)
			}
		}
		t.Logf("policy %v (tolerance %v): first admit minus RetryAfter %v, minus ResetAfter %v", p, tol, retry, reset)
	}
}

// TestXRateAgreesWithTokenBucket runs XRate and algorithms.TokenBucket side
// by side on seeded random traces (a clock that never goes back), for
// policies where W is a multiple of L so that T is a whole number of
// nanoseconds and the token bucket is exact. A third of the instants aim at
// the exact boundary where the bucket holds the cost, give or take 1ns.
// On a disagreement the token bucket is made to follow x/time/rate's
// decision, so that each disagreement is counted once. Every disagreement
// must be within floatTolerance of the exact boundary (time since the
// bucket emptied = cost*T); the counts are logged.
func TestXRateAgreesWithTokenBucket(t *testing.T) {
	for _, tc := range []struct {
		p    algorithms.Policy
		seed uint64
	}{
		{algorithms.Policy{Limit: 10, Window: time.Second}, 1},                   // T = 100ms
		{algorithms.Policy{Limit: 10, Window: time.Second, Burst: 4}, 2},         // burst below L
		{algorithms.Policy{Limit: 100, Window: time.Second, Burst: 250}, 3},      // burst above L
		{algorithms.Policy{Limit: 3, Window: 3 * time.Millisecond, Burst: 5}, 4}, // rate 1000/s
		{algorithms.Policy{Limit: 7, Window: 7 * time.Second, Burst: 1}, 5},      // rate 1/s, burst 1
		{algorithms.Policy{Limit: 1000000, Window: time.Second, Burst: 1000}, 6}, // T = 1µs
		{algorithms.Policy{Limit: 60, Window: time.Minute, Burst: 5000}, 11},     // large burst
		{algorithms.Policy{Limit: 1, Window: time.Hour, Burst: 100000}, 11},      // B*T = 11.4 years
	} {
		p, tol := tc.p.WithDefaults(), floatTolerance(tc.p)
		T := int64(p.Interval())
		tb, err := algorithms.NewTokenBucket(p)
		if err != nil {
			t.Fatal(err)
		}
		x, err := NewXRate(p)
		if err != nil {
			t.Fatal(err)
		}
		var word atomic.Int64 // the token bucket's state, "empty at"
		word.Store(tb.InitialWord())
		rng := rand.New(rand.NewPCG(tc.seed, 0x5eed))
		now := 3 * time.Second
		early, late := map[time.Duration]int{}, map[time.Duration]int{} // by offset
		var aimed int
		for range 100000 {
			cost := 1 + rng.Int64N(min(p.Burst, 3))
			if rng.IntN(20) == 0 {
				cost = min(p.Burst, 64) // drains large bursts too
			}
			emptyAt := word.Load()
			switch rng.IntN(6) {
			case 0: // same instant
			case 1:
				now += time.Duration(T / 4 * rng.Int64N(5))
			case 2, 3: // where the bucket holds cost tokens, give or take 1ns
				base := max(emptyAt, int64(now)-p.Burst*T)
				if at := time.Duration(base + cost*T + rng.Int64N(3) - 1); at > now {
					now, aimed = at, aimed+1
				}
			default:
				now += time.Duration(rng.Int64N(T))
			}
			base := max(emptyAt, int64(now)-p.Burst*T)
			off := time.Duration(int64(now) - base - cost*T) // 0 at the exact boundary
			dt, err := tb.DecideWord(&word, now, cost)
			if err != nil {
				t.Fatal(err)
			}
			dx, err := x.Allow(now, "k", cost)
			if err != nil {
				t.Fatal(err)
			}
			if dt.Allowed == dx.Allowed {
				continue
			}
			if dx.Allowed {
				early[off]++
				word.Store(base + cost*T) // as if the bucket had admitted
			} else {
				late[off]++
				word.Store(emptyAt) // as if it had rejected
			}
			if off < -tol || off > tol {
				t.Fatalf("policy %v at %v cost %d: x/time admitted=%v, token bucket admitted=%v, %v from the boundary",
					p, now, cost, dx.Allowed, dt.Allowed, off)
			}
		}
		var n int
		for _, c := range early {
			n += c
		}
		for _, c := range late {
			n += c
		}
		t.Logf("policy %v: %d disagreements in 100000 decisions (%d aimed at a boundary ±1ns), by offset from the boundary: x/time admits %v, x/time rejects %v (tolerance %v)",
			p, n, aimed, early, late, tol)
	}
}
