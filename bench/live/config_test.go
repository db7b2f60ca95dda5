package live_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result/resulttest"
	"github.com/ratebench/ratebench/workload"
)

func TestConfigErrors(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	s := &workload.Constant{Rate: 10, Duration: time.Second, Keys: 1, Cost: 1}
	for _, tc := range []struct {
		name string
		cfg  live.Config
		want string
	}{
		{"negative workers", live.Config{Config: bench.Config{Policy: p, Workload: s}, Workers: -1}, "Workers -1"},
		{"too many workers", live.Config{Config: bench.Config{Policy: p, Workload: s}, Workers: live.MaxWorkers + 1}, "Workers"},
		{"negative cap", live.Config{Config: bench.Config{Policy: p, Workload: s}, MaxInFlight: -1}, "MaxInFlight -1"},
		{"negative lateness", live.Config{Config: bench.Config{Policy: p, Workload: s}, LateAfter: -1}, "LateAfter"},
		{"invalid policy", live.Config{Config: bench.Config{Workload: s}}, "policy"},
	} {
		_, err := live.Run(context.Background(), tc.cfg, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// TestNoFlagNames: the engine states what happened; only the command line
// knows its flags and names them, so the engine's own code names none.
func TestNoFlagNames(t *testing.T) {
	for _, m := range resulttest.SourceMatches(t, resulttest.FlagName) {
		t.Errorf("names a flag: %s", m)
	}
}
