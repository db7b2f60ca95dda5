package all_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms/algotest"
	"github.com/ratebench/ratebench/algorithms/all"
)

// skips are the properties known not to hold for an entry, with why.
var skips = map[string]map[string]string{
	// A finding about the library, pinned by peers' TestXRateClockBackwardsCreatesQuota.
	"x-rate": {"ClockBackwards": "x/time/rate v0.16.0 sets last = t when it admits at an earlier instant, so the span back to the later instant refills twice: 15 admitted for a capacity of 10"},
}

// TestConformance runs the conformance suite over every entry of the
// list, configured by the entry's own traits: what the list says of an
// algorithm is what the suite holds it to. x/time/rate's RetrySlack is
// 1ns, the smallest that works: it admits as soon as the wait it computes
// in float64 truncates to zero, so at an exact boundary it admits 1ns
// early or on time depending on rounding.
func TestConformance(t *testing.T) {
	for _, e := range all.Entries() {
		t.Run(e.Name, func(t *testing.T) {
			cfg := algotest.ForEntry(e)
			cfg.Skip = skips[e.Name]
			algotest.Run(t, cfg)
		})
	}
}
