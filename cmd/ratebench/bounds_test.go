package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// TestBoundsBadInput: values that would run forever, hold unbounded
// memory or silently mean something else are bad input: one line, exit 2,
// no folder, at once.
func TestBoundsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error line
	}{
		// A duration without a unit says so, not "parse error".
		{"duration without unit", []string{"run", "-duration", "10"}, "needs a unit, e.g. 10s"},
		{"window without unit", []string{"run", "-window", "1"}, "needs a unit"},
		{"not a duration", []string{"boundary", "-window", "soon"}, "not a duration"},
		// Cost 0 is not 1.
		{"zero cost", []string{"run", "-cost", "0"}, "-cost 0 must be >= 1"},
		// More arrivals than any run could hold.
		{"huge rate", []string{"run", "-rate", "1e300"}, "-max-arrivals"},
		{"huge duration", []string{"run", "-duration", "2562047h"}, "-max-arrivals"},
		{"huge live rate", []string{"run", "-mode", "live", "-rate", "1e300"}, "-max-arrivals"},
		{"huge attack", []string{"attack", "-url", "http://127.0.0.1:1/", "-rate", "1e300"}, "-max-arrivals"},
		{"bad max-arrivals", []string{"run", "-max-arrivals", "0"}, "-max-arrivals"},
		// More keys than a run may hold, unless lossy eviction is chosen.
		{"keys over max", []string{"run", "-keys", "2000000000"}, "-keys 2000000000 is more than -max-keys 1048576"},
		{"attack keys over max", []string{"attack", "-url", "http://127.0.0.1:1/", "-keys", "5", "-key-header", "X-K", "-max-keys", "4"}, "-max-keys 4"},
		{"bad max-keys", []string{"run", "-max-keys", "0"}, "-max-keys"},
		{"bad on-full", []string{"run", "-on-full", "drop"}, "-on-full"},
		// An endless line is found before the run, at its bound.
		{"endless trace line", []string{"run", "-workload", "replay:/dev/zero"}, "line 1: is longer than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			code, _, stderr := runCLI(t, dir, append(tc.args, "-out", filepath.Join(dir, "out"))...)
			if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tc.want)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %v to refuse", took)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("bad input created %v", entries)
			}
		})
	}
}

// TestCostAboveCapacityWarns: a cost no algorithm can admit at once is
// run, but said.
func TestCostAboveCapacityWarns(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, "run", "-algos", "gcra,fixed-window", "-limit", "100", "-burst", "200", "-cost", "150",
		"-duration", "1s", "-no-report", "-out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 150 fits gcra's burst of 200, not the fixed window's limit of 100.
	if !strings.Contains(stderr, "warning: -cost 150 is more than fixed-window can ever admit at once") {
		t.Errorf("stderr %q: want a warning naming fixed-window alone", stderr)
	}
}

// TestLossyEvictionIsReported: more keys than -max-keys run only with
// -on-full evict-lossy, and the lost state is said in the result and on
// the terminal.
func TestLossyEvictionIsReported(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, dir, "run", "-algos", "sliding-log", "-workload", "constant", "-keys", "5000", "-rate", "5000",
		"-limit", "1", "-window", "1h", "-duration", "2s", "-max-keys", "1000", "-on-full", "evict-lossy", "-no-report", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := readRun(t, out)
	// Each key's second arrival is a second after its first: within the
	// hour, so an exact limiter rejects it; a forgotten key admits it.
	if res.LossyEvictions == 0 || res.Admitted <= 5000 || res.DisagreementPct <= 0 {
		t.Errorf("lossy %d, admitted %d, disagreement %.2f%%: want evictions, more than 5000 admitted, and the reference disagreeing",
			res.LossyEvictions, res.Admitted, res.DisagreementPct)
	}
	if !strings.Contains(stderr, "forgot the state of") {
		t.Errorf("stderr %q: want the lost state said", stderr)
	}
}

// readRun reads the first run of DIR/result.json.
func readRun(t *testing.T, dir string) result.Run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.Runs[0]
}
