package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMostDecisionsFailed: a run on a corrupted SQLite file, whose every
// decision fails, writes its results, says why with the backend's error
// and exits 1, not 0.
func TestMostDecisionsFailed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db.sqlite")
	backend := "sqlite://" + db
	if code, _, stderr := runCLI(t, dir, "run", "-algos", "fixed-window", "-backend", backend, "-keys", "3", "-duration", "1s", "-no-report", "-out", filepath.Join(dir, "first")); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	// Overwrite every page after the first (the schema) with garbage.
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= 4096 {
		t.Fatalf("the database has %d bytes, want pages to corrupt", len(data))
	}
	for i := 4096; i < len(data); i++ {
		data[i] = 0xff
	}
	if err := os.WriteFile(db, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "broken")
	code, _, stderr := runCLI(t, dir, "run", "-algos", "fixed-window", "-backend", backend, "-duration", "1s", "-no-report", "-out", out)
	if code != 1 || !strings.Contains(stderr, "most decisions failed") || !strings.Contains(stderr, "malformed") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the failure and SQLite's error", code, stderr)
	}
	if r := readRun(t, out); r.Errors != r.Offered || r.Offered == 0 || !strings.Contains(r.FirstError, "malformed") {
		t.Errorf("errors %d of %d, first error %q", r.Errors, r.Offered, r.FirstError)
	}
}
