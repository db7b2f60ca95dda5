package report

import (
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// TestTableNamesItsPercentile: the last column is the latency on the real
// clock, the delay a shaper put on requests in virtual time.
func TestTableNamesItsPercentile(t *testing.T) {
	for _, tc := range []struct {
		name string
		live *result.LiveStats
		want string
	}{
		{name: "virtual time", want: "P99 DELAY"},
		{name: "real clock", live: &result.LiveStats{}, want: "P99 LATENCY"},
	} {
		r := &result.Result{Policy: result.PolicyJSON{Limit: 10, WindowNS: 1e9, Burst: 10},
			Runs: []result.Run{{Algorithm: "gcra", Offered: 20, Admitted: 10, Rejected: 10, DisagreementPct: -1, Live: tc.live}}}
		var b strings.Builder
		if err := Table(&b, r); err != nil {
			t.Fatal(err)
		}
		if head, _, _ := strings.Cut(b.String(), "\n"); !strings.HasSuffix(strings.TrimSpace(head), tc.want) {
			t.Errorf("%s: header %q, want it to end with %q", tc.name, head, tc.want)
		}
	}
}
