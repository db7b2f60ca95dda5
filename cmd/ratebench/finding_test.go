package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTerminalOpensWithFinding: the first line a run prints is its
// finding, for the two cases a teacher shows; a scenario ends with each
// workload's finding and the index page that links them.
func TestTerminalOpensWithFinding(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		first string
	}{
		{name: "boundary", args: []string{"-algos", "fixed-window,sliding-log", "-workload", "boundary", "-duration", "3s"},
			first: "fixed-window let 2.00x its limit through, 200 of 100 within 20ms around t=1.01s: the boundary case, L just before a window edge and L just after. Held to L: sliding-log."},
		{name: "replicas", args: []string{"-algos", "sliding-log", "-workload", "constant", "-rate", "800", "-replicas", "4", "-duration", "3s"},
			first: "sliding-log x4 let 4.00x its limit through, 400 of 100 within "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := runCLI(t, dir, append([]string{"run", "-no-report", "-out", filepath.Join(dir, "out")}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if first, _, _ := strings.Cut(stdout, "\n"); !strings.HasPrefix(first, tc.first) {
				t.Errorf("first line %q, want it to start %q", first, tc.first)
			}
		})
	}
	t.Run("scenario", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		code, stdout, stderr := runCLI(t, dir, "run", "-scenario", "default", "-out", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		takeaway := stdout[strings.LastIndex(stdout, "\ntakeaway:\n"):]
		for _, want := range []string{"  boundary: fixed-window let 2.00x its limit through", "  burst: ", "pages:       " + filepath.Join(out, "index.html")} {
			if !strings.Contains(takeaway, want) {
				t.Errorf("the end of the output lacks %q:\n%s", want, takeaway)
			}
		}
		index, err := os.ReadFile(filepath.Join(out, "index.html"))
		if err != nil || !strings.Contains(string(index), `<a href="boundary/report.html">`) {
			t.Errorf("index.html links no boundary page (%v)", err)
		}
	})
}
