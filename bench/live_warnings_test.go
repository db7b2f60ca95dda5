package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/workload"
)

func TestLiveConfigErrors(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	s := workload.Spec{Name: "constant", Rate: 10, Duration: time.Second}
	for _, tc := range []struct {
		name string
		cfg  bench.LiveConfig
		want string
	}{
		{"negative workers", bench.LiveConfig{Config: bench.Config{Policy: p, Workload: s}, Workers: -1}, "Workers -1"},
		{"too many workers", bench.LiveConfig{Config: bench.Config{Policy: p, Workload: s}, Workers: bench.MaxWorkers + 1}, "Workers"},
		{"negative cap", bench.LiveConfig{Config: bench.Config{Policy: p, Workload: s}, MaxInFlight: -1}, "MaxInFlight -1"},
		{"negative lateness", bench.LiveConfig{Config: bench.Config{Policy: p, Workload: s}, LateAfter: -1}, "LateAfter"},
		{"invalid policy", bench.LiveConfig{Config: bench.Config{Workload: s}}, "policy"},
	} {
		_, err := bench.Live(context.Background(), tc.cfg, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// TestLiveWarnings: the warnings name the run and the figure, and a sim
// run has none.
func TestLiveWarnings(t *testing.T) {
	runs := []bench.Run{
		{Algorithm: "sim-run"},
		{Algorithm: "fine", Live: &bench.LiveStats{LatePct: 4.9, Scheduled: 100}},
		{Algorithm: "late", Live: &bench.LiveStats{LatePct: 7.5, LateAfterNS: int64(time.Millisecond), Lateness: &bench.Percentiles{P99: 3e6}}},
		{Algorithm: "dropping", Live: &bench.LiveStats{Dropped: 5, Scheduled: 100, MaxInFlight: 7}},
		{Algorithm: "waiting", Live: &bench.LiveStats{Unserved: 3, Calibration: &bench.Calibration{LatePct: 6}}},
		{Algorithm: "stuck", Live: &bench.LiveStats{Abandoned: 2}},
	}
	got := strings.Join(bench.LiveWarnings(runs), "\n")
	for _, want := range []string{
		"late: the sender started 7.5% of calls more than 1ms late (lateness p99 3ms)",
		"dropping: 5 of 100 arrivals (5.00%) dropped at -max-inflight 7",
		"waiting: 3 shaper waits",
		"stuck: 2 workers were still inside the limiter",
		"calibration: even a no-op limiter was started late for 6.0% of calls",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fine") || strings.Contains(got, "sim-run") {
		t.Errorf("warnings name a run that is fine:\n%s", got)
	}
}

// TestLiveWarningsBlameTheBackend: a late sender on a backend that timed
// out is blamed on the backend, with its error; on memory, on the machine.
func TestLiveWarningsBlameTheBackend(t *testing.T) {
	late := func(backend string, timeouts int64) bench.Run {
		r := bench.Run{Algorithm: "gcra", Backend: backend, Offered: 1000, Errors: timeouts,
			Live: &bench.LiveStats{LatePct: 40, LateAfterNS: int64(time.Millisecond), Lateness: &bench.Percentiles{P99: int64(time.Second)}}}
		if timeouts > 0 {
			r.ErrorKinds = map[string]int64{"timeout": timeouts}
			r.FirstError = "redis: gcra: context deadline exceeded"
		}
		return r
	}
	for _, tc := range []struct {
		name       string
		run        bench.Run
		want, lack string
	}{
		{"paused redis", late("redis", 300), "the redis backend timed out on 300 decisions (redis: gcra: context deadline exceeded)", "the machine, not"},
		{"busy machine", late("memory", 0), "the machine, not the limiter, was the bottleneck", "backend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := strings.Join(bench.LiveWarnings([]bench.Run{tc.run}), "\n")
			if !strings.Contains(ws, tc.want) || strings.Contains(ws, tc.lack) {
				t.Errorf("warnings %q: want %q, not %q", ws, tc.want, tc.lack)
			}
		})
	}
}
