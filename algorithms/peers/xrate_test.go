package peers_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/peers"
)

// TestXRateClockBackwardsCreatesQuota pins down a quirk of x/time/rate (as
// of v0.16.0): a request admitted at an instant earlier than the previous
// admit moves the limiter's "last" time back (reserveN sets lim.last = t,
// and advance only clamps elapsed to zero), so the span between the two
// instants is refilled a second time. With 10/s and a burst of 10: 5
// admitted at t0, 1 at t0-500ms (5 tokens were left), then 9 more at t0
// (4 left + 500ms refilled again): 15 at one instant for a capacity of 10.
// The Limiter contract says time going backwards never creates
// quota; algorithms.TokenBucket admits 10 on the same script. The
// conformance property ClockBackwards does not see it, because it only
// goes back once the limiter is empty, and x/time/rate does not move
// "last" on a rejection. If this test fails, the library changed.
func TestXRateClockBackwardsCreatesQuota(t *testing.T) {
	const t0 = 3 * time.Second
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	x, err := peers.NewXRate(p)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := algorithms.NewTokenBucket(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		l    algorithms.Limiter
		want int
	}{{x, 15}, {tb, 10}} {
		admitted := 0
		allow := func(at time.Duration) bool {
			d, err := tc.l.Allow(at, "k", 1)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				admitted++
			}
			return d.Allowed
		}
		for range 5 {
			allow(t0)
		}
		allow(t0 - 500*time.Millisecond)
		for allow(t0) {
		}
		if admitted != tc.want {
			t.Errorf("%T: admitted %d with a step back of 500ms, want %d", tc.l, admitted, tc.want)
		}
	}
}
