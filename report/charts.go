package report

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// curve is one run as a chart draws it: its label, style and data. A
// compare chart draws two curves per label, the second one dashed.
type curve struct {
	label string
	style style
	run   *result.Run
}

// curvesOf returns one curve per run of r, coloured by its algorithm.
func curvesOf(r *result.Result) []curve {
	names := r.Labels()
	out := make([]curve, len(r.Runs))
	seen, extra := map[string]int{}, map[string]int{}
	for i := range r.Runs {
		algo := r.Runs[i].Algorithm
		out[i] = curve{label: names[i], style: styleFor(algo, seen[algo], extra), run: &r.Runs[i]}
		seen[algo]++
	}
	return out
}

// runCharts renders the charts of one run folder, in the order the page
// shows them, each in its own goroutine.
func runCharts(r *result.Result) ([]chart, error) {
	cs := curvesOf(r)
	sides := []side{{curves: cs, policy: r.Policy, end: workloadEnd(r)}}
	// A boundary run shows the window edge, where its finding is, and no
	// rate per time bin: any bin wide enough to read averages the 2L at
	// the edge away, and makes the fixed window look the steadiest.
	var jobs []func() (chart, error)
	if isBoundary(r) {
		jobs = append(jobs, func() (chart, error) { return boundaryChart(cs, r.Policy, nsParam(r.Workload["edge_ns"])) })
	} else {
		jobs = append(jobs, func() (chart, error) { return rateChart(AdmittedRateFile, sides) })
	}
	if r.Policy.Limit > 0 { // else no limit to be a multiple of
		jobs = append(jobs, func() (chart, error) { return burstChart(BurstRatioFile, sides) })
	}
	if hasLatency(cs) {
		jobs = append(jobs, func() (chart, error) { return latencyChart(LatencyFile, sides, r.Meta.Mode) })
	}
	if hasKeys(cs) {
		jobs = append(jobs, func() (chart, error) { return keysChart(cs) })
	}
	return drawAll(jobs)
}

// drawAll runs the chart jobs concurrently and returns their charts in order,
// or the first error.
func drawAll(jobs []func() (chart, error)) ([]chart, error) {
	out := make([]chart, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() { out[i], errs[i] = job() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func hasLatency(cs []curve) bool {
	return slices.ContainsFunc(cs, func(c curve) bool { return c.run.LatencyHDR != "" })
}

func hasKeys(cs []curve) bool {
	return slices.ContainsFunc(cs, func(c curve) bool { return len(c.run.Keys) > 1 })
}

// perSecond is the policy's limit as a rate per second.
func perSecond(p result.PolicyJSON) float64 {
	return float64(p.Limit) / (float64(p.WindowNS) / 1e9)
}

// rateXY returns a series as a step line of cost per second against
// seconds from the start, summing k adjacent bins, at least minK (one
// window's worth, so that the line reads as the rate per W rather than
// the noise of a tenth of one) and enough for at most maxPoints steps; it
// also returns k.
func rateXY(bins []int64, binNS int64, minK int) (plotter.XYs, int) {
	k := max(1, minK, (len(bins)+maxPoints-1)/maxPoints)
	width := float64(int64(k)*binNS) / 1e9
	xys := make(plotter.XYs, 0, len(bins)/k+2)
	for i := 0; i < len(bins); i += k {
		var sum int64
		for _, v := range bins[i:min(i+k, len(bins))] {
			sum += v
		}
		xys = append(xys, plotter.XY{X: float64(int64(i)*binNS) / 1e9, Y: float64(sum) / width})
	}
	if n := len(xys); n > 0 { // close the last step
		xys = append(xys, plotter.XY{X: float64(int64(len(bins))*binNS) / 1e9, Y: xys[n-1].Y})
	}
	return xys, k
}

// side is one result on a chart: a run folder, or one of the two folders
// of a compare (named; the second drawn dashed).
type side struct {
	name   string
	curves []curve
	policy result.PolicyJSON
	end    int64 // where its workload ended, in ns from the start; 0: unknown
}

// workloadEnd is where r's workload stopped, in ns from the start: the
// intended span of its live passes (shorter when interrupted), else the
// workload's duration, else (a whole replay trace) the shortest series,
// whose bins stop at the last arrival unless a shaper was still serving.
func workloadEnd(r *result.Result) int64 {
	var end int64
	for _, run := range r.Runs {
		if run.Live != nil {
			end = max(end, run.Live.SpanNS)
		}
	}
	if end > 0 {
		return end
	}
	if end = nsParam(r.Workload["duration_ns"]); end > 0 {
		return end
	}
	for _, run := range r.Runs {
		if s := run.Series; s.BinNS > 0 {
			if n := int64(len(s.Admitted)) * s.BinNS; end == 0 || n < end {
				end = n
			}
		}
	}
	return end
}

// nsParam reads a duration of the workload's parameters: int64 when the
// result was made, float64 when it was read from result.json; 0 when
// absent.
func nsParam(v any) int64 {
	switch d := v.(type) {
	case int64:
		return d
	case int:
		return int64(d)
	case float64:
		return int64(d)
	}
	return 0
}

// drainEnd is the end of the last bin of s that admitted anything and
// started at or after end (a shaper still serving its queue after the
// workload stopped: its drain), or 0 when there is none.
func drainEnd(s result.Series, end int64) int64 {
	if s.BinNS <= 0 || end <= 0 {
		return 0
	}
	for i := int64(len(s.Admitted)) - 1; i >= 0 && i*s.BinNS >= end; i-- {
		if s.Admitted[i] > 0 {
			return (i + 1) * s.BinNS
		}
	}
	return 0
}

// keysOf is how many keys a run limited, each on its own.
func keysOf(run *result.Run) int {
	if run.KeyCount > 0 {
		return run.KeyCount
	}
	return max(len(run.Keys), 1)
}

// panelGrid returns rows x cols empty cells for n panels, at most most
// columns, and cols.
func panelGrid(n, most int) ([][]*plot.Plot, int) {
	cols := 4
	switch {
	case n <= 3:
		cols = max(n, 1)
	case n == 4:
		cols = 2
	case n <= 9:
		cols = 3
	}
	cols = min(cols, most)
	rows := (n + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for j := range grid {
		grid[j] = make([]*plot.Plot, cols)
	}
	return grid, cols
}

// panelPlot returns the plot of panel i of n in a grid of cols columns
// sharing its axes: titled, with tick labels on the y axis of the first
// column and on the x axis of the lowest panel of each column only.
func panelPlot(title string, i, n, cols int, xlabel, ylabel string) *plot.Plot {
	first, lowest := i%cols == 0, i+cols >= n
	if !first {
		ylabel = ""
	}
	if !lowest {
		xlabel = ""
	}
	p := newPlot(xlabel, ylabel)
	p.Title.Text = title
	p.Title.TextStyle = textStyle(9)
	p.Title.TextStyle.XAlign, p.Title.TextStyle.YAlign = draw.XCenter, draw.YTop
	p.Title.Padding = vg.Points(3)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = textStyle(8.5)
		a.Label.TextStyle.XAlign = draw.XCenter
	}
	xn := 6
	if cols >= 3 {
		xn = 4
	}
	p.X.Tick.Marker = niceTicks{n: xn}
	if !lowest {
		p.X.Tick.Marker = unlabelled{niceTicks{n: xn}}
	}
	if !first {
		p.Y.Tick.Marker = unlabelled{niceTicks{n: 4}}
	}
	return p
}

// titles lists the titles of the figure's panels, row by row.
func (f figure) titles() []string {
	var out []string
	for _, row := range f.plots {
		for _, p := range row {
			if p != nil {
				out = append(out, p.Title.Text)
			}
		}
	}
	return out
}

// box returns a filled rectangle from (x0, y0) to (x1, y1), drawn without
// an outline.
func box(x0, y0, x1, y1 float64, fill color.Color) *plotter.Polygon {
	return &plotter.Polygon{XYs: []plotter.XYs{{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}}, Color: fill}
}

// rateNotes is what the admitted-rate figure shows that its caption says.
type rateNotes struct {
	step    time.Duration // the width of one step of the lines
	end     int64         // where the workload ended (ns); 0: unknown
	drained bool          // a panel shows a drain after the end
	limit   string        // what the grey band is, or why there is none
}

// rateFigure lays out admitted and rejected per second over time, one
// panel per label on shared axes (a compare overlays the two sides of a
// label in one panel), the limit a band under the data, the x axis ending
// where the workload did, unless a shaper drained its queue after it:
// then the axis runs on to the drain's end, shaded.
func rateFigure(sides []side) (figure, rateNotes) {
	order, byLabel := labelOrder(seriesGroups(sides))
	d := collectRates(sides, order, byLabel)
	drawn, omitted, top := splitLimits(d.panels, d.dataHi)
	ax := rateAxes{xMax: drainAxisEnd(d.panels, d.xEnd), yMax: headroom(top), dataHi: d.dataHi}
	ax.x1 = math.Max(float64(ax.xMax)/1e9, 1e-9)
	ax.drained = ax.xMax > d.xEnd
	d.notes.drained = ax.drained

	grid, cols := panelGrid(len(order), 4)
	for i, l := range order {
		grid[i/cols][i%cols] = d.panels[i].plot(l, i, len(order), cols, ax, policiesDiffer(sides))
	}
	leg := newLegend()
	addRateLineKeys(leg, sides)
	addLimitKeys(leg, sides, drawn, omitted)
	if ax.drained {
		leg.add("after the workload's end", swatch{fill: shade, outline: true, line: draw.LineStyle{Color: faint, Width: vg.Points(0.5)}})
	}
	d.notes.limit = limitNote(drawn, omitted)
	return figure{title: "Admitted and rejected per second", height: vg.Length(len(grid))*ratePanelHeight(len(grid)) + 1.1*vg.Inch,
		plots: grid, legend: leg, legendTop: true}, d.notes
}

// seriesGroups returns, per side, the curves whose runs have a time
// series.
func seriesGroups(sides []side) [][]curve {
	groups := make([][]curve, len(sides))
	for g, sd := range sides {
		for _, c := range sd.curves {
			if c.run.Series.BinNS > 0 {
				groups[g] = append(groups[g], c)
			}
		}
	}
	return groups
}

// policiesDiffer reports whether sides is a compare of two results with
// different policies.
func policiesDiffer(sides []side) bool {
	return len(sides) > 1 && sides[0].policy != sides[1].policy
}

// rateLine is one line of a rate panel.
type rateLine struct {
	xys  plotter.XYs
	ls   draw.LineStyle
	back bool // rejected: drawn under the admitted lines
}

// ratePanel is what one panel of the rate figure draws: the lines and
// limits of one label's runs.
type ratePanel struct {
	lines  []rateLine
	limits []limitMark
	drain  int64   // the latest drain end, ns; 0: none
	ends   []int64 // where its runs' workloads ended, ns
}

// rateData is the rate figure's panels, one per label, and what its axes
// and caption need from them.
type rateData struct {
	panels []ratePanel
	notes  rateNotes
	dataHi float64 // the highest rate of any line
	xEnd   int64   // the latest end of any workload, ns
}

// collectRates builds the panel of each label of order from the runs of
// every side that has it.
func collectRates(sides []side, order []string, byLabel []map[string]curve) rateData {
	d := rateData{panels: make([]ratePanel, len(order))}
	for i, l := range order {
		for g, sd := range sides {
			if c, ok := byLabel[g][l]; ok {
				d.add(&d.panels[i], l, g, sd, c)
			}
		}
	}
	return d
}

// add draws c, the run labelled l of side g, into the panel pn: its
// admitted and rejected lines, where its workload ended, its drain and
// its limit.
func (d *rateData) add(pn *ratePanel, l string, g int, sd side, c curve) {
	s := c.run.Series
	perW := int((sd.policy.WindowNS + s.BinNS - 1) / s.BinNS)
	adm, k := rateXY(s.Admitted, s.BinNS, perW)
	rej, _ := rateXY(s.Rejected, s.BinNS, perW)
	d.notes.step = time.Duration(int64(k) * s.BinNS)
	rejStyle := draw.LineStyle{Color: rejGrey, Width: vg.Points(1), Dashes: c.style.dashes}
	pn.lines = append(pn.lines, rateLine{xys: rej, ls: rejStyle, back: true}, rateLine{xys: adm, ls: c.style.line(1.4)})
	for _, xys := range []plotter.XYs{adm, rej} {
		for _, xy := range xys {
			d.dataHi = math.Max(d.dataHi, xy.Y)
		}
	}
	end := sd.end
	if end <= 0 {
		end = int64(len(s.Admitted)) * s.BinNS
	}
	if !slices.Contains(pn.ends, end) {
		pn.ends = append(pn.ends, end)
	}
	d.xEnd = max(d.xEnd, end)
	d.notes.end = max(d.notes.end, sd.end)
	if dr := drainEnd(s, sd.end); dr > 0 {
		pn.drain = max(pn.drain, dr)
	}
	if sd.policy.Limit > 0 {
		per := perSecond(sd.policy)
		n := keysOf(c.run)
		pn.limits = append(pn.limits, limitMark{label: l, rate: per * float64(n), keys: n, side: g, perKey: per})
	}
}

// splitLimits sorts the panels' limits into those drawn and those left
// out, and returns the highest rate the y axis must show. A limit summed
// over many keys far above anything admitted is left out: it would squash
// every line flat at the bottom.
func splitLimits(panels []ratePanel, dataHi float64) (drawn, omitted []limitMark, top float64) {
	top = dataHi
	for _, pn := range panels {
		for _, m := range pn.limits {
			if m.shown(dataHi) {
				top = math.Max(top, m.rate)
				drawn = append(drawn, m)
			} else {
				omitted = append(omitted, m)
			}
		}
	}
	return drawn, omitted, top
}

// drainAxisEnd is where the x axis ends, in ns: at xEnd, the latest
// workload end, unless a drain runs on after it. Drains show after the
// end on at most a sixth more of the axis: a longer one is cut there, its
// length in its panel's title.
func drainAxisEnd(panels []ratePanel, xEnd int64) int64 {
	xMax := xEnd
	for _, pn := range panels {
		xMax = max(xMax, min(pn.drain, xEnd+xEnd/6))
	}
	return xMax
}

// rateAxes is what the panels of the rate figure share.
type rateAxes struct {
	xMax    int64   // the end of the x axis, ns
	x1      float64 // the same in seconds, above 0
	yMax    float64 // the top of the y axis
	dataHi  float64 // the highest rate of any line
	drained bool    // the x axis runs on after the workload's end
}

// plot draws the panel of label l, panel i of n in cols columns: the
// shade after its workload's end, its limits (dashed for the second side
// of a compare when dashSecond), then its rejected lines under its
// admitted ones.
func (pn ratePanel) plot(l string, i, n, cols int, ax rateAxes, dashSecond bool) *plot.Plot {
	title := l
	if pn.drain > 0 {
		title += fmt.Sprintf(" (%s drain)", fmtNS(pn.drain-slices.Max(pn.ends)))
	}
	p := panelPlot(title, i, n, cols, "time since start (s)", "per second")
	if ax.drained {
		for _, e := range pn.ends {
			if e < ax.xMax {
				p.Add(box(float64(e)/1e9, 0, ax.x1, ax.yMax, shade))
			}
		}
	}
	for _, m := range pn.limits {
		if m.shown(ax.dataHi) {
			ls := limitLine
			if m.side > 0 && dashSecond {
				ls.Dashes = dashed
			}
			p.Add(hline(m.rate, 0, ax.x1, ls))
		}
	}
	for _, back := range []bool{true, false} {
		for _, ln := range pn.lines {
			if ln.back == back && len(ln.xys) > 0 {
				p.Add(lines(ln.xys, plotter.PostStep, ln.ls, nil)...)
			}
		}
	}
	p.X.Min, p.X.Max = 0, ax.x1
	p.Y.Min, p.Y.Max = 0, ax.yMax
	return p
}

// addRateLineKeys adds the styles of the rate figure's lines to leg: one
// admitted and one rejected entry, or for a compare one of each per side,
// the second dashed.
func addRateLineKeys(leg *legend, sides []side) {
	if len(sides) == 1 {
		leg.add("admitted, in the run's colour", stripes{width: 1.6})
		leg.add("rejected", swatch{line: draw.LineStyle{Color: rejGrey, Width: vg.Points(1.2)}})
		return
	}
	for g, sd := range sides {
		var d []vg.Length
		if g > 0 {
			d = dashed
		}
		leg.add("admitted, "+sd.name, stripes{width: 1.6, dashes: d})
	}
	for g, sd := range sides {
		ls := draw.LineStyle{Color: rejGrey, Width: vg.Points(1.2)}
		if g > 0 {
			ls.Dashes = dashed
		}
		leg.add("rejected, "+sd.name, swatch{line: ls})
	}
}

// addLimitKeys adds the limits to leg: the one limit drawn, or one entry
// for several summed over keys, or, when none is drawn, why the first
// left out is not.
func addLimitKeys(leg *legend, sides []side, drawn, omitted []limitMark) {
	var texts []string
	for _, m := range drawn {
		t := m.text()
		if policiesDiffer(sides) {
			t += " (" + sides[m.side].name + ")"
		}
		if !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	switch {
	case len(texts) == 1:
		leg.add(texts[0], swatch{line: limitLine})
	case len(texts) > 1:
		leg.add("limit, summed over keys", swatch{line: limitLine})
	}
	if len(omitted) > 0 && len(drawn) == 0 {
		m := omitted[0]
		leg.add(fmt.Sprintf("limit %s/s per key (x %d keys = %s: off the scale)", num(m.perKey), m.keys, rate(m.rate)))
	}
}

// ratePanelHeight is the height of one row of rate panels, taller when
// there are fewer rows.
func ratePanelHeight(rows int) vg.Length {
	switch rows {
	case 1:
		return 2.6 * vg.Inch
	case 2:
		return 1.9 * vg.Inch
	}
	return 1.55 * vg.Inch
}

// limitMark is the limit of one run of a rate panel: L/W per key, and
// summed over its keys.
type limitMark struct {
	label        string
	rate, perKey float64
	keys, side   int
}

// shown reports whether m is drawn on a rate panel whose lines reach
// dataHi: a limit of one key always is, a sum over keys only when it is
// not far above anything admitted.
func (m limitMark) shown(dataHi float64) bool {
	return m.keys == 1 || m.rate <= 1.5*dataHi
}

// text is m as the legend gives it.
func (m limitMark) text() string {
	if m.keys == 1 {
		return fmt.Sprintf("limit %s/s", num(m.rate))
	}
	return fmt.Sprintf("limit %s/s x %d keys", num(m.perKey), m.keys)
}

// limitNote says what the grey band of the rate chart is: the limit, or
// its sum over the keys, and why it is not drawn where it is not (a sum
// over many keys far above anything admitted).
func limitNote(drawn, omitted []limitMark) string {
	if len(drawn) == 0 && len(omitted) == 0 {
		return "No limit is known, so none is drawn."
	}
	var one, many []limitMark
	for _, m := range drawn {
		if m.keys == 1 {
			one = append(one, m)
		} else {
			many = append(many, m)
		}
	}
	var s string
	switch {
	case len(one) > 0 && len(many) > 0:
		s = fmt.Sprintf("The grey band is the limit L/W, %s/s, summed over the keys of a run with several.", num(one[0].rate))
	case len(one) > 0:
		s = fmt.Sprintf("The grey band is the limit L/W, %s/s.", num(one[0].rate))
	case len(many) > 0:
		s = fmt.Sprintf("The grey band is the limit, %s/s for each key, summed over the run's keys.", num(many[0].perKey))
	}
	if len(omitted) == 0 {
		return s
	}
	hi := slices.MaxFunc(omitted, func(a, b limitMark) int { return cmp.Compare(a.rate, b.rate) })
	if len(drawn) == 0 {
		return fmt.Sprintf("The limit, %s/s, applies to each key on its own; summed over the %d keys, %s, "+
			"it is far above anything admitted and not drawn.", num(hi.perKey), hi.keys, rate(hi.rate))
	}
	var labels []string
	for _, m := range omitted {
		if !slices.Contains(labels, m.label) {
			labels = append(labels, m.label)
		}
	}
	return s + fmt.Sprintf(" For %s, with several keys, the limit applies to each key on its own, and its sum over them "+
		"(up to %s) is far above anything admitted and not drawn.", strings.Join(labels, ", "), rate(hi.rate))
}

// labelLegend adds one entry per label in first-seen order, in the style
// of its first curve, then for a compare which side is solid and which
// dashed.
func labelLegend(leg *legend, sides []side, keep func(curve) bool) {
	seen := map[string]bool{}
	for _, sd := range sides {
		for _, c := range sd.curves {
			if !seen[c.label] && keep(c) {
				seen[c.label] = true
				leg.add(c.label, swatch{line: c.style.line(2)})
			}
		}
	}
	if len(sides) > 1 {
		for g, sd := range sides {
			var d []vg.Length
			if g > 0 {
				d = dashed
			}
			leg.add(sd.name, stripes{width: 1.6, dashes: d})
		}
	}
}

// rateChart draws admitted and rejected per second over time: one panel
// per label (rateFigure).
func rateChart(file string, sides []side) (chart, error) {
	f, notes := rateFigure(sides)
	caption := fmt.Sprintf("Cost admitted (served, for shapers) per second, in each run's colour, and rejected per second, "+
		"in grey, in steps of %v: one panel per run, all on the same axes. %s", notes.step, notes.limit)
	switch {
	case notes.drained:
		caption += fmt.Sprintf(" The workload ended at %s; the shaded part after it is a shaper still serving its queue "+
			"(its drain, whose length the panel's title gives: a longer one is cut at the axis's end).", fmtNS(notes.end))
	case notes.end > 0:
		caption += fmt.Sprintf(" The x axis ends where the workload did, at %s.", fmtNS(notes.end))
	}
	png, err := f.png()
	return chart{File: file, Title: "Admitted and rejected per second", Caption: caption, PNG: png}, err
}

// burstChart draws, per label, the most admitted in any span W as a
// multiple of the limit, one bar per side (one for a run, two for a
// compare), beside the theory.
func burstChart(file string, sides []side) (chart, error) {
	groups := make([][]curve, len(sides))
	for g, sd := range sides {
		groups[g] = sd.curves
	}
	order, byLabel := labelOrder(groups)
	n := len(order)
	p := newPlot("most admitted in any span W, as a multiple of the limit L", "")
	p.Y.Tick.Label = textStyle(9)
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	nominal := make([]string, n)
	for i, l := range order {
		nominal[n-1-i] = l
	}
	p.NominalY(nominal...)
	// One theory bar per label, or one per side when the policies differ.
	theories := 1
	if len(sides) > 1 && sides[0].policy != sides[1].policy {
		theories = len(sides)
	}
	bars := len(groups) + theories
	p.Add(vline(1, -0.5, float64(n)-0.5, limitLine)) // under the bars
	hi, err := addBurstBars(p, order, byLabel, theories)
	if err != nil {
		return chart{}, err
	}
	p.X.Min, p.X.Max = 0, math.Max(hi, 1)*1.2
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	leg := newLegend()
	for g, sd := range sides {
		name := "observed, in the run's colour"
		if len(sides) > 1 {
			name = sd.name + ", in the run's colour"
			if g > 0 {
				name = sd.name + ", the same lighter"
			}
		}
		leg.add(name, stripes{box: true, light: g > 0})
	}
	for k := range theories {
		name := "theory: the worst case allowed"
		if theories > 1 {
			name = "theory, " + sides[k].name
		}
		leg.add(name, swatch{outline: true, line: theoryLine(k)})
	}
	leg.add("limit L", swatch{line: limitLine})
	png, err := figure{title: "Most admitted in any span W, against theory",
		height: vg.Length(n)*(vg.Length(bars)*barWidth+vg.Points(10)) + 1.3*vg.Inch,
		plots:  [][]*plot.Plot{{p}}, legend: leg, legendTop: true}.png()
	return chart{
		File:  file,
		Title: "Burst ratio against theory",
		Caption: "The most cost admitted (served, for shapers) for one key in any span of W, " +
			"counted exactly, divided by L, in each run's colour; the outlined bars are the worst case " +
			"the algorithm allows in theory, and the grey band is the limit (1x).",
		PNG: png,
	}, err
}

// addBurstBars adds, for each label (top to bottom), one bar per group
// with its value written beside it, then the theory bars, and returns the
// largest value drawn.
func addBurstBars(p *plot.Plot, order []string, byLabel []map[string]curve, theories int) (float64, error) {
	n, groups := len(order), len(byLabel)
	bars := groups + theories
	values := make([]plotter.XYLabels, groups)
	var hi float64
	for i, l := range order {
		y := float64(n - 1 - i)
		for g := range groups {
			c, ok := byLabel[g][l]
			if !ok {
				continue
			}
			fill := c.style.color
			if g > 0 {
				fill = lighter(fill)
			}
			if err := addBar(p, y, c.run.BurstRatio, fill, bars, g, draw.LineStyle{}); err != nil {
				return 0, err
			}
			hi = math.Max(hi, c.run.BurstRatio)
			values[g].XYs = append(values[g].XYs, plotter.XY{X: c.run.BurstRatio, Y: y})
			values[g].Labels = append(values[g].Labels, strconv.FormatFloat(c.run.BurstRatio, 'f', 2, 64)+"x")
		}
		for k := range theories {
			c, ok := byLabel[k][l]
			if theories == 1 {
				c, ok = firstOf(byLabel, l), true
			}
			if !ok {
				continue
			}
			th := theoryRatio(*c.run)
			if err := addBar(p, y, th, nil, bars, groups+k, theoryLine(k)); err != nil {
				return 0, err
			}
			hi = math.Max(hi, th)
		}
	}
	for g, v := range values {
		if len(v.XYs) == 0 {
			continue
		}
		lbl, err := plotter.NewLabels(v)
		if err != nil {
			return 0, fmt.Errorf("report: %w", err)
		}
		for i := range lbl.TextStyle {
			lbl.TextStyle[i] = textStyle(8)
			lbl.TextStyle[i].YAlign = draw.YCenter
		}
		lbl.Offset = vg.Point{X: vg.Points(3), Y: barOffset(bars, g)}
		p.Add(lbl)
	}
	return hi, nil
}

// theoryLine is the outline of the k-th side's theory bars: grey, dashed
// for the second side.
func theoryLine(k int) draw.LineStyle {
	ls := draw.LineStyle{Color: color.RGBA{0x88, 0x88, 0x88, 0xff}, Width: vg.Points(1)}
	if k > 0 {
		ls.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	}
	return ls
}

// barWidth is the thickness of one bar of burstChart.
const barWidth = 9 * vg.Length(1)

// barOffset is the position of bar g of bars within its row, the first on
// top.
func barOffset(bars, g int) vg.Length {
	return (vg.Length(bars-1)/2 - vg.Length(g)) * barWidth
}

// addBar adds bar g of bars, of value v, on row y: filled with fill, or
// when fill is nil, white and outlined with outline.
func addBar(p *plot.Plot, y, v float64, fill color.Color, bars, g int, outline draw.LineStyle) error {
	b, err := plotter.NewBarChart(plotter.Values{v}, barWidth)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	b.Horizontal = true
	b.XMin = y
	b.Offset = barOffset(bars, g)
	b.Color = fill
	b.LineStyle.Width = 0
	if fill == nil {
		b.Color = color.White
		b.LineStyle = outline
	}
	p.Add(b)
	return nil
}

// labelOrder lists the labels of all groups in first-seen order, and maps
// each group's labels to its curves.
func labelOrder(groups [][]curve) ([]string, []map[string]curve) {
	var order []string
	seen := map[string]bool{}
	maps := make([]map[string]curve, len(groups))
	for g, cs := range groups {
		maps[g] = map[string]curve{}
		for _, c := range cs {
			maps[g][c.label] = c
			if !seen[c.label] {
				seen[c.label] = true
				order = append(order, c.label)
			}
		}
	}
	return order, maps
}

func firstOf(maps []map[string]curve, label string) curve {
	for _, m := range maps {
		if c, ok := m[label]; ok {
			return c
		}
	}
	return curve{}
}

// theoryRatio is the worst case of a run over L: one instance's theory,
// times the replicas when each keeps its own state in memory.
func theoryRatio(run result.Run) float64 {
	if run.TheoryMaxInWindow == 0 {
		return 0
	}
	return run.TheoryRatio * float64(run.TheoryFor()) / float64(run.TheoryMaxInWindow)
}

// num formats a rate or count with at most 3 decimals and no trailing
// zeros.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
