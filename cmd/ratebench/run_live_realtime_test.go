//go:build !race

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Live runs are real time: each test here is a run of well under a second,
// or an interrupt of a long one.

// TestLiveRun: -mode live writes the same result.json as sim, with the
// live measures. (TestLiveInterrupt covers the report: rendering it takes
// seconds under -race.)
func TestLiveRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "live")
	code, stdout, stderr := runCLI(t, dir, "run", "-mode", "live", "-algos", "gcra,leaky-queue", "-limit", "100", "-rate", "1000",
		"-duration", "300ms", "-workers", "2", "-max-inflight", "100", "-no-report", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.Mode != "live" || res.Meta.Interrupted || len(res.Runs) != 2 {
		t.Fatalf("meta %+v, %d runs", res.Meta, len(res.Runs))
	}
	for _, r := range res.Runs {
		l := r.Live
		// The leaky queue's waits count as in flight: with 100 of them
		// it drops arrivals, more of them on a busy machine.
		if l == nil || l.Workers != 2 || l.MaxInFlight != 100 || r.Offered < 100 || r.Offered+l.Dropped != l.Scheduled ||
			r.Latency.Count != r.Offered || l.Calibration == nil || l.HarnessOverheadNS <= 0 {
			t.Errorf("%s: offered %d, live %+v", r.Algorithm, r.Offered, l)
		}
	}
	for _, want := range []string{"gcra: sent", "leaky-queue: sent", "harness: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// TestLiveInterrupt: a cancelled context (what main makes of Ctrl-C)
// stops a live run within a second, still writes result.json and the
// report for what ran, and exits 130.
func TestLiveInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cut")
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, args: []string{"ratebench", "run"}}
	ctx, cancel := context.WithCancel(context.Background())
	const after = 400 * time.Millisecond
	time.AfterFunc(after, cancel)
	start := time.Now()
	code := e.main(ctx, []string{"run", "-mode", "live", "-algos", "gcra,uber", "-rate", "2000", "-duration", "1h", "-out", out})
	if code != 130 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stop := time.Duration(res.Meta.ElapsedNS) - after; stop > time.Second {
		t.Errorf("the engine stopped %v after the interrupt, want within 1s", stop)
	}
	if !res.Meta.Interrupted || len(res.Runs) != 1 || res.Runs[0].Offered < 200 {
		t.Errorf("interrupted %v, %d runs: want the first run cut short", res.Meta.Interrupted, len(res.Runs))
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report after the interrupt: %v", err)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q: want the interrupt said", stderr.String())
	}
	t.Logf("interrupted after %v, command returned after %v", after, time.Since(start))
}

// TestLiveInterruptSignal sends SIGINT, then SIGTERM, to a built
// ratebench: the signal wiring of main, end to end. Each stops the run
// within a second, writes what ran and exits 128 + the signal's number, as
// shells expect.
func TestLiveInterruptSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT or SIGTERM to send on Windows")
	}
	dir := t.TempDir()
	bin := buildRatebench(t, dir)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			out := filepath.Join(dir, "cut-"+strconv.Itoa(int(tc.sig)))
			cmd := exec.Command(bin, "run", "-mode", "live", "-algos", "gcra", "-rate", "1000", "-duration", "1h", "-no-report", "-out", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // a real process: let the run start
			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("still running 10s after %v", tc.sig)
			}
			if took := time.Since(sent); took > time.Second {
				t.Errorf("exited %v after %v, want within 1s", took, tc.sig)
			}
			if got := cmd.ProcessState.ExitCode(); got != tc.code {
				t.Errorf("exit %d after %v, want %d: %s", got, tc.sig, tc.code, stderr.String())
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Meta.Interrupted || res.Runs[0].Offered == 0 {
				t.Errorf("interrupted %v, offered %d", res.Meta.Interrupted, res.Runs[0].Offered)
			}
		})
	}
}

// TestLiveStopsAtItsEnd: a rate this machine cannot hold no longer runs
// until killed: each pass stops sending at its duration and counts what
// it did not send, so the run's wall time stays near its length.
func TestLiveStopsAtItsEnd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, dir, "run", "-mode", "live", "-algos", "gcra", "-rate", "5e6", "-duration", "1s", "-workers", "2", "-no-report", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A 1s pass and at most 1s of calibration, with room for a busy host;
	// sending 5 million arrivals late would take far longer.
	if took := time.Duration(res.Meta.ElapsedNS); took > 6*time.Second {
		t.Errorf("a 1s live run took %v", took)
	}
	r := res.Runs[0]
	if l := r.Live; l.Scheduled != r.Offered+l.Dropped+l.Unsent || l.Scheduled < 4_900_000 {
		t.Errorf("scheduled %d, offered %d, dropped %d, unsent %d: want them to add up to the 5e6 due", l.Scheduled, r.Offered, l.Dropped, l.Unsent)
	}
}

// buildRatebench builds the command into dir and returns its path.
func buildRatebench(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool to build ratebench with: %v", err)
	}
	bin := filepath.Join(dir, "ratebench")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestReaderGone: a built ratebench whose stdout is a pipe nobody reads
// any more (`ratebench run ... | head -1` once head has its line) still
// writes its whole folder and exits 0: a broken pipe neither kills it
// (SIGPIPE) nor stops the writing.
func TestReaderGone(t *testing.T) {
	dir := t.TempDir()
	bin := buildRatebench(t, dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first line
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "-algos", "gcra,fixed-window", "-workload", "boundary", "-out", out)
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	w.Close()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	for _, name := range []string{"result.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
}
