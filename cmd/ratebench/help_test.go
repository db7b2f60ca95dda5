package main

import (
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// TestDidYouMean: a mistyped command, flag, algorithm, workload or
// backend is refused with exit 2, in one line without a Go package's
// name, naming the closest names.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "command", args: []string{"rnu"}, want: `unknown command "rnu" (did you mean run?)`},
		{name: "flag", args: []string{"run", "-wokload", "boundary"}, want: "unknown flag -wokload (did you mean -workload?)"},
		{name: "algorithm", args: []string{"run", "-algos", "gcar"}, want: `unknown algorithm "gcar" (did you mean gcra?)`},
		{name: "algorithm of attack", args: []string{"attack", "-url", "http://127.0.0.1:1/", "-algo", "sliding-logg"},
			want: `unknown algorithm "sliding-logg" (did you mean sliding-log?)`},
		{name: "workload", args: []string{"run", "-workload", "poison"}, want: `unknown workload (did you mean poisson?)`},
		{name: "backend", args: []string{"run", "-backend", "reddis://127.0.0.1:6379"}, want: "(did you mean redis or rediss?)"},
		{name: "help of a command", args: []string{"help", "prob"}, want: `unknown command "prob" (did you mean probe?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, t.TempDir(), tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
				t.Errorf("stderr is %d lines: %q", n+1, stderr)
			}
			for _, pkg := range []string{" bench:", " all:", " workload:", " backend:", " httpexec:"} {
				if strings.Contains(stderr, pkg) {
					t.Errorf("stderr %q names the package %s", stderr, pkg)
				}
			}
		})
	}
}

// TestNamesAnyCase: commands, algorithms and workloads are taken in any
// case, and result.json holds their own names; -algo is -algos's second
// name on run, as -algos is -algo's on serve and attack.
func TestNamesAnyCase(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, dir, "RUN", "-algo", "GCRA,Fixed-Window", "-workload", "Boundary", "-duration", "2s", "-no-report", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Runs[0].Algorithm != "gcra" || res.Runs[1].Algorithm != "fixed-window" || res.Workload["name"] != "boundary" {
		t.Errorf("runs %v of workload %v, want gcra and fixed-window of boundary", res.Runs, res.Workload["name"])
	}
}

// TestRateThatCannotMean: -rate 0 given to run is an error (it used to
// run at the default rate), and a -rate the workload ignores is a
// warning.
func TestRateThatCannotMean(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, "run", "-rate", "0", "-no-report", "-out", filepath.Join(dir, "a"))
	if code != 2 || !strings.Contains(stderr, "-rate 0 must be a positive number") {
		t.Errorf("-rate 0: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, dir, "run", "-algos", "gcra", "-workload", "boundary", "-rate", "150", "-duration", "2s", "-no-report", "-out", filepath.Join(dir, "b"))
	if code != 0 || !strings.Contains(stderr, "warning: -rate 150 is not used: the boundary workload sets its own arrivals") {
		t.Errorf("boundary -rate 150: exit %d, stderr %q", code, stderr)
	}
}

// TestHelp: `help CMD` is `CMD -h`: a usage line, examples, flags by
// group with one default each; run's ends with -check's grammar.
func TestHelp(t *testing.T) {
	_, viaHelp, _ := runCLI(t, t.TempDir(), "help", "run")
	code, viaFlag, _ := runCLI(t, t.TempDir(), "run", "-h")
	if code != 0 || viaHelp != viaFlag {
		t.Fatalf("help run and run -h differ (exit %d):\n%s\n---\n%s", code, viaHelp, viaFlag)
	}
	for _, want := range []string{"usage: ratebench run ", "\nexamples:\n", "\nalgorithms and policy:\n  -algos, -algo string\n",
		"\nworkload:\n", "\nengine:\n", "\noutput:\n", "-check 'COND, COND, ...'", "  burst_ratio "} {
		if !strings.Contains(viaHelp, want) {
			t.Errorf("run's help lacks %q:\n%s", want, viaHelp)
		}
	}
	for _, cmd := range []string{"run", "attack", "probe", "serve", "merge", "fit"} {
		_, out, _ := runCLI(t, t.TempDir(), cmd, "-h")
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s -h: two defaults in %q", cmd, line)
			}
		}
	}
}

// TestVersionLine: the version, commit and Go as the build info holds
// them, and "commit unknown" for a build without one.
func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{name: "go install of a tag", want: "ratebench v0.3.0 (commit 0123456789ab, 2026-12-01T10:00:00Z) go1.26.0",
			info: debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}}}},
		{name: "a checkout with changes", want: "ratebench " + version() + " (devel) (commit 0123456789ab, modified) go1.26.0",
			info: debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}},
		{name: "go run", want: "ratebench " + version() + " (devel) (commit unknown) go1.26.0", info: debug.BuildInfo{GoVersion: "go1.26.0"}},
	} {
		if got := versionLine(&tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	code, out, _ := runCLI(t, t.TempDir(), "version")
	if code != 0 || !strings.HasPrefix(out, "ratebench ") || !strings.Contains(out, " go1.") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}
