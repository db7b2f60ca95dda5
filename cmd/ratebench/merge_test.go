package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
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

// readTraceRows reads every row of DIR/requests.csv.
func readTraceRows(t *testing.T, dir string) []tracefile.Row {
	t.Helper()
	r, err := tracefile.Open(filepath.Join(dir, tracefile.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []tracefile.Row
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
}

// bruteWindowMax counts, for each admit, the admits of its key in the span
// W that ends at it, and returns the most and the first instant it ends
// at: at is the send instant, or the served one (done) for a shaper.
func bruteWindowMax(rows []tracefile.Row, w int64, shaper bool) (best, end int64) {
	type admit struct {
		at  int64
		key string
	}
	var admits []admit
	for _, r := range rows {
		if r.Outcome == call.Admitted {
			at := int64(r.Sent)
			if shaper {
				at = int64(r.Done)
			}
			admits = append(admits, admit{at, r.Key})
		}
	}
	for _, a := range admits {
		var n int64
		for _, b := range admits {
			if b.key == a.key && b.at > a.at-w && b.at <= a.at {
				n++
			}
		}
		if n > best || n == best && a.at < end {
			best, end = n, a.at
		}
	}
	return best, end
}

// setStarts sets the StartUnixNS of every run of DIR/result.json.
func setStarts(t *testing.T, dir string, start int64) {
	t.Helper()
	res, err := result.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Runs {
		res.Runs[i].StartUnixNS = start
	}
	writeResult(t, dir, res)
}

// TestMergeTraces: when every input has its trace, merge writes the
// merged requests.csv, each run's rows in send order on the common clock,
// and counts the most admitted in any W from it exactly: the brute-force
// count over the merged rows, above either host's own maximum because
// their admits interleave.
func TestMergeTraces(t *testing.T) {
	base := t.TempDir()
	simWithTrace(t, filepath.Join(base, "seed-1"), 1)
	simWithTrace(t, filepath.Join(base, "seed-2"), 2)
	for _, tc := range []struct {
		name   string
		starts []int64 // the hosts' StartUnixNS; nil: simulations, on one virtual clock
	}{
		{name: "simulations on one virtual clock"},
		{name: "second host started 250ms later", starts: []int64{1.7e18, 1.7e18 + 250e6}},
		{name: "first host started 1ms later", starts: []int64{1.7e18 + 1e6, 1.7e18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := []string{copyDir(t, filepath.Join(base, "seed-1"), filepath.Join(dir, "a")), copyDir(t, filepath.Join(base, "seed-2"), filepath.Join(dir, "b"))}
			shifts := []int64{0, 0}
			var zero int64
			if tc.starts != nil {
				zero = min(tc.starts[0], tc.starts[1])
				for i, d := range in {
					setStarts(t, d, tc.starts[i])
					shifts[i] = tc.starts[i] - zero
				}
			}
			out := filepath.Join(dir, "merged")
			code, stdout, stderr := cli(t, "merge", in[0], in[1], "-out", out)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(stdout, "exact") {
				t.Errorf("stdout does not say the maximum is exact:\n%s", stdout)
			}
			m, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Meta.Warned(result.WarnMaxLowerBound) {
				t.Error("the merged result still says its maximum is a lower bound")
			}
			inputs := make([]*result.Result, 2)
			var want []string // every input row, shifted onto the common clock
			for i, d := range in {
				if inputs[i], err = result.ReadFile(filepath.Join(d, "result.json")); err != nil {
					t.Fatal(err)
				}
				for _, r := range readTraceRows(t, d) {
					want = append(want, rowText(r, shifts[i]))
				}
			}
			rows := readTraceRows(t, out)
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = rowText(r, 0)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("merged trace: %d rows, not the %d input rows on the common clock", len(got), len(want))
			}
			var first int
			for n, run := range m.Runs {
				part := rows[first : first+int(run.Offered)]
				first += int(run.Offered)
				for i, r := range part {
					if r.Algorithm != run.Algorithm {
						t.Fatalf("%s: row %d is of %s", run.Label(), r.Seq, r.Algorithm)
					}
					if i > 0 && r.Sent < part[i-1].Sent {
						t.Fatalf("%s: row %d sent at %d, before the row before it (%d): not in send order", run.Label(), r.Seq, r.Sent, part[i-1].Sent)
					}
				}
				best, end := bruteWindowMax(part, m.Policy.WindowNS, run.Algorithm == "leaky-queue")
				if run.MaxAdmittedInWindow != best || run.MaxWindowEndNS != end {
					t.Errorf("%s: most admitted in W %d ending at %d; the merged rows hold %d ending at %d",
						run.Label(), run.MaxAdmittedInWindow, run.MaxWindowEndNS, best, end)
				}
				a, b := inputs[0].Runs[n].MaxAdmittedInWindow, inputs[1].Runs[n].MaxAdmittedInWindow
				if run.MaxAdmittedInWindow <= max(a, b) {
					t.Errorf("%s: merged max %d not above the hosts' %d and %d: the test's admits do not interleave", run.Label(), run.MaxAdmittedInWindow, a, b)
				}
				var admitted int64
				for _, v := range run.Series.Admitted {
					admitted += v
				}
				if admitted != run.AdmittedCost || run.StartUnixNS != zero || run.Offered != inputs[0].Runs[n].Offered+inputs[1].Runs[n].Offered {
					t.Errorf("%s: series holds %d of %d admitted, start %d (want %d), offered %d", run.Label(), admitted, run.AdmittedCost, run.StartUnixNS, zero, run.Offered)
				}
			}
			if first != len(rows) {
				t.Errorf("the runs offered %d requests, the merged trace holds %d", first, len(rows))
			}
		})
	}
}

// rowText is r as text with its instants moved by shift, for comparing
// rows whatever their order.
func rowText(r tracefile.Row, shift int64) string {
	mv := func(d time.Duration) int64 {
		if d < 0 {
			return int64(d)
		}
		return int64(d) + shift
	}
	return fmt.Sprintf("%s|%d|%d|%d|%s|%s|%d|%d|%d|%d|%d|%d|%s", r.Algorithm, mv(r.Intended), mv(r.Sent), mv(r.Done), r.Key, r.Source, r.Status,
		r.Outcome, r.Attempts, r.RetryAfter, r.Remaining, r.ResetAfter, r.ErrorKind)
}

// TestMergeTracesFallBack: without every input's trace, or with one that
// does not match its result.json, merge keeps the largest of the inputs'
// maxima, says it is a lower bound and why, and writes no trace; a
// malformed trace is bad input: one line naming it, exit 2, nothing
// written.
func TestMergeTracesFallBack(t *testing.T) {
	base := t.TempDir()
	simWithTrace(t, filepath.Join(base, "seed-1"), 1)
	simWithTrace(t, filepath.Join(base, "seed-2"), 2)
	for _, tc := range []struct {
		name     string
		breakB   func(t *testing.T, dir string) // what to do to the second input
		wantCode int
		want     string // in stderr
	}{
		{name: "one input without requests.csv", wantCode: 0, want: "has no requests.csv",
			breakB: func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, tracefile.Name))) }},
		{name: "a trace shorter than its result", wantCode: 0, want: "rows for the",
			breakB: func(t *testing.T, dir string) {
				rewriteTrace(t, dir, func(lines []string) []string { return lines[:len(lines)/2] })
			}},
		{name: "starts not on one clock", wantCode: 0, want: "one clock",
			breakB: func(t *testing.T, dir string) { setStarts(t, dir, 1.7e18) }},
		{name: "a result built from a trace, without its start", wantCode: 0, want: "has no start time",
			breakB: func(t *testing.T, dir string) {
				res, err := result.ReadFile(filepath.Join(dir, "result.json"))
				must(t, err)
				res.Meta.Mode = "trace"
				writeResult(t, dir, res)
			}},
		{name: "a malformed row", wantCode: 2, want: "requests.csv line 7: intended_ns",
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
			code, _, stderr := cli(t, "merge", a, b, "-out", out)
			if code != tc.wantCode || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and one line with %q", code, stderr, tc.wantCode, tc.want)
			}
			if tc.wantCode != 0 {
				if after := snapshot(t, dir); after != before {
					t.Errorf("bad input changed the folder:\n%s\nwas:\n%s", after, before)
				}
				return
			}
			if !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "lower bound") {
				t.Errorf("stderr %q: want a warning that the maximum is a lower bound", stderr)
			}
			if _, err := os.Stat(filepath.Join(out, tracefile.Name)); err == nil {
				t.Error("a merged trace was written")
			}
			m, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !m.Meta.Warned(result.WarnMaxLowerBound) {
				t.Errorf("warnings %+v: the result does not say its maximum is a lower bound", m.Meta.Warnings)
			}
			ra, err := result.ReadFile(filepath.Join(a, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			rb, err := result.ReadFile(filepath.Join(b, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			for n, run := range m.Runs {
				if want := max(ra.Runs[n].MaxAdmittedInWindow, rb.Runs[n].MaxAdmittedInWindow); run.MaxAdmittedInWindow != want {
					t.Errorf("%s: max %d, want the inputs' largest %d", run.Label(), run.MaxAdmittedInWindow, want)
				}
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
