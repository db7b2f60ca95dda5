package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// runCLI runs the command line in dir and returns the exit status and
// what was printed.
func runCLI(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, args: append([]string{"ratebench"}, args...)}
	t.Chdir(dir)
	code := e.main(context.Background(), args)
	return code, out.String(), errb.String()
}

func TestBadInputExits2WithOneLineAndNoFolder(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"unknown algorithm", []string{"run", "-algos", "nope"}, "unknown algorithm"},
		{"unknown workload", []string{"run", "-workload", "tides"}, "tides"},
		{"negative rate", []string{"run", "-rate", "-5"}, "-rate"},
		{"NaN rate", []string{"run", "-rate", "NaN"}, "-rate"},
		{"zero limit", []string{"run", "-limit", "0"}, "limit"},
		{"fractional limit", []string{"run", "-limit", "1.5"}, "limit"},
		{"negative window", []string{"run", "-window", "-1s"}, "window"},
		{"zero duration", []string{"run", "-duration", "0s"}, "-duration"},
		{"replicas below one", []string{"run", "-replicas", "0"}, "-replicas"},
		{"keys below one", []string{"run", "-keys", "0"}, "-keys"},
		{"missing trace", []string{"run", "-workload", "replay:missing.csv"}, "missing.csv"},
		{"unknown flag", []string{"run", "-frobnicate"}, "frobnicate"},
		{"stray argument", []string{"run", "extra"}, "extra"},
		{"unknown command", []string{"fly"}, "fly"},
		{"bad boundary limit", []string{"boundary", "-limit", "-3"}, "limit"},
		{"missing scenario", []string{"run", "-scenario", "nope.yaml"}, "nope.yaml"},
		{"trace of a scenario", []string{"run", "-scenario", "default", "-trace"}, "-trace"},
		{"prefix of a scenario", []string{"run", "-scenario", "default", "-prefix", "p"}, "-prefix"},
		{"edge offset off boundary", []string{"run", "-workload", "poisson", "-edge-offset", "1ms"}, "-edge-offset"},
		{"edge offset of a window", []string{"run", "-workload", "boundary", "-edge-offset", "1s"}, "-edge-offset 1s must be less than window 1s"},
		{"probe without a URL", []string{"probe"}, "-url"},
		{"probe align", []string{"probe", "-url", "http://127.0.0.1:1/", "-align", "midnight"}, "-align"},
		{"probe edge offset of a window", []string{"probe", "-url", "http://127.0.0.1:1/", "-window", "1s", "-edge-offset", "1s"}, "-edge-offset"},
		{"probe edge offset off the clock", []string{"probe", "-url", "http://127.0.0.1:1/", "-align", "first-request", "-edge-offset", "5ms"}, "-edge-offset"},
		{"probe too few requests", []string{"probe", "-url", "http://127.0.0.1:1/", "-max-requests", "10"}, "-max-requests"},
		{"probe expects no model", []string{"probe", "-url", "http://127.0.0.1:1/", "-expect", "gcar 100/1s"}, "-expect"},
		{"probe expects a bad rate", []string{"probe", "-url", "http://127.0.0.1:1/", "-expect", "100/soon"}, "-expect"},
		{"unknown align", []string{"run", "-workload", "boundary", "-align", "noon"}, `-align "noon" is not epoch or first-request`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runCLI(t, dir, append(tc.args, "-out", filepath.Join(dir, "out"))...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("bad input created %v", entries)
			}
		})
	}
}

// TestBadScenarioNamesTheField: a scenario that cannot run is bad input,
// exit 2, with the field named (the fields are bench/scenario's, tested
// there), and no output folder made.
func TestBadScenarioNamesTheField(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, want string
	}{
		{name: "unknown field", body: "policies: [{limit: 10, window: 1s}]\nworkloads: [{name: constant, rat: 5}]\n", want: "rat"},
		{name: "bad workload", body: "policies: [{limit: 10, window: 1s}]\nworkloads: [{name: constant}, {name: tides}]\n", want: "workloads[1]"},
	} {
		path := filepath.Join(dir, tc.name+".yaml")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, dir, "run", "-scenario", path, "-out", filepath.Join(dir, "out"))
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming %q", tc.name, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a bad scenario created the output folder")
	}
}

// TestResultIsDeterministic: the same seed and flags give the same
// result.json byte for byte, meta aside.
func TestResultIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	read := func(out string) []byte {
		args := []string{"run", "-workload", "zipf", "-keys", "20", "-rate", "400", "-duration", "5s", "-replicas", "2", "-seed", "9", "-no-report", "-out", out}
		if code, _, stderr := runCLI(t, dir, args...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return withoutMeta(t, out)
	}
	a, b := read(filepath.Join(dir, "a")), read(filepath.Join(dir, "b"))
	if !bytes.Equal(a, b) {
		t.Fatal("same seed and flags, different result.json")
	}
}

// withoutMeta returns DIR/result.json without its meta, the one part that
// may differ between two runs of the same seed and flags.
func withoutMeta(t *testing.T, dir string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	delete(r, "meta")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBoundaryExplains(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, dir, "boundary", "-limit", "50", "-window", "1s", "-no-report", "-out", filepath.Join(dir, "b"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"fixed-window admitted 2.00x its limit (100 of 50)", "sliding-log admitted 1.00x", "why:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("boundary output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestDefaultScenarioRuns(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, dir, "run", "-scenario", "default", "-no-report", "-out", filepath.Join(dir, "c"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"constant", "poisson", "burst", "boundary"} {
		if _, err := os.Stat(filepath.Join(dir, "c", w, "result.json")); err != nil {
			t.Errorf("default scenario: %v", err)
		}
	}
	if !strings.Contains(stdout, "all results:") {
		t.Errorf("no closing line saying where the results are:\n%s", stdout)
	}
}

// TestBoundaryPhaseFlags: an attack in phase with a fixed window's edges
// gets 2L through; shifted by half a window both halves fall in one
// window and only L does; a window that opens at a key's first request
// is attacked in phase by -align first-request.
func TestBoundaryPhaseFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int64 // max admitted in any W
	}{
		{name: "in phase", args: []string{"-algos", "fixed-window"}, want: 100},
		{name: "half a window off", args: []string{"-algos", "fixed-window", "-edge-offset", "500ms"}, want: 50},
		// The opener takes one of the first window's L: 2L - 1.
		{name: "first request", args: []string{"-algos", "fixed-window-first", "-align", "first-request"}, want: 99},
		{name: "first request attacked on the epoch", args: []string{"-algos", "fixed-window-first"}, want: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "b")
			args := append([]string{"run", "-workload", "boundary", "-limit", "50", "-duration", "4s", "-no-report", "-out", out}, tc.args...)
			if code, _, stderr := runCLI(t, dir, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Runs[0].MaxAdmittedInWindow; got != tc.want {
				t.Errorf("most admitted in W %d, want %d", got, tc.want)
			}
		})
	}
}
