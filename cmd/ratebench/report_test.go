package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// cli runs one command line with its own output buffers (no chdir) and
// returns the exit status, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, args: append([]string{"ratebench"}, args...)}
	code := e.main(context.Background(), args)
	return code, out.String(), errb.String()
}

// smallResult is a hand-made result of three runs: a meter, a shaper with
// a delay histogram of n values, and a run with two keys.
func smallResult(n int) *result.Result {
	h := result.NewHistogram()
	for i := range n {
		_ = h.RecordValue(int64(i+1) * int64(time.Millisecond))
	}
	series := func(a ...int64) result.Series {
		return result.Series{BinNS: int64(100 * time.Millisecond), Admitted: a, Rejected: make([]int64, len(a))}
	}
	return &result.Result{
		Meta:     result.Meta{Version: "test", Mode: "sim", CPUs: 2, Args: []string{"ratebench", "run", "-duration", "1s"}},
		Policy:   result.PolicyJSON{Limit: 10, WindowNS: int64(time.Second), Burst: 10},
		Workload: map[string]any{"name": "constant", "keys": 2},
		Runs: []result.Run{
			{Algorithm: "gcra", Backend: "memory", Replicas: 1, Offered: 20, Admitted: 12, Rejected: 8,
				MaxAdmittedInWindow: 12, TheoryMaxInWindow: 20, BurstRatio: 1.2, TheoryRatio: 2, JainFairness: 1,
				Series: series(10, 1, 1), KeyCount: 2,
				Keys: []result.KeyCount{{Key: "a", Offered: 10, Admitted: 6}, {Key: "b", Offered: 10, Admitted: 6}}},
			{Algorithm: "leaky-queue", Backend: "memory", Replicas: 1, Offered: 20, Admitted: int64(n), Rejected: 20 - int64(n),
				MaxAdmittedInWindow: 10, TheoryMaxInWindow: 11, BurstRatio: 1, TheoryRatio: 1.1, JainFairness: 1,
				Series: series(1, 1, 1, 1), Latency: result.PercentilesOf(h), LatencyHDR: result.EncodeHistogram(h), KeyCount: 1},
		},
	}
}

// writeResult writes r to DIR/result.json.
func writeResult(t *testing.T, dir string, r *result.Result) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(filepath.Join(dir, "result.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot lists every file under dir with its size, mode and mtime.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(path + " " + fi.Mode().String() + " " + fi.ModTime().Format(time.RFC3339Nano) + " " + strconv.FormatInt(fi.Size(), 10) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReportBadFolder: a folder without result.json, or with a corrupt
// one, gets one line on stderr, exit 2, and is left as it was.
func TestReportBadFolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string // of result.json; "" for none
		want    string
	}{
		{"no result.json", "", "has no result.json"},
		{"not JSON", "{bad", "not a valid result.json"},
		{"truncated", `{"meta": {"version": "x"}, "runs": [`, "not a valid result.json"},
		{"no runs", `{"policy": {"limit": 1, "window_ns": 1}, "runs": []}`, "no runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.content != "" {
				if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			time.Sleep(10 * time.Millisecond) // so that a rewrite would show in an mtime
			code, stdout, stderr := cli(t, "report", dir)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the folder changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
	code, _, stderr := cli(t, "report", filepath.Join(t.TempDir(), "missing"))
	if code != 2 || !strings.Contains(stderr, "has no result.json") {
		t.Errorf("missing folder: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("report created the missing folder")
	}
	for _, args := range [][]string{{"report"}, {"report", "a", "b"}} {
		if code, _, stderr := cli(t, args...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, %q", args, code, stderr)
		}
	}
}

// TestReportRerenders: report rewrites every file from result.json and
// leaves result.json alone.
func TestReportRerenders(t *testing.T) {
	dir := writeResult(t, t.TempDir(), smallResult(5))
	data, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	code, stdout, stderr := cli(t, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"report.html", "series.csv", "admitted_rate.png", "burst_ratio.png", "latency.png", "keys.png", "leaky-queue.hgrm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "result.json")); !bytes.Equal(after, data) {
		t.Error("report rewrote result.json")
	}
	if !strings.Contains(stdout, "report.html") || !strings.Contains(stdout, "leaky-queue") {
		t.Errorf("stdout %q: want the table and where the report is", stdout)
	}
}

// TestRunWritesReport: run writes the report by default, -no-report skips
// it.
func TestRunWritesReport(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		flag string
		html bool
	}{{"", true}, {"-no-report", false}} {
		dir := filepath.Join(base, "run"+tc.flag)
		args := []string{"boundary", "-algos", "fixed-window,sliding-log", "-windows", "3", "-out", dir}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		if code, _, stderr := cli(t, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		_, err := os.Stat(filepath.Join(dir, "report.html"))
		if got := err == nil; got != tc.html {
			t.Errorf("%q: report.html written = %v, want %v", args, got, tc.html)
		}
		if _, err := os.Stat(filepath.Join(dir, "boundary.png")); (err == nil) != tc.html {
			t.Errorf("%q: boundary.png written = %v, want %v", args, err == nil, tc.html)
		}
	}
}
