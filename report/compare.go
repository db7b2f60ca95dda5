package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/ratebench/ratebench/bench/result"
)

// CompareFile is the page Compare writes.
const CompareFile = "compare.html"

// CompareOptions tune Compare. The zero value names the sides "A" and "B".
type CompareOptions struct {
	// NameA and NameB name the two results on the page and in legends,
	// typically their folders.
	NameA, NameB string
	// Args is the command line that made the comparison (os.Args), shown
	// on the page as the command that reproduces it; nil for none.
	Args []string
}

// Compare renders two results side by side into dir (created if missing):
// compare.html, self-contained like report.html, with a table of the
// differences per pair of runs (matched by label: algorithm, replicas,
// backend; an HTTP run with the run of its server's algorithm), both summary tables and readings, and charts that overlay the
// two (B dashed or lighter), also written as compare_admitted_rate.png,
// compare_burst_ratio.png and compare_latency.png. Every file is written to
// a temporary name and renamed.
func Compare(dir string, a, b *result.Result, opts CompareOptions) error {
	if opts.NameA == "" {
		opts.NameA = "A"
	}
	if opts.NameB == "" {
		opts.NameB = "B"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	charts, err := compareCharts(a, b, opts)
	if err != nil {
		return err
	}
	for _, c := range charts {
		if err := result.WriteFileAtomic(filepath.Join(dir, c.File), c.PNG); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	page, err := compareHTML(a, b, charts, opts)
	if err != nil {
		return err
	}
	if err := result.WriteFileAtomic(filepath.Join(dir, CompareFile), page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// compareSides returns the two results as chart sides: a pair of runs
// (pairRuns) keeps one label and one colour on both, B's lines are dashed (dotted past the palette's end,
// where A's are dash-dot).
func compareSides(a, b *result.Result, opts CompareOptions) []side {
	// A pair of runs with different labels (an attack beside the run of
	// its server's algorithm) shares one label, one panel and one colour.
	paired := map[*result.Run]string{}
	for _, p := range pairRuns(a, b) {
		if p.a != nil && p.b != nil {
			paired[p.a], paired[p.b] = p.label, p.label
		}
	}
	// A pair takes the colour of its first side's algorithm, so that an
	// attack and the in-process run it is compared with are one colour.
	colour := map[string]style{}
	mk := func(r *result.Result, dash bool) []curve {
		cs := curvesOf(r)
		for i := range cs {
			if l, ok := paired[cs[i].run]; ok {
				cs[i].label = l
			}
			st, ok := colour[cs[i].label]
			if !ok {
				st = cs[i].style
				colour[cs[i].label] = st
			}
			cs[i].style = st
			if dash {
				cs[i].style = cs[i].style.sideB()
			}
		}
		return cs
	}
	return []side{
		{name: opts.NameA, curves: mk(a, false), policy: a.Policy, end: workloadEnd(a)},
		{name: opts.NameB, curves: mk(b, true), policy: b.Policy, end: workloadEnd(b)},
	}
}

func compareCharts(a, b *result.Result, opts CompareOptions) ([]chart, error) {
	sides := compareSides(a, b, opts)
	solid := fmt.Sprintf(" Solid lines: %s; dashed: %s.", opts.NameA, opts.NameB)
	jobs := []func() (chart, error){
		func() (chart, error) {
			c, err := rateChart("compare_"+AdmittedRateFile, sides)
			c.Caption += solid
			return c, err
		},
		func() (chart, error) {
			c, err := burstChart("compare_"+BurstRatioFile, sides)
			c.Caption += fmt.Sprintf(" For each algorithm the first bar is %s, the lighter one %s.", opts.NameA, opts.NameB)
			return c, err
		},
	}
	if hasLatency(sides[0].curves) || hasLatency(sides[1].curves) {
		mode := a.Meta.Mode
		if b.Meta.Mode != mode {
			mode = "mixed"
		}
		jobs = append(jobs, func() (chart, error) {
			c, err := latencyChart("compare_"+LatencyFile, sides, mode)
			c.Caption += solid
			if note := latencyNote(a, b, opts.NameA, opts.NameB); note != "" {
				c.Caption += " " + note
			}
			return c, err
		})
	}
	return drawAll(jobs)
}

// sideView is one result on compare.html.
type sideView struct {
	Side, Name, Subtitle, Command string
	Readings                      []sentence
	Warnings                      []string
	Rows                          []row
	Meta, Workload                []kv
}

// diffCell is one measure of one run on both sides and its change.
type diffCell struct {
	A, B, D string
	Changed bool
}

// diffRow is one label in the differences table.
type diffRow struct {
	Label string
	Cells []diffCell
}

// compareView is what compare.tmpl renders.
type compareView struct {
	Title, Version string
	Finding        string
	Command        string
	NameA, NameB   string
	Diffs          []diffTable
	Sides          []sideView
	Charts         []figureView
}

// diffHeads name the measures of the differences table.
var diffHeads = []string{"admitted", "rejected", "burst ratio", "disagree %", "Jain", "p99", "max latency"}

// diffTable is part of the differences table: some of its measures.
type diffTable struct {
	Heads []string
	Rows  []diffRow
}

// diffSplit is where the page breaks the differences table in two, counts
// and ratios then fairness and latency, so that each fits the width of a
// screen: three columns a measure are too many for one.
const diffSplit = 4

// diffTables splits the differences table at diffSplit.
func diffTables(rows []diffRow) []diffTable {
	var out []diffTable
	for _, part := range [][2]int{{0, diffSplit}, {diffSplit, len(diffHeads)}} {
		t := diffTable{Heads: diffHeads[part[0]:part[1]]}
		for _, r := range rows {
			t.Rows = append(t.Rows, diffRow{Label: r.Label, Cells: r.Cells[part[0]:part[1]]})
		}
		out = append(out, t)
	}
	return out
}

// compareHTML returns compare.html for a and b with the given charts.
func compareHTML(a, b *result.Result, charts []chart, opts CompareOptions) ([]byte, error) {
	v := compareView{
		Title:   fmt.Sprintf("ratebench compare: %s vs %s", opts.NameA, opts.NameB),
		Version: a.Meta.Version,
		Command: command(opts.Args),
		NameA:   opts.NameA, NameB: opts.NameB,
		Finding: CompareFinding(a, b, opts.NameA, opts.NameB),
		Diffs:   diffTables(diffRows(a, b)),
		Charts:  figures(charts, true),
	}
	for i, r := range []*result.Result{a, b} {
		name := []string{opts.NameA, opts.NameB}[i]
		v.Sides = append(v.Sides, sideView{
			Side: []string{"A", "B"}[i], Name: name, Subtitle: fmt.Sprintf("%s workload; %s", r.WorkloadName(), subtitle(r)),
			Command: command(r.Meta.Args), Readings: readings(r), Warnings: WarningTexts(r.Meta.Warnings),
			Rows: rows(r), Meta: metaKV(r.Meta), Workload: workloadKV(r.Workload),
		})
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "compare", v); err != nil {
		return nil, fmt.Errorf("report: html: %w", err)
	}
	return buf.Bytes(), nil
}

// diffRows is the differences table: a row per pair of runs.
func diffRows(a, b *result.Result) []diffRow {
	pairs := pairRuns(a, b)
	out := make([]diffRow, len(pairs))
	for i, p := range pairs {
		out[i] = diffRow{Label: p.label, Cells: diffCells(p.a, p.b)}
	}
	return out
}

// runPair is a run of A and the run of B it is compared with; either is
// nil when the other has no counterpart.
type runPair struct {
	label string
	a, b  *result.Run
}

// pairRuns matches the runs of a and b, in a's order then b's: by label
// (algorithm, replicas, backend), then each HTTP run left with the run of
// the other side left that runs the algorithm the service was said to
// run (attack -algo), or, when that is not known, with the one run left
// on the other side if there is just one: an attack and the in-process
// run of the same workload are one comparison.
func pairRuns(a, b *result.Result) []runPair {
	la, lb := a.Labels(), b.Labels()
	ia, ib := make([]int, len(la)), make([]int, len(lb)) // the partner's index, -1 for none
	for i := range ia {
		ia[i] = slices.Index(lb, la[i])
	}
	for j := range ib {
		ib[j] = slices.Index(la, lb[j])
	}
	left := func(idx []int) []int {
		var out []int
		for i, p := range idx {
			if p < 0 {
				out = append(out, i)
			}
		}
		return out
	}
	link := func(i, j int) { ia[i], ib[j] = j, i }
	for _, i := range left(ia) { // an HTTP run of A with a model run of B
		if j := partner(&a.Runs[i], b.Runs, left(ib)); j >= 0 {
			link(i, j)
		}
	}
	for _, j := range left(ib) {
		if i := partner(&b.Runs[j], a.Runs, left(ia)); i >= 0 {
			link(i, j)
		}
	}
	var out []runPair
	for i, j := range ia {
		p := runPair{label: la[i], a: &a.Runs[i]}
		if j >= 0 {
			p.b = &b.Runs[j]
			if lb[j] != la[i] {
				p.label = la[i] + " ~ " + lb[j]
			}
		}
		out = append(out, p)
	}
	for j, i := range ib {
		if i < 0 {
			out = append(out, runPair{label: lb[j], b: &b.Runs[j]})
		}
	}
	return out
}

// partner returns which of the runs at the indexes free an HTTP run is
// compared with, or -1: the one of its server's algorithm, or the only
// one when that is not known.
func partner(run *result.Run, runs []result.Run, free []int) int {
	if run.HTTP == nil || len(free) == 0 {
		return -1
	}
	if algo := run.HTTP.ServerAlgorithm; algo != "" {
		for _, j := range free {
			if runs[j].HTTP == nil && runs[j].Algorithm == algo {
				return j
			}
		}
		return -1
	}
	if len(free) == 1 && runs[free[0]].HTTP == nil {
		return free[0]
	}
	return -1
}

// CompareTable writes the differences of a and b for the terminal: per
// pair of runs, each measure on both sides and its change.
func CompareTable(w io.Writer, a, b *result.Result, opts CompareOptions) error {
	nameA, nameB := cmp.Or(opts.NameA, "A"), cmp.Or(opts.NameB, "B")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for i, r := range diffRows(a, b) {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tchange\n", r.Label, nameA, nameB)
		for k, c := range r.Cells {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", diffHeads[k], c.A, c.B, c.D)
		}
	}
	return tw.Flush()
}

// measure reads one number off a run and formats it and a difference.
type measure struct {
	get  func(*result.Run) (float64, bool)
	show func(float64) string
	diff func(a, b float64) string
}

var measures = []measure{
	{get: func(r *result.Run) (float64, bool) { return float64(r.Admitted), true }, show: count, diff: countDiff},
	{get: func(r *result.Run) (float64, bool) { return float64(r.Rejected), true }, show: count, diff: countDiff},
	{get: func(r *result.Run) (float64, bool) { return r.BurstRatio, true },
		show: func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "x" },
		diff: func(a, b float64) string { return signed(b-a, 2) }},
	{get: func(r *result.Run) (float64, bool) { return r.DisagreementPct, r.DisagreementPct >= 0 },
		show: func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) },
		diff: func(a, b float64) string { return signed(b-a, 3) }},
	{get: func(r *result.Run) (float64, bool) { return r.JainFairness, true },
		show: func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) },
		diff: func(a, b float64) string { return signed(b-a, 3) }},
	{get: func(r *result.Run) (float64, bool) {
		if r.Latency == nil {
			return 0, false
		}
		return float64(r.Latency.P99), true
	}, show: func(v float64) string { return fmtNS(int64(v)) }, diff: durDiff},
	{get: func(r *result.Run) (float64, bool) {
		if r.Latency == nil {
			return 0, false
		}
		return float64(r.Latency.Max), true
	}, show: func(v float64) string { return fmtNS(int64(v)) }, diff: durDiff},
}

// diffCells formats every measure of a run on both sides; a nil run or a
// measure it does not have shows "-".
func diffCells(a, b *result.Run) []diffCell {
	out := make([]diffCell, len(measures))
	for i, m := range measures {
		c := diffCell{A: "-", B: "-", D: "-"}
		var va, vb float64
		var oka, okb bool
		if a != nil {
			if va, oka = m.get(a); oka {
				c.A = m.show(va)
			}
		}
		if b != nil {
			if vb, okb = m.get(b); okb {
				c.B = m.show(vb)
			}
		}
		if oka && okb {
			c.D = m.diff(va, vb)
			c.Changed = c.A != c.B
		}
		out[i] = c
	}
	return out
}

func count(v float64) string { return group(int64(v)) }

// countDiff is "+12 (+3.4%)", or "0".
func countDiff(a, b float64) string {
	d := int64(b - a)
	if d == 0 {
		return "0"
	}
	s := group(d)
	if d > 0 {
		s = "+" + s
	}
	if a != 0 {
		s += fmt.Sprintf(" (%+.1f%%)", 100*(b-a)/a)
	}
	return s
}

// signed formats v with a sign and the given decimals, "0" for zero.
func signed(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	switch {
	case s == strconv.FormatFloat(0, 'f', decimals, 64) || s == "-"+strconv.FormatFloat(0, 'f', decimals, 64):
		return "0"
	case v > 0:
		return "+" + s
	}
	return s
}

// durDiff is the signed difference of two durations in ns.
func durDiff(a, b float64) string {
	d := int64(b - a)
	switch {
	case d == 0:
		return "0"
	case d > 0:
		return "+" + fmtNS(d)
	}
	return "-" + fmtNS(-d)
}
