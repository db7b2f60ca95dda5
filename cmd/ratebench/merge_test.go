package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
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
