package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestProgressFlag: an unknown -progress is bad input, exit 2, naming
// the modes (the displays are report/bars', tested there).
func TestProgressFlag(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, "run", "-progress", "fancy", "-no-report", "-out", filepath.Join(dir, "out"))
	if code != 2 || !strings.Contains(stderr, `-progress "fancy": want auto, bars, lines, off`) {
		t.Errorf("-progress fancy: exit %d, %q", code, stderr)
	}
}
