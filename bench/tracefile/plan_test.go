package tracefile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/workload"
)

// simFolder runs a simulation of gcra, fixed-window and leaky-queue into
// dir, as `ratebench run -trace` does: its result.json and requests.csv.
// A Poisson workload at 1.5x the limit L per window W over span.
func simFolder(t *testing.T, dir string, seed uint64, keys int, limit int64, w, span time.Duration) *result.Result {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	p, err := algorithms.Policy{Limit: limit, Window: w}.Validate()
	must(t, err)
	src := &workload.Poisson{Rate: 1.5 * p.Rate(), Duration: span, Keys: keys, Cost: 1, Seed: seed}
	names := []string{"gcra", "fixed-window", "leaky-queue"}
	targets, err := backend.MemoryTargets(names, p, backend.Keys{N: keys}, 1)
	must(t, err)
	tw, err := tracefile.Create(dir)
	must(t, err)
	cfg := bench.Config{Policy: p, Workload: src, Reference: backend.Reference(p, keys), Trace: tw}
	runs, err := bench.Simulate(context.Background(), cfg, targets)
	if err != nil {
		tw.Abort()
		t.Fatal(err)
	}
	res := bench.NewResult(result.NewMeta("sim", seed, nil), cfg, runs)
	must(t, res.WriteFile(filepath.Join(dir, "result.json")))
	must(t, tw.Close())
	return res
}

// copyDir copies the files of folder from into a new folder to.
func copyDir(t *testing.T, from, to string) string {
	t.Helper()
	must(t, os.MkdirAll(to, 0o755))
	entries, err := os.ReadDir(from)
	must(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(to, e.Name()), b, 0o644))
	}
	return to
}

// readTraceRows reads every row of DIR/requests.csv.
func readTraceRows(t *testing.T, dir string) []tracefile.Row {
	t.Helper()
	r, err := tracefile.Open(filepath.Join(dir, tracefile.Name))
	must(t, err)
	defer r.Close()
	var rows []tracefile.Row
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows
		}
		must(t, err)
		rows = append(rows, row)
	}
}

// readResult reads DIR/result.json.
func readResult(t *testing.T, dir string) *result.Result {
	t.Helper()
	res, err := result.ReadFile(filepath.Join(dir, "result.json"))
	must(t, err)
	return res
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

// mergeInputs reads the folders' results as result.Merge's inputs, each
// run's StartUnixNS set to starts[i] when starts is not nil, and merges
// them.
func mergeInputs(t *testing.T, dirs []string, starts []int64) ([]result.Input, *result.Result) {
	t.Helper()
	inputs := make([]result.Input, len(dirs))
	for i, d := range dirs {
		res := readResult(t, d)
		if starts != nil {
			for j := range res.Runs {
				res.Runs[j].StartUnixNS = starts[i]
			}
		}
		inputs[i] = result.Input{Name: d, Result: res}
	}
	res, err := result.Merge(inputs)
	must(t, err)
	return inputs, res
}

// TestPlanMerge: when every input has its trace, the plan writes every
// input row once, each run's rows in send order on the common clock, and
// recounts the most admitted in any W exactly: the brute-force count over
// the merged rows, above either host's own maximum because their admits
// interleave.
func TestPlanMerge(t *testing.T) {
	base := t.TempDir()
	hosts := []string{filepath.Join(base, "seed-1"), filepath.Join(base, "seed-2")}
	for i, d := range hosts {
		simFolder(t, d, uint64(i+1), 1, 20, time.Second, 4*time.Second)
	}
	for _, tc := range []struct {
		name   string
		starts []int64 // the hosts' StartUnixNS; nil: simulations, on one virtual clock
	}{
		{name: "simulations on one virtual clock"},
		{name: "second host started 250ms later", starts: []int64{1.7e18, 1.7e18 + 250e6}},
		{name: "first host started 1ms later", starts: []int64{1.7e18 + 1e6, 1.7e18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shifts := []int64{0, 0}
			var zero int64
			if tc.starts != nil {
				zero = min(tc.starts[0], tc.starts[1])
				shifts = []int64{tc.starts[0] - zero, tc.starts[1] - zero}
			}
			inputs, m := mergeInputs(t, hosts, tc.starts)
			plan, why, err := tracefile.PlanMerge(hosts, inputs, m)
			if plan == nil || why != "" || err != nil {
				t.Fatalf("PlanMerge: plan %v, why %q, err %v", plan, why, err)
			}
			out := t.TempDir()
			tw, err := tracefile.Create(out)
			must(t, err)
			warns, err := plan.Write(tw, m)
			must(t, err)
			must(t, tw.Close())
			if len(warns) != 0 || m.Meta.Warned(result.WarnMaxLowerBound) {
				t.Errorf("warnings %+v, result's %+v: want none, and the maximum no longer a lower bound", warns, m.Meta.Warnings)
			}
			var want []string // every input row, shifted onto the common clock
			for i, d := range hosts {
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
			checkMergedRuns(t, m, inputs, rows, zero)
		})
	}
}

// checkMergedRuns checks each merged run of m against its rows of the
// merged trace and its inputs.
func checkMergedRuns(t *testing.T, m *result.Result, inputs []result.Input, rows []tracefile.Row, zero int64) {
	t.Helper()
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
		a, b := inputs[0].Result.Runs[n].MaxAdmittedInWindow, inputs[1].Result.Runs[n].MaxAdmittedInWindow
		if run.MaxAdmittedInWindow <= max(a, b) {
			t.Errorf("%s: merged max %d not above the hosts' %d and %d: the test's admits do not interleave", run.Label(), run.MaxAdmittedInWindow, a, b)
		}
		var admitted int64
		for _, v := range run.Series.Admitted {
			admitted += v
		}
		offered := inputs[0].Result.Runs[n].Offered + inputs[1].Result.Runs[n].Offered
		if admitted != run.AdmittedCost || run.StartUnixNS != zero || run.Offered != offered {
			t.Errorf("%s: series holds %d of %d admitted, start %d (want %d), offered %d (want %d)", run.Label(), admitted, run.AdmittedCost, run.StartUnixNS, zero, run.Offered, offered)
		}
	}
	if first != len(rows) {
		t.Errorf("the runs offered %d requests, the merged trace holds %d", first, len(rows))
	}
}

// TestPlanMergeRefuses: without every input's trace, or with one that
// does not match its result, PlanMerge gives no plan and says why; a
// malformed trace is a *FormatError naming its line.
func TestPlanMergeRefuses(t *testing.T) {
	base := t.TempDir()
	seeds := []string{filepath.Join(base, "seed-1"), filepath.Join(base, "seed-2")}
	for i, d := range seeds {
		simFolder(t, d, uint64(i+1), 1, 20, time.Second, 4*time.Second)
	}
	for _, tc := range []struct {
		name       string
		breakB     func(t *testing.T, dir string) // what to do to the second input's folder
		starts     []int64                        // the inputs' StartUnixNS, when set
		modeB      string                         // the second input's Meta.Mode, when set
		wantWhy    string
		wantFormat string // the *FormatError's text, when one is wanted
	}{
		{name: "one input without requests.csv", wantWhy: "has no requests.csv",
			breakB: func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, tracefile.Name))) }},
		{name: "a trace shorter than its result", wantWhy: "rows for the",
			breakB: func(t *testing.T, dir string) {
				rewriteTrace(t, dir, func(lines []string) []string { return lines[:len(lines)/2] })
			}},
		{name: "starts not on one clock", starts: []int64{0, 1.7e18}, wantWhy: "one clock"},
		{name: "a result built from a trace, without its start", modeB: "trace", wantWhy: "has no start time"},
		{name: "a malformed row", wantFormat: "requests.csv line 7: intended_ns",
			breakB: func(t *testing.T, dir string) {
				rewriteTrace(t, dir, func(lines []string) []string {
					lines[6] = strings.Replace(lines[6], ",", ",x", 2)
					return lines
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dirs := []string{copyDir(t, seeds[0], filepath.Join(dir, "a")), copyDir(t, seeds[1], filepath.Join(dir, "b"))}
			if tc.breakB != nil {
				tc.breakB(t, dirs[1])
			}
			inputs, m := mergeInputs(t, dirs, tc.starts)
			if tc.modeB != "" {
				inputs[1].Result.Meta.Mode = tc.modeB
			}
			plan, why, err := tracefile.PlanMerge(dirs, inputs, m)
			if tc.wantFormat != "" {
				if plan != nil || !errors.As(err, new(*tracefile.FormatError)) || !strings.Contains(err.Error(), tc.wantFormat) {
					t.Fatalf("plan %v, err %v: want a *FormatError with %q", plan, err, tc.wantFormat)
				}
				return
			}
			if plan != nil || err != nil || !strings.Contains(why, tc.wantWhy) {
				t.Fatalf("plan %v, why %q, err %v: want no plan, and why with %q", plan, why, err, tc.wantWhy)
			}
		})
	}
}

// rewriteTrace rewrites the lines of DIR/requests.csv with edit.
func rewriteTrace(t *testing.T, dir string, edit func([]string) []string) {
	t.Helper()
	path := filepath.Join(dir, tracefile.Name)
	b, err := os.ReadFile(path)
	must(t, err)
	lines := edit(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
	must(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
