package live_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/live"
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
// knows its flags and names them, so bench's own code names none.
func TestNoFlagNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	flag := regexp.MustCompile(`"[^"]*-(rate|workers|max-inflight|connections|backend-timeout|on-full|max-keys)\b`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := flag.Find(data); m != nil {
			t.Errorf("%s names a flag: %s", f, m)
		}
	}
}
