package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench"
)

// TestPhrase: the command line says each warning in one line and names the
// flag that helps; a run against a server is told apart from one in
// process.
func TestPhrase(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    bench.Warning
		want string
	}{
		// In process, more workers or fewer algorithms help.
		{"late", bench.Warning{Kind: bench.WarnLate, Run: "gcra", Share: 7.5, Threshold: time.Millisecond, P99: 3317759 * time.Nanosecond},
			"gcra: the sender started 7.5% of calls more than 1ms late (lateness p99 3.32ms): the machine, not the limiter, was the bottleneck; try fewer algorithms at once, a lower -rate or more -workers"},
		// Against a server, another host helps.
		{"late http", bench.Warning{Kind: bench.WarnLate, Run: "http", HTTP: true, Share: 9, Threshold: time.Millisecond, P99: time.Second},
			"lower -rate or attack from another host"},
		// A paused Redis is named, with its error.
		{"backend late", bench.Warning{Kind: bench.WarnBackendLate, Run: "gcra", Share: 40, Threshold: time.Millisecond, P99: time.Second, N: 300, Backend: "redis", Detail: "timeout"},
			"the redis backend timed out on 300 decisions (timeout)"},
		{"dropped", bench.Warning{Kind: bench.WarnDropped, Run: "gcra", N: 5, Of: 100, Cap: 7}, "gcra: 5 of 100 arrivals (5.00%) dropped at -max-inflight 7"},
		{"lossy", bench.Warning{Kind: bench.WarnLossy, Run: "sliding-log", N: 4}, "forgot the state of 4 keys to take new ones (-on-full evict-lossy)"},
		{"table full", bench.Warning{Kind: bench.WarnTableFull, Run: "gcra", N: 9}, "9 requests of new keys were rejected because the key table was full"},
		{"failed", bench.Warning{Kind: bench.WarnFailed, Run: "http", HTTP: true, N: 3, Of: 10, Kinds: map[string]int64{"timeout": 1, "connection_refused": 2}},
			"3 of 10 requests failed (connection_refused 2, timeout 1)"},
		{"calibration", bench.Warning{Kind: bench.WarnCalibrationLate, Share: 6}, "calibration: even a no-op limiter was started late for 6.0% of calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := phrase(tc.w)
			if !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
				t.Errorf("phrase = %q, want one line with %q", got, tc.want)
			}
		})
	}
}
