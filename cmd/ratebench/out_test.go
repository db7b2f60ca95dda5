package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDefaultFoldersAreUnique: two runs without -out write two folders
// under results/ (the claiming is report/outdir's, tested there).
func TestDefaultFoldersAreUnique(t *testing.T) {
	t.Chdir(t.TempDir())
	for range 2 {
		if code, _, stderr := runCLI(t, ".", "run", "-algos", "gcra", "-duration", "1s", "-workload", "constant", "-no-report"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	found, _ := filepath.Glob(filepath.Join("results", "*", "result.json"))
	if len(found) != 2 {
		t.Fatalf("two runs wrote %d results: %v", len(found), found)
	}
}

// TestOutRefusesForeignFolder: a run never writes into an existing
// non-empty folder that holds no ratebench result.
func TestOutRefusesForeignFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "photos")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "cat.png"), []byte("meow"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	for _, args := range [][]string{
		{"run", "-algos", "gcra", "-duration", "1s", "-out", out},
		{"boundary", "-algos", "gcra", "-out", out},
		{"run", "-scenario", "default", "-out", out},
	} {
		code, _, stderr := runCLI(t, dir, args...)
		if code != 2 || !strings.Contains(stderr, "holds no ratebench") {
			t.Errorf("%q: exit %d, stderr %q; want 2 refusing the folder", args, code, stderr)
		}
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("the folder changed:\n%s\nwant\n%s", after, before)
	}
}

// TestOutReplacesOwnOutputs: a run into an earlier result's folder
// replaces that result's outputs, stale charts and .hgrm files included,
// and leaves the user's own files alone.
func TestOutReplacesOwnOutputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r")
	// First: three keys (keys.png) and a shaper (leaky-queue.hgrm).
	if code, _, stderr := runCLI(t, dir, "run", "-algos", "gcra,leaky-queue", "-keys", "3", "-duration", "2s", "-trace", "-out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"keys.png", "leaky-queue.hgrm", "report.html", "requests.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatalf("the first run wrote no %s: %v", f, err)
		}
	}
	mine := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(mine, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Second: one key, no shaper, no trace.
	if code, _, stderr := runCLI(t, dir, "run", "-algos", "gcra", "-duration", "2s", "-out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"keys.png", "leaky-queue.hgrm", "requests.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s of the first run is still there", f)
		}
	}
	if data, err := os.ReadFile(mine); err != nil || string(data) != "keep me" {
		t.Errorf("the user's file: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report of the second run: %v", err)
	}
}

// TestOutUnwritable: an -out that cannot be written is bad input found
// before the run (not after it), and what the check made is removed.
func TestOutUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := runCLI(t, dir, "run", "-mode", "live", "-algos", "gcra", "-duration", "5s", "-out", filepath.Join(file, "out"))
	if code != 2 || time.Since(start) > 2*time.Second {
		t.Errorf("exit %d after %v: %s; want 2 at once", code, time.Since(start), stderr)
	}
	// A run that fails to start (no Redis there: bad input, found before
	// the run) leaves no folder behind, however deep the check made it.
	code, _, stderr = runCLI(t, dir, "run", "-algos", "gcra", "-backend", "redis://127.0.0.1:1", "-backend-timeout", "100ms",
		"-out", filepath.Join(dir, "new", "deep", "out"))
	if code != 2 {
		t.Errorf("unreachable backend: exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// TestWriteFailureStillPrints: when the folder breaks during the run, the
// summary table is printed all the same and the exit status is 1.
func TestWriteFailureStillPrints(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, args: []string{"ratebench"}}
	e.beforeWrite = func() { // the folder becomes a file
		if err := os.Remove(out); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	code := e.main(context.Background(), []string{"run", "-algos", "gcra,sliding-log", "-duration", "2s", "-out", out})
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr.String())
	}
	for _, want := range []string{"gcra", "sliding-log", "ADMITTED"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
}
