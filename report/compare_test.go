package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	a, b := resulttest.Fixture(), resulttest.Fixture()
	b.Runs = slices.Delete(b.Runs, 3, 4)                // sliding-log x2 only in A
	b.Runs[1].Admitted, b.Runs[1].BurstRatio = 450, 1.5 // fixed-window admits less in B
	b.Runs[0].Algorithm = "gcra"                        // gcra only in B
	b.Meta.Mode = "live"                                // latencies of another kind than A's
	dir := filepath.Join(t.TempDir(), "cmp")
	if err := Compare(dir, a, b, CompareOptions{NameA: "before", NameB: "after"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{CompareFile, "compare_" + AdmittedRateFile, "compare_" + BurstRatioFile, "compare_" + LatencyFile} {
		data := readFile(t, filepath.Join(dir, name))
		if strings.HasSuffix(name, ".png") {
			checkPNG(t, name, data)
		}
	}
	page := string(readFile(t, filepath.Join(dir, CompareFile)))
	for _, want := range []string{
		"<title>ratebench compare: before vs after</title>",
		// fixed-window: admitted 600 -> 450, burst ratio 2.00 -> 1.50.
		`<td class="l">fixed-window</td><td>600</td><td>450</td><td class="d nz">-150 (-25.0%)</td>`,
		`<td>2.00x</td><td>1.50x</td><td class="d nz">-0.50</td>`,
		// sliding-log x2 is only in A, gcra only in B.
		`<td class="l">sliding-log x2</td><td>600</td><td>-</td><td class="d">-</td>`,
		`<td class="l">gcra</td><td>-</td><td>306</td><td class="d">-</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "<img "); n != 3 {
		t.Errorf("%d images, want 3", n)
	}
	// Said in the finding and under the latency chart.
	if n := strings.Count(page, "Their latencies measure different things: before&#39;s are virtual-time delays"); n != 2 {
		t.Errorf("compare.html says %d times that the latencies differ in kind, want 2", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http") {
		t.Error("compare.html is not self-contained")
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile)); err == nil {
		t.Error("Compare wrote a report.html")
	}
}

// TestPairRuns: runs pair by label; an HTTP run pairs with the run of the
// algorithm its server was said to run, or, when that is not known, with
// the one run left on the other side.
func TestPairRuns(t *testing.T) {
	httpRun := func(algo string) result.Run {
		return result.Run{Algorithm: "http", Backend: "127.0.0.1:8080", Replicas: 1, HTTP: &result.HTTPStats{ServerAlgorithm: algo}}
	}
	mem := func(algo string) result.Run { return result.Run{Algorithm: algo, Backend: "memory", Replicas: 1} }
	for _, tc := range []struct {
		name string
		a, b []result.Run
		want []string // the labels of the pairs, in order
		// halves: for each pair, whether A and B have a run
		halves [][2]bool
	}{
		{name: "by label", a: []result.Run{mem("gcra"), mem("fixed-window")}, b: []result.Run{mem("fixed-window")},
			want: []string{"gcra", "fixed-window"}, halves: [][2]bool{{true, false}, {true, true}}},
		{name: "attack with its algorithm", a: []result.Run{mem("fixed-window"), mem("gcra")}, b: []result.Run{httpRun("gcra")},
			want: []string{"fixed-window", "gcra ~ http@127.0.0.1:8080"}, halves: [][2]bool{{true, false}, {true, true}}},
		{name: "attack first", a: []result.Run{httpRun("gcra")}, b: []result.Run{mem("gcra")},
			want: []string{"http@127.0.0.1:8080 ~ gcra"}, halves: [][2]bool{{true, true}}},
		{name: "attack without an algorithm, one run", a: []result.Run{mem("sliding-log")}, b: []result.Run{httpRun("")},
			want: []string{"sliding-log ~ http@127.0.0.1:8080"}, halves: [][2]bool{{true, true}}},
		{name: "attack without an algorithm, two runs", a: []result.Run{mem("gcra"), mem("sliding-log")}, b: []result.Run{httpRun("")},
			want: []string{"gcra", "sliding-log", "http@127.0.0.1:8080"}, halves: [][2]bool{{true, false}, {true, false}, {false, true}}},
		{name: "attack of another algorithm", a: []result.Run{mem("gcra")}, b: []result.Run{httpRun("fixed-window")},
			want: []string{"gcra", "http@127.0.0.1:8080"}, halves: [][2]bool{{true, false}, {false, true}}},
		{name: "two attacks", a: []result.Run{httpRun("")}, b: []result.Run{httpRun("")},
			want: []string{"http@127.0.0.1:8080"}, halves: [][2]bool{{true, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := &result.Result{Runs: tc.a}, &result.Result{Runs: tc.b}
			pairs := pairRuns(a, b)
			var got []string
			for i, p := range pairs {
				got = append(got, p.label)
				if i < len(tc.halves) && (p.a != nil) != tc.halves[i][0] || i < len(tc.halves) && (p.b != nil) != tc.halves[i][1] {
					t.Errorf("pair %q: A %v, B %v; want %v", p.label, p.a != nil, p.b != nil, tc.halves[i])
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("pairs %q, want %q", got, tc.want)
			}
			// The charts draw each pair under one label, in one colour.
			sides := compareSides(a, b, CompareOptions{})
			var labels []string
			colour := map[string]style{}
			for _, sd := range sides {
				for _, c := range sd.curves {
					if !slices.Contains(labels, c.label) {
						labels = append(labels, c.label)
					}
					if prev, ok := colour[c.label]; ok && prev.color != c.style.color {
						t.Errorf("%q drawn in two colours", c.label)
					}
					colour[c.label] = c.style
				}
			}
			if slices.Sort(labels); !slices.Equal(labels, slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("chart labels %q, want the pairs' %q", labels, tc.want)
			}
		})
	}
}

// TestCompareTable: the terminal table gives each pair's measures on both
// sides and the change.
func TestCompareTable(t *testing.T) {
	a, b := resulttest.Fixture(), resulttest.Fixture()
	b.Runs[1].Admitted = 450
	var buf bytes.Buffer
	if err := CompareTable(&buf, a, b, CompareOptions{NameA: "before", NameB: "after"}); err != nil {
		t.Fatal(err)
	}
	// The fixed-window block: its header, then admitted 600 -> 450.
	blocks := strings.Split(buf.String(), "\n\n")
	var lines []string
	for _, b := range blocks {
		if strings.HasPrefix(b, "fixed-window ") {
			lines = strings.Split(b, "\n")
		}
	}
	if len(lines) < 2 || strings.Join(strings.Fields(lines[0]), " ") != "fixed-window before after change" ||
		strings.Join(strings.Fields(lines[1]), " ") != "admitted 600 450 -150 (-25.0%)" {
		t.Errorf("no fixed-window block with its admitted change:\n%s", buf.String())
	}
}
