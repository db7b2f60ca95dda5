package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// TestMergeCommand merges two hosts' results: counts are summed, the
// histograms merged exactly, and the merged folder rendered.
func TestMergeCommand(t *testing.T) {
	base := t.TempDir()
	a := writeResult(t, filepath.Join(base, "host-a"), smallResult(5))
	b := writeResult(t, filepath.Join(base, "host-b"), smallResult(9))
	out := filepath.Join(base, "merged")
	code, _, stderr := cli(t, "merge", a, b, "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Meta.Hosts, []string{a, b}) {
		t.Errorf("hosts %q, want the inputs", m.Meta.Hosts)
	}
	if got := m.Meta.Args; len(got) < 2 || got[1] != "merge" {
		t.Errorf("args %q: want the merge command line", got)
	}
	g, q := m.Runs[0], m.Runs[1]
	if g.Offered != 40 || g.Admitted != 24 || g.Rejected != 16 || !slices.Equal(g.Series.Admitted, []int64{20, 2, 2}) {
		t.Errorf("gcra: %d offered, %d admitted, %d rejected, series %v", g.Offered, g.Admitted, g.Rejected, g.Series.Admitted)
	}
	if q.Admitted != 14 || q.Latency == nil || q.Latency.Count != 14 {
		t.Fatalf("leaky-queue: admitted %d, latency %+v; want 14 and a count of 14", q.Admitted, q.Latency)
	}
	h, err := result.DecodeHistogram(q.LatencyHDR)
	if err != nil || h.TotalCount() != 5+9 {
		t.Fatalf("merged histogram: %v, count %d, want 14", err, h.TotalCount())
	}
	for _, name := range []string{"report.html", "series.csv", "leaky-queue.hgrm", "keys.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestMergeBadInput(t *testing.T) {
	base := t.TempDir()
	a := writeResult(t, filepath.Join(base, "a"), smallResult(5))
	other := smallResult(5)
	other.Policy.Limit = 20
	c := writeResult(t, filepath.Join(base, "c"), other)
	out := filepath.Join(base, "out")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, base)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", a, c, "-out", out}, "policy"},                                // policies differ
		{[]string{"merge", a, filepath.Join(base, "none"), "-out", out}, "result.json"}, // no result
		{[]string{"merge", a, a}, "-out"},                                               // no -out
		{[]string{"merge", a, "-out", out}, "two"},                                      // one input
		{[]string{"merge", a, c, "-out", a}, "is the input"},                            // out is an input
		{[]string{"merge", a, c, "-out", link}, "is the input"},                         // a link to an input
		{[]string{"merge", a, c, "-out", filepath.Join(link, "x")}, "inside the input"}, // inside one, through a link
		{[]string{"merge", a, c, "-out", base}, "holds the input"},                      // above one
		{[]string{"merge", a, c, "-out", filepath.Join(a, "..", "a")}, "is the input"},  // the same, spelled otherwise
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q created %s", tc.args, out)
		}
		if after := snapshot(t, base); after != before {
			t.Fatalf("%q changed the inputs:\n%s\nwant\n%s", tc.args, after, before)
		}
	}
}

// simWithTrace makes a sim run with a trace into dir: one key, so that two
// hosts' admits land on the same key's spans.
func simWithTrace(t *testing.T, dir string, seed int) {
	t.Helper()
	code, _, stderr := cli(t, "run", "-trace", "-algos", "gcra,fixed-window,leaky-queue", "-keys", "1", "-limit", "20", "-window", "1s",
		"-duration", "4s", "-workload", "poisson", "-seed", strconv.Itoa(seed), "-no-report", "-out", dir)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
}

// copyDir copies the files of folder from into a new folder to.
func copyDir(t *testing.T, from, to string) string {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// TestMergeTracesCLI: what merge says and writes of the inputs' traces
// (the planning and recounting are tracefile's, tested there): with
// every trace, the merged requests.csv and a word that the maximum is
// exact; without one, a warning that it is a lower bound and why, and no
// trace; a malformed trace is bad input: one line naming it, exit 2,
// nothing written.
func TestMergeTracesCLI(t *testing.T) {
	base := t.TempDir()
	simWithTrace(t, filepath.Join(base, "seed-1"), 1)
	simWithTrace(t, filepath.Join(base, "seed-2"), 2)
	for _, tc := range []struct {
		name      string
		breakB    func(t *testing.T, dir string) // what to do to the second input
		wantCode  int
		wantOut   string // in stdout
		wantErr   string // in stderr, one line
		wantTrace bool   // a merged requests.csv written
	}{
		{name: "every input with its trace", breakB: func(*testing.T, string) {}, wantOut: "exact", wantTrace: true},
		{name: "one input without requests.csv", wantErr: "has no requests.csv", wantOut: "results:",
			breakB: func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, tracefile.Name))) }},
		{name: "a malformed row", wantCode: 2, wantErr: "requests.csv line 7: intended_ns",
			breakB: func(t *testing.T, dir string) {
				rewriteTrace(t, dir, func(lines []string) []string {
					lines[6] = strings.Replace(lines[6], ",", ",x", 2)
					return lines
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := copyDir(t, filepath.Join(base, "seed-1"), filepath.Join(dir, "a"))
			b := copyDir(t, filepath.Join(base, "seed-2"), filepath.Join(dir, "b"))
			tc.breakB(t, b)
			before := snapshot(t, dir)
			out := filepath.Join(dir, "merged")
			code, stdout, stderr := cli(t, "merge", a, b, "-out", out)
			if code != tc.wantCode || !strings.Contains(stdout, tc.wantOut) {
				t.Fatalf("exit %d, stdout %q; want %d and %q", code, stdout, tc.wantCode, tc.wantOut)
			}
			if tc.wantErr == "" && stderr != "" || tc.wantErr != "" && (strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.wantErr)) {
				t.Fatalf("stderr %q; want one line with %q, or none", stderr, tc.wantErr)
			}
			if tc.wantCode != 0 {
				if after := snapshot(t, dir); after != before {
					t.Errorf("bad input changed the folder:\n%s\nwas:\n%s", after, before)
				}
				return
			}
			if _, err := os.Stat(filepath.Join(out, tracefile.Name)); (err == nil) != tc.wantTrace {
				t.Errorf("merged trace written: %v, want %v", err == nil, tc.wantTrace)
			}
			m, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Meta.Warned(result.WarnMaxLowerBound) == tc.wantTrace {
				t.Errorf("warnings %+v: the maximum is a lower bound exactly when there is no merged trace", m.Meta.Warnings)
			}
		})
	}
}

// rewriteTrace rewrites the lines of DIR/requests.csv with edit.
func rewriteTrace(t *testing.T, dir string, edit func([]string) []string) {
	t.Helper()
	path := filepath.Join(dir, tracefile.Name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := edit(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
	must(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
