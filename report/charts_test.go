package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
	"gonum.org/v1/plot"
)

// manyRuns returns the fixture with n runs: its own five, then copies of
// them under other algorithm names.
func manyRuns(n int) *result.Result {
	r := resulttest.Fixture()
	base := r.Runs
	r.Runs = nil
	for i := range n {
		run := base[i%len(base)]
		if i >= len(base) {
			run.Algorithm = fmt.Sprintf("algo-%d", i)
		}
		r.Runs = append(r.Runs, run)
	}
	return r
}

func oneSide(r *result.Result) []side {
	return []side{{curves: curvesOf(r), policy: r.Policy, end: workloadEnd(r)}}
}

// panels returns the figure's plots, row by row.
func panels(f figure) []*plot.Plot {
	var out []*plot.Plot
	for _, row := range f.plots {
		for _, p := range row {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestRateFigurePanels: the admitted-rate figure has one panel per run,
// titled by its label, in the runs' order, all on the same axes, the x
// axis ending where the workload did and the y axis above the highest
// line.
func TestRateFigurePanels(t *testing.T) {
	for _, n := range []int{1, 2, 5, 7, 12, 14} {
		r := manyRuns(n)
		f, notes := rateFigure(oneSide(r))
		if got, want := f.titles(), r.Labels(); !slices.Equal(got, want) {
			t.Fatalf("%d runs: panel titles %q, want %q", n, got, want)
		}
		var hi float64
		for _, run := range r.Runs {
			for _, s := range [][]int64{run.Series.Admitted, run.Series.Rejected} {
				xys, _ := rateXY(s, run.Series.BinNS, 10)
				for _, xy := range xys {
					hi = math.Max(hi, xy.Y)
				}
			}
		}
		for i, p := range panels(f) {
			if p.X.Min != 0 || p.X.Max != 10 {
				t.Errorf("%d runs, panel %d: x from %v to %v, want 0 to 10 (the workload's 10s)", n, i, p.X.Min, p.X.Max)
			}
			if p.Y.Min != 0 || p.Y.Max < hi*1.1 || p.Y.Max > hi*1.2 {
				t.Errorf("%d runs, panel %d: y up to %v, want 10-20%% above the highest line, %v", n, i, p.Y.Max, hi)
			}
		}
		if notes.drained || notes.end != int64(10*time.Second) {
			t.Errorf("%d runs: drained %v, end %v; want no drain, an end at 10s", n, notes.drained, notes.end)
		}
		if len(f.plots) > 1 && len(f.plots[0]) < 2 {
			t.Errorf("%d runs in a single column", n)
		}
	}
}

// TestRateFigureCompare: a compare has one panel per label of either
// side, each overlaying both sides of it.
func TestRateFigureCompare(t *testing.T) {
	a, b := resulttest.Fixture(), resulttest.Fixture()
	b.Runs = slices.Delete(b.Runs, 3, 4) // sliding-log x2 only in A
	b.Runs[0].Algorithm = "gcra"         // gcra only in B
	f, _ := rateFigure(compareSides(a, b, CompareOptions{NameA: "A", NameB: "B"}))
	want := []string{"token-bucket", "fixed-window", "leaky-queue", "sliding-log x2", "sliding-counter@redis", "gcra"}
	if got := f.titles(); !slices.Equal(got, want) {
		t.Fatalf("panel titles %q, want %q", got, want)
	}
}

// TestRateFigureDrain: a shaper that still serves after the workload's
// end has the x axis run on past the end, at most a sixth of it, and
// says so in its panel's title and the caption.
func TestRateFigureDrain(t *testing.T) {
	r := resulttest.Fixture()
	s := &r.Runs[2].Series // leaky-queue: serves for 5s more
	for range 50 {
		s.Admitted = append(s.Admitted, 10)
		s.Rejected = append(s.Rejected, 0)
	}
	f, notes := rateFigure(oneSide(r))
	if !notes.drained {
		t.Fatal("no drain noted")
	}
	for i, p := range panels(f) {
		if math.Abs(p.X.Max-10*7/6.0) > 1e-9 {
			t.Errorf("panel %d: x up to %v, want 10s and a sixth", i, p.X.Max)
		}
	}
	if got := f.titles()[2]; got != "leaky-queue (5.00s drain)" {
		t.Errorf("the shaper's title is %q", got)
	}
	c, err := rateChart(AdmittedRateFile, oneSide(r))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Caption, "The workload ended at 10.0s; the shaded part after it is a shaper still serving its queue") {
		t.Errorf("caption %q says nothing of the drain", c.Caption)
	}
}

// TestRateLimitKeys: with several keys the limit drawn is its sum over
// them, or, when that is far above anything admitted, none, and the
// caption says why.
func TestRateLimitKeys(t *testing.T) {
	for _, tc := range []struct {
		keys  int
		scale int64 // admitted and rejected times this
		want  string
		top   float64 // the y axis's top is at least this
	}{
		{1, 1, "The grey band is the limit L/W, 100/s.", 100},
		{2, 2, "The grey band is the limit, 100/s for each key, summed over the run's keys.", 200},
		{50, 1, "The limit, 100/s, applies to each key on its own; summed over the 50 keys, 5,000/s, " +
			"it is far above anything admitted and not drawn.", 0},
	} {
		r := resulttest.Fixture()
		for i := range r.Runs {
			r.Runs[i].KeyCount = tc.keys
			for _, bins := range [][]int64{r.Runs[i].Series.Admitted, r.Runs[i].Series.Rejected} {
				for j := range bins {
					bins[j] *= tc.scale
				}
			}
		}
		f, notes := rateFigure(oneSide(r))
		if notes.limit != tc.want {
			t.Errorf("%d keys: %q, want %q", tc.keys, notes.limit, tc.want)
		}
		p := panels(f)[0]
		if p.Y.Max < tc.top {
			t.Errorf("%d keys: y up to %v, below the limit drawn, %v", tc.keys, p.Y.Max, tc.top)
		}
		if tc.keys == 50 && p.Y.Max > 1000 {
			t.Errorf("%d keys: y up to %v, stretched to a limit not drawn", tc.keys, p.Y.Max)
		}
	}
	// The fixture: one run has three keys; the others' limit is drawn.
	_, notes := rateFigure(oneSide(resulttest.Fixture()))
	if want := "The grey band is the limit L/W, 100/s. For sliding-counter@redis, with several keys, the limit applies " +
		"to each key on its own, and its sum over them (up to 300/s) is far above anything admitted and not drawn."; notes.limit != want {
		t.Errorf("fixture: %q, want %q", notes.limit, want)
	}
}

// TestBoundaryFigurePanels: one panel per run, titled by its label and
// its exact most admitted in any W, the edge line inside the data area.
func TestBoundaryFigurePanels(t *testing.T) {
	r := resulttest.Fixture()
	f, bin := boundaryFigure(curvesOf(r), r.Policy, int64(10*time.Millisecond))
	if bin != int64(100*time.Millisecond) {
		t.Errorf("bin %v, want the series' 100ms", time.Duration(bin))
	}
	titles := f.titles()
	if len(titles) != len(r.Runs) {
		t.Fatalf("%d panels for %d runs", len(titles), len(r.Runs))
	}
	for i, l := range r.Labels() {
		first, second, _ := strings.Cut(titles[i], "\n")
		if first != l || !strings.Contains(second, " in one W (") {
			t.Errorf("panel %d titled %q, want %q over its most admitted in one W", i, titles[i], l)
		}
	}
	if !strings.HasSuffix(titles[1], "200 in one W (2.00x), within 19.0ms") {
		t.Errorf("fixed-window's title %q", titles[1])
	}
}

// TestNiceTicks: labels at 1, 2, 2.5 or 5 times a power of ten, at most n
// of them.
func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 168, 4, "0 50 100 150"},
		{0, 112, 4, "0 50 100"},
		{0, 201.6, 4, "0 100 200"},
		{0, 10, 6, "0 2 4 6 8 10"},
		{0, 23.3, 4, "0 10 20"},
		{-500, 500, 4, "-500 0 500"},
		{0, 2.4, 6, "0 0.5 1 1.5 2"},
		{0, 0.0112, 4, "0 0.005 0.01"},
		{0, 3000, 4, "0 1000 2000 3000"},
	} {
		var got []string
		for _, tk := range (niceTicks{n: tc.n}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("ticks(%v, %v, %d) = %q, want %q", tc.lo, tc.hi, tc.n, s, tc.want)
		}
	}
}

// TestStylesDistinct: on a compare of many runs, no two lines share a
// colour and dash pattern.
func TestStylesDistinct(t *testing.T) {
	r := manyRuns(len(palette) + 3)
	seen := map[string]string{}
	for _, sd := range compareSides(r, r, CompareOptions{}) {
		for _, c := range sd.curves {
			key := fmt.Sprint(c.style.color, c.style.dashes)
			if other, ok := seen[key]; ok {
				t.Fatalf("%s of %s is drawn as %s of the other side", c.label, sd.name, other)
			}
			seen[key] = c.label
		}
	}
	if slices.Contains(palette, rejGrey) {
		t.Error("a run's colour is the rejected lines' grey")
	}
}

// TestLogRange: the latency axis covers whole decades from the lowest
// value, at most so many below the max, with room above the max.
func TestLogRange(t *testing.T) {
	for _, tc := range []struct {
		lo, hi, min, max float64
	}{
		{500, 1e9, 100, 1.5e9},   // 0.5µs to 1s
		{2e6, 8e6, 1e6, 1.2e7},   // within one decade
		{1e7, 1e10, 1e7, 1.5e10}, // 10ms to 10s
		{2, 1e10, 1e3, 1.5e10},   // at most seven decades below the max's
	} {
		lo, hi := logRange(tc.lo, tc.hi, 7)
		if lo != tc.min || math.Abs(hi-tc.max) > 1e-6*tc.max {
			t.Errorf("logRange(%g, %g) = %g, %g; want %g, %g", tc.lo, tc.hi, lo, hi, tc.min, tc.max)
		}
	}
}

// TestLatencyChartLog: the latency axis is logarithmic even when the
// maxima are close, which a linear axis in ms would flatten.
func TestLatencyChartLog(t *testing.T) {
	run := result.Run{Algorithm: "gcra"}
	run.Latency, run.LatencyHDR = resulttest.Values(900, 5000, 80000, 2e6, 9e6)
	r := &result.Result{Policy: result.PolicyJSON{Limit: 100, WindowNS: 1e9}, Runs: []result.Run{run}}
	c, err := latencyChart(LatencyFile, oneSide(r), "live")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Caption, "on a log scale") {
		t.Errorf("caption %q", c.Caption)
	}
	checkPNG(t, c.File, c.PNG)
}
