package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms/redis/redistest"
)

// writeTrace writes a CSV trace of rows "at_ns,key,cost" to dir/name.
func writeTrace(t *testing.T, dir, name string, rows []string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	body := "at_ns,key,cost\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fourKeyTrace is 15 s of 4 keys, each sending 5 per second, all on
// one instant every 200ms.
func fourKeyTrace(t *testing.T, dir string) string {
	var rows []string
	for at := time.Duration(0); at < 15*time.Second; at += 200 * time.Millisecond {
		for k := range 4 {
			rows = append(rows, fmt.Sprintf("%d,key-%d,1", at, k))
		}
	}
	return writeTrace(t, dir, "four.csv", rows)
}

// TestReplayDefaults: a replay plays its whole trace unless -duration is
// given, and limits each of its keys on its own, on every backend alike.
func TestReplayDefaults(t *testing.T) {
	dir := t.TempDir()
	trace := fourKeyTrace(t, dir)
	run := func(name string, extra ...string) (offered, admitted int64) {
		out := filepath.Join(dir, name)
		args := append([]string{"run", "-algos", "fixed-window", "-workload", "replay:" + trace, "-limit", "2", "-window", "1s", "-no-report", "-out", out}, extra...)
		if code, _, stderr := runCLI(t, dir, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		r := readRun(t, out)
		return r.Offered, r.Admitted
	}
	// The whole trace: 4 keys x 5 per second x 15 s; each key admits 2 of
	// its 5 in each of the 15 windows.
	offered, admitted := run("memory")
	if offered != 300 || admitted != 4*2*15 {
		t.Fatalf("memory: offered %d, admitted %d; want 300 and 120", offered, admitted)
	}
	if offered, _ := run("cut", "-duration", "5s"); offered != 100 {
		t.Errorf("-duration 5s: offered %d, want 100", offered)
	}
	if _, got := run("sqlite", "-backend", "sqlite://"+filepath.Join(dir, "db.sqlite")); got != admitted {
		t.Errorf("SQLite admitted %d, memory %d", got, admitted)
	}
	if redistest.Missing() != "" && !redistest.Required() {
		t.Logf("Redis part skipped: %s", redistest.Missing())
		return
	}
	srv, err := redistest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if _, got := run("redis", "-backend", "redis://"+srv.Addr()); got != admitted {
		t.Errorf("Redis admitted %d, memory %d", got, admitted)
	}
}

// TestReplayBadTrace: a trace with a bad row anywhere, or more keys than
// -max-keys, is bad input found before the run: exit 2, nothing written.
func TestReplayBadTrace(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	for i := range 1000 {
		rows = append(rows, fmt.Sprintf("%d,k%d,1", i*1000, i))
	}
	good := writeTrace(t, dir, "good.csv", rows)
	bad := writeTrace(t, dir, "bad.csv", append(rows, "2000000,k1,one"))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad last row", []string{"-workload", "replay:" + bad}, `bad.csv line 1002: cost "one" is not an integer`},
		{"more keys than the bound", []string{"-workload", "replay:" + good, "-max-keys", "100"}, "more than 100 distinct keys, and -max-keys is 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, dir)
			code, _, stderr := runCLI(t, dir, append([]string{"run", "-algos", "gcra", "-out", filepath.Join(dir, "out")}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 with %q", code, stderr, tc.want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("wrote:\n%s\nwant\n%s", after, before)
			}
		})
	}
}

// TestReplayTiesAreDeterministic: keys that tie for the most admitted in
// any W name the same span in every run: the one that ends first, then
// the first key in order.
func TestReplayTiesAreDeterministic(t *testing.T) {
	dir := t.TempDir()
	// Five keys with 3 admits each, all ending at 900ms, spread over
	// different spans: key a's is the longest.
	var rows []string
	for i, k := range []string{"a", "b", "c", "d", "e"} {
		rows = append(rows, fmt.Sprintf("%d,%s,1", i*100_000_000, k))
	}
	for _, at := range []int{500, 900} {
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			rows = append(rows, fmt.Sprintf("%d,%s,1", at*1_000_000, k))
		}
	}
	trace := writeTrace(t, dir, "ties.csv", rows)
	var first []byte
	for i := range 6 {
		out := filepath.Join(dir, fmt.Sprint("run", i))
		if code, _, stderr := runCLI(t, dir, "run", "-algos", "sliding-log,gcra", "-workload", "replay:"+trace, "-limit", "3", "-no-report", "-out", out); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b := withoutMeta(t, out)
		if i == 0 {
			first = b
			if run := readRun(t, out); run.MaxWindowSpanNS != int64(900*time.Millisecond) {
				t.Errorf("max_window_span_ns %d: want key a's 900ms", run.MaxWindowSpanNS)
			}
			continue
		}
		if !bytes.Equal(b, first) {
			t.Fatalf("run %d: result.json differs from the first run's", i)
		}
	}
}

// TestReplayInterruptWhileReading: a signal while the trace is read (a
// large trace takes a while) stops the command at once with 130, and
// nothing is written.
func TestReplayInterruptWhileReading(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	for i := range 20000 {
		rows = append(rows, fmt.Sprintf("%d,k%d,1", i, i%7))
	}
	trace := writeTrace(t, dir, "big.csv", rows)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, args: []string{"ratebench"}}
	t.Chdir(dir)
	if code := e.main(ctx, []string{"run", "-workload", "replay:" + trace, "-out", "out"}); code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("an interrupted read left an output folder")
	}
}
