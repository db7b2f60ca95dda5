package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
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

// curvesOf returns one curve per run of r, coloured by position.
func curvesOf(r *result.Result) []curve {
	names := r.Labels()
	out := make([]curve, len(r.Runs))
	for i := range r.Runs {
		out[i] = curve{label: names[i], style: styleOf(i), run: &r.Runs[i]}
	}
	return out
}

// runCharts renders the charts of one run folder, in the order the page
// shows them, each in its own goroutine.
func runCharts(r *result.Result) ([]chart, error) {
	cs := curvesOf(r)
	sides := []side{{curves: cs, policy: r.Policy}}
	jobs := []func() (chart, error){
		func() (chart, error) { return rateChart(AdmittedRateFile, sides) },
	}
	if isBoundary(r) {
		jobs = append(jobs, func() (chart, error) { return boundaryChart(cs, r.Policy) })
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
			ls := draw.LineStyle{Color: ink, Width: vg.Points(1.5)}
			if g > 0 {
				ls.Dashes = dashed
			}
			leg.add(sd.name, swatch{line: ls})
		}
	}
}

// rateChart draws admitted per second over time, one line per curve with
// the limit dashed, over a second panel of rejected per second.
func rateChart(file string, sides []side) (chart, error) {
	top := newPlot("", "admitted per second")
	bottom := newPlot("time since start (s)", "rejected per second")
	top.X.Tick.Marker = unlabelled{plainTicks{}}
	var end float64
	binNS, k := int64(0), 1
	for _, sd := range sides {
		for i, c := range sd.curves {
			// Earlier lines are drawn wider so that identical ones stay visible.
			width := 1.2 + 2*float64(len(sd.curves)-1-i)/float64(max(len(sd.curves)-1, 1))
			s := c.run.Series
			if s.BinNS <= 0 {
				continue
			}
			perW := int((sd.policy.WindowNS + s.BinNS - 1) / s.BinNS)
			adm, ka := rateXY(s.Admitted, s.BinNS, perW)
			rej, _ := rateXY(s.Rejected, s.BinNS, perW)
			for _, part := range []struct {
				p   *plot.Plot
				xys plotter.XYs
			}{{top, adm}, {bottom, rej}} {
				if len(part.xys) > 0 {
					part.p.Add(lines(part.xys, plotter.PostStep, c.style.line(width), nil)...)
					end = max(end, part.xys[len(part.xys)-1].X)
				}
			}
			binNS, k = s.BinNS, ka
		}
	}
	leg := newLegend()
	labelLegend(leg, sides, func(c curve) bool { return c.run.Series.BinNS > 0 })
	end = max(end, 1e-9)
	var limits []float64
	for g, sd := range sides {
		limit := perSecond(sd.policy)
		if limit == 0 || slices.Contains(limits, limit) { // no limit known, or drawn
			continue
		}
		limits = append(limits, limit)
		ls := draw.LineStyle{Color: ink, Width: vg.Points(1), Dashes: dashed}
		name := fmt.Sprintf("limit %s/s", num(limit))
		if g > 0 {
			ls.Dashes = dotted
			name += " (" + sd.name + ")"
		}
		top.Add(hline(limit, 0, end, ls))
		leg.add(name, swatch{line: ls})
		top.Y.Max = math.Max(top.Y.Max, limit*1.1)
	}
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = 0, end
		p.Y.Min = 0
	}
	png, err := figure{title: "Admitted and rejected per second", height: 5.2 * vg.Inch,
		plots: [][]*plot.Plot{{top}, {bottom}}, legend: leg}.png()
	step := time.Duration(int64(k) * binNS)
	return chart{
		File:  file,
		Title: "Admitted and rejected per second",
		Caption: fmt.Sprintf("Cost admitted (served, for shapers) and rejected per second, in steps of %v; "+
			"the dashed line is the limit L/W (per key when there are several keys).", step),
		PNG: png,
	}, err
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
	hi, err := addBurstBars(p, order, byLabel, theories)
	if err != nil {
		return chart{}, err
	}
	limit := draw.LineStyle{Color: ink, Width: vg.Points(1), Dashes: dashed}
	p.Add(vline(1, -0.5, float64(n)-0.5, limit))
	p.X.Min, p.X.Max = 0, math.Max(hi, 1)*1.2
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	leg := newLegend()
	for g, sd := range sides {
		name, f := sd.name, palette[0]
		if len(sides) == 1 {
			name = "observed"
		}
		if g > 0 {
			f = lighter(f)
		}
		leg.add(name, swatch{fill: f})
	}
	for k := range theories {
		name := "theory"
		if theories > 1 {
			name += ", " + sides[k].name
		}
		leg.add(name, swatch{fill: theoryFill(k)})
	}
	leg.add("limit L", swatch{line: limit})
	png, err := figure{title: "Most admitted in any span W, against theory",
		height: vg.Length(n)*(vg.Length(bars)*barWidth+vg.Points(10)) + 1.3*vg.Inch,
		plots:  [][]*plot.Plot{{p}}, legend: leg}.png()
	return chart{
		File:  file,
		Title: "Burst ratio against theory",
		Caption: "The most cost admitted (served, for shapers) for one key in any span of W, " +
			"counted exactly, divided by L; grey bars are the worst case the algorithm allows in theory.",
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
			if err := addBar(p, y, c.run.BurstRatio, fill, bars, g); err != nil {
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
			if err := addBar(p, y, th, theoryFill(k), bars, groups+k); err != nil {
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

// theoryFill is the grey of the k-th side's theory bars.
func theoryFill(k int) color.RGBA {
	if k > 0 {
		return lighter(faint)
	}
	return faint
}

// barWidth is the thickness of one bar of burstChart.
const barWidth = 9 * vg.Length(1)

// barOffset is the position of bar g of bars within its row, the first on
// top.
func barOffset(bars, g int) vg.Length {
	return (vg.Length(bars-1)/2 - vg.Length(g)) * barWidth
}

// addBar adds bar g of bars, of value v, on row y.
func addBar(p *plot.Plot, y, v float64, fill color.Color, bars, g int) error {
	b, err := plotter.NewBarChart(plotter.Values{v}, barWidth)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	b.Horizontal = true
	b.XMin = y
	b.Offset = barOffset(bars, g)
	b.Color = fill
	b.LineStyle.Width = 0
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
