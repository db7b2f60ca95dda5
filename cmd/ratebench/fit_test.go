//go:build !race

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
)

// TestFitCommand: an attack's trace on `ratebench serve` is fitted to the
// served algorithm and policy, written to fit.json and the page; a folder
// without a trace is bad input.
func TestFitCommand(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "50", "-window", "1s", "-burst", "20")
	dir := t.TempDir()
	out := filepath.Join(dir, "atk")
	if code, _, stderr := attackCLI(t, context.Background(), "-url", s.url, "-workload", "poisson", "-rate", "100", "-duration", "6s", "-out", out); code != 0 {
		t.Fatalf("attack: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, dir, "fit", out)
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	f, err := fit.ReadResult(out)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Best
	if b.Algorithm != "gcra" || b.Limit != 50 || b.WindowNS != 1e9 || b.Burst < 19 || b.Burst > 21 || b.AgreementPct < 99 || b.AmbiguousPct > 10 {
		// Poisson arrivals at twice the rate put many requests near the
		// bucket's edge: up to a tenth too close to call.
		t.Errorf("best fit %s at %.2f%% (%.2f%% too close to call): want gcra of 50 per 1s with a burst of 20 within 1, at least 99%%, at most 10%%",
			b, b.AgreementPct, b.AmbiguousPct)
	}
	const advertised = "It advertises 50 per 1s (RateLimit-Policy), which matches the fit."
	if !strings.Contains(stdout, "The service behaves like gcra of 50 per 1s") || !strings.Contains(stdout, advertised) {
		t.Errorf("stdout:\n%s", stdout)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(page), "What the service behaves like") || !strings.Contains(string(page), advertised) {
		t.Errorf("report.html has no fit section, or not the advertised policy (%v)", err)
	}

	// A probe's folder whose verdict is stale: a refit with -out writes
	// the new verdict elsewhere and leaves the folder as it was; in place,
	// result.json's probe says what fit.json says.
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	res.Probe = &result.Probe{Best: fit.Fit{Algorithm: "sliding-log", Limit: 1, WindowNS: 1e9}, Sentence: "stale"}
	if err := res.WriteFile(filepath.Join(out, "result.json")); err != nil {
		t.Fatal(err)
	}
	refit := filepath.Join(dir, "refit")
	if code, _, stderr := runCLI(t, dir, "fit", "-window", "1s", "-limit", "50", "-out", refit, out); code != 0 {
		t.Fatalf("fit -out: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		dir, want string
	}{
		{dir: out, want: "sliding-log"}, // untouched by a refit written elsewhere
		{dir: refit, want: "gcra"},
	} {
		r, err := result.ReadFile(filepath.Join(tc.dir, "result.json"))
		if err != nil || r.Probe == nil || r.Probe.Best.Algorithm != tc.want {
			t.Errorf("%s: probe %+v (%v), want best %s", tc.dir, r.Probe, err, tc.want)
		}
	}
	if code, _, stderr := runCLI(t, dir, "fit", out); code != 0 {
		t.Fatalf("refit: exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err = fit.ReadResult(out)
	if err != nil || r.Probe.Best.Algorithm != f.Best.Algorithm || r.Probe.Best.Limit != f.Best.Limit || r.Probe.Sentence != f.Sentence() {
		t.Errorf("after a refit in place, result.json's probe %s (%q) and fit.json's %s differ (%v)", r.Probe.Best, r.Probe.Sentence, f.Best, err)
	}

	// A run folder without requests.csv.
	sim := filepath.Join(dir, "sim")
	if code, _, stderr := runCLI(t, dir, "run", "-algos", "gcra", "-duration", "1s", "-no-report", "-out", sim); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, dir, "fit", sim); code != 2 || !strings.Contains(stderr, "has no requests.csv") {
		t.Errorf("fit of a folder without a trace: exit %d, %q", code, stderr)
	}
}

// TestFitHelpAndFlags: fit has a usage line, examples and its flags, and
// a limit without its window is bad input.
func TestFitHelpAndFlags(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := runCLI(t, dir, "fit", "-h")
	for _, want := range []string{"usage: ratebench fit DIR", "examples:", "-window", "-limit", "-out"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("fit -h: exit %d, lacks %q:\n%s", code, want, stdout)
		}
	}
	if code, _, stderr := runCLI(t, dir, "fit", "-limit", "50", dir); code != 2 || !strings.Contains(stderr, "-window") {
		t.Errorf("fit -limit without -window: exit %d, %q", code, stderr)
	}
}
