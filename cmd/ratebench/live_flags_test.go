package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveBadFlags: bad live flags are one clear line, exit 2, no folder.
func TestLiveBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no workers", []string{"-workers", "0"}, "-workers 0 must be between 1 and 1024"},
		{"negative workers", []string{"-workers", "-3"}, "-workers -3"},
		{"too many workers", []string{"-workers", "5000"}, "-workers 5000"},
		{"negative cap", []string{"-max-inflight", "-1"}, "-max-inflight -1 must be >= 1"},
		{"zero cap", []string{"-max-inflight", "0"}, "-max-inflight 0"},
		{"not a number", []string{"-workers", "many"}, "-workers"},
		{"unknown mode", []string{"-mode", "turbo"}, `-mode "turbo": want sim or live`},
		{"live scenario", []string{"-scenario", "default"}, "-scenario runs in sim mode only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "-mode", "live", "-duration", "100ms"}, tc.args...)
			code, _, stderr := runCLI(t, dir, append(args, "-out", filepath.Join(dir, "out"))...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("bad input created %v", entries)
			}
		})
	}
}

// TestLiveSaysItsWallTime: a live run that takes longer than its duration
// (one pass per algorithm, then the calibration) says so before it starts.
func TestLiveSaysItsWallTime(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // only what is said before the run matters here
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, args: []string{"ratebench"}}
	t.Chdir(dir)
	e.main(ctx, []string{"run", "-mode", "live", "-algos", "gcra,sliding-log,fixed-window", "-rate", "100", "-duration", "10s", "-no-report", "-out", "out"})
	if !strings.Contains(stderr.String(), "this run takes about 35s of wall time") {
		t.Errorf("stderr %q: want the expected wall time, 3 x 10s + 5s", stderr.String())
	}
}
