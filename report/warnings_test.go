package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
)

// TestWarningText: every kind of warning is said in one line that names
// the flag that helps; a run against a server is told apart from one in
// process; an older file's sentence is said as it was written.
func TestWarningText(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		name string
		w    result.Warning
		want string
	}{
		// In process, more workers or fewer algorithms help.
		{name: "late", w: result.Warning{Kind: result.WarnLate, Run: "gcra", LatePct: 7.5, LateAfterNS: ms, LatenessP99NS: 3317759},
			want: "gcra: the sender started 7.5% of calls more than 1ms late (lateness p99 3.32ms): the machine, not the limiter, was the bottleneck; try fewer algorithms at once, a lower -rate or more -workers"},
		// Against a server, another host helps.
		{name: "late http", w: result.Warning{Kind: result.WarnLate, Run: "http", HTTP: true, LatePct: 9, LateAfterNS: ms, LatenessP99NS: int64(time.Second)},
			want: "lower -rate or attack from another host"},
		// A paused Redis is named, with its error.
		{name: "backend late", w: result.Warning{Kind: result.WarnBackendLate, Run: "gcra", LatePct: 40, LateAfterNS: ms, LatenessP99NS: int64(time.Second), N: 300, Backend: "redis", FirstError: "timeout"},
			want: "the redis backend timed out on 300 decisions (timeout)"},
		{name: "dropped", w: result.Warning{Kind: result.WarnDropped, Run: "gcra", N: 5, Of: 100, MaxInFlight: 7},
			want: "gcra: 5 of 100 arrivals (5.00%) dropped at -max-inflight 7"},
		{name: "dropped by a server", w: result.Warning{Kind: result.WarnDropped, Run: "http", HTTP: true, N: 5, Of: 100, MaxInFlight: 7},
			want: "dropped at -max-inflight 7: the server answered too slowly"},
		{name: "unsent", w: result.Warning{Kind: result.WarnUnsent, Run: "gcra", N: 8, Of: 18},
			want: "gcra: the sender fell behind and stopped at the end of the pass with 8 of 18 arrivals (44.44%) not sent; lower -rate"},
		{name: "abandoned", w: result.Warning{Kind: result.WarnAbandoned, Run: "gcra", N: 2},
			want: "gcra: 2 workers were still inside the limiter after the interrupt"},
		{name: "abandoned by a server", w: result.Warning{Kind: result.WarnAbandoned, Run: "http", HTTP: true, N: 2},
			want: "their requests are missing"},
		{name: "unserved", w: result.Warning{Kind: result.WarnUnserved, Run: "shaper", N: 3},
			want: "shaper: 3 shaper waits were still pending"},
		{name: "lossy", w: result.Warning{Kind: result.WarnLossy, Run: "sliding-log", N: 4},
			want: "forgot the state of 4 keys to take new ones (-on-full evict-lossy)"},
		{name: "table full", w: result.Warning{Kind: result.WarnTableFull, Run: "gcra", N: 9},
			want: "9 requests of new keys were rejected because the key table was full of keys it could not forget; raise -max-keys"},
		{name: "no policy", w: result.Warning{Kind: result.WarnNoPolicy, Run: "http", HTTP: true},
			want: "give -limit and -window, or run ratebench fit"},
		{name: "failed", w: result.Warning{Kind: result.WarnFailed, Run: "http", HTTP: true, N: 3, Of: 10, ErrorKinds: map[string]int64{"timeout": 1, "connection_refused": 2}},
			want: "3 of 10 requests failed (connection_refused 2, timeout 1)"},
		{name: "calibration", w: result.Warning{Kind: result.WarnCalibrationLate, LatePct: 6},
			want: "calibration: even a no-op limiter was started late for 6.0% of calls"},
		{name: "start lag", w: result.Warning{Kind: result.WarnStartLag, Run: "gcra", Shard: &result.Shard{Index: 1, Count: 3, StartAtUnixNS: 1.7e18},
			StartLagNS: 250 * ms, MaxStartLagNS: 100 * ms},
			want: "gcra: shard 1/3 began 250ms after the start -start-at 2023-11-14T22:13:20Z planned for it, more than -max-start-lag 100ms"},
		{name: "trace, flags", w: result.Warning{Kind: result.WarnTraceOnly, PolicyFrom: "flags"},
			want: "built from requests.csv alone, against the policy of -limit and -window: a trace does not tell"},
		{name: "trace, fit", w: result.Warning{Kind: result.WarnTraceOnly, PolicyFrom: "fit"},
			want: "against the policy of fit.json's best fit:"},
		{name: "reordered", w: result.Warning{Kind: result.WarnReordered, Run: "gcra", N: 4, Rows: 64},
			want: "gcra: 4 requests came more than 64 rows out of send order; each counts"},
		{name: "merge reordered", w: result.Warning{Kind: result.WarnMergeReordered, Run: "gcra", N: 4, Rows: 64},
			want: "merge: gcra: 4 requests came more than 64 rows out of send order in their trace"},
		{name: "merge workloads", w: result.Warning{Kind: result.WarnMergeWorkloads, Inputs: []string{"a", "b"}, Workloads: []string{"boundary", "steady"}},
			want: "merge: a ran workload boundary, b ran steady; the page shows the first"},
		{name: "merge latency", w: result.Warning{Kind: result.WarnMergeLatency, Run: "gcra"},
			want: "merge: gcra: latency percentiles without a histogram cannot be merged"},
		{name: "merge urls", w: result.Warning{Kind: result.WarnMergeURLs, Run: "http", URLs: []string{"http://a/", "http://b/"}},
			want: "merge: http: attacked http://a/ and http://b/; the page shows the first"},
		{name: "clock unknown", w: result.Warning{Kind: result.WarnClockUnknown},
			want: "not all of them gave -clock-error"},
		{name: "max lower bound", w: result.Warning{Kind: result.WarnMaxLowerBound},
			want: "merge: the most admitted in any W is the largest of the inputs' maxima, a lower bound"},
		{name: "old sentence", w: result.Warning{Kind: result.WarnText, Text: "as it was written"},
			want: "as it was written"},
		{name: "newer kind", w: result.Warning{Kind: "someday", Run: "gcra"},
			want: "gcra: someday"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := report.WarningText(tc.w)
			if !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
				t.Errorf("WarningText = %q, want one line with %q", got, tc.want)
			}
		})
	}
}
