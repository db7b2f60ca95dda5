package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/ratebench/ratebench/bench/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// attackedEdge is the window edge the boundary chart zooms on: the window
// boundary nearest to the end of the worst span of the run with the
// highest burst ratio (the first one on a tie).
func attackedEdge(cs []curve, window int64) int64 {
	worst := cs[0].run
	for _, c := range cs[1:] {
		if c.run.BurstRatio > worst.BurstRatio {
			worst = c.run
		}
	}
	edge := int64(math.Round(float64(worst.MaxWindowEndNS)/float64(window))) * window
	return max(edge, window)
}

// zoomHalf is how far the zoom reaches each side of the edge (ns): W/2,
// or ten bins where the bins are finer (a boundary run's are as wide as
// each half of its attack), and at least five bins.
func zoomHalf(window, bin int64) int64 { return max(min(window/2, 10*bin), 5*bin) }

// attackColour shades the span of the boundary attack.
var attackColour = color.RGBA{0xfd, 0xed, 0xc4, 0xff}

// boundaryChart draws one small panel per run: what it admitted per time
// bin around the attacked window edge (zoomHalf each side), the edge dotted, the attack's span shaded and the limit
// L as a band. The panel titles give the exact most admitted in any span
// W, and the time from its first admit to its last. attack is the length
// of each half of the attack (the workload's edge_ns), 0 when not known.
func boundaryChart(cs []curve, pol result.PolicyJSON, attack int64) (chart, error) {
	f, bin := boundaryFigure(cs, pol, attack)
	png, err := f.png()
	caption := fmt.Sprintf("Cost admitted (served, for shapers) per bin of %s, the series' bins in result.json, "+
		"from %s before to %[2]s after the window edge where the worst span ended, one panel per run on the same axes. ",
		fmtNS(bin), fmtNS(zoomHalf(pol.WindowNS, bin)))
	switch {
	case attack > 0 && attack < bin:
		caption += fmt.Sprintf("The attack (shaded) sends L in the %s before the edge and L in the %[1]s after it: "+
			"shorter than a bin, so each half lands in one or two bins, which cannot show how close together "+
			"the admits were. The panel titles give it exactly: the most admitted in any span W, and the time "+
			"from the first to the last admit inside it.", fmtNS(attack))
	case attack > 0:
		caption += fmt.Sprintf("The attack (shaded) sends L in the %s before the edge and L in the %[1]s after it. "+
			"Panel titles give the exact most admitted in any span W, and the time from the first to the last admit inside it.", fmtNS(attack))
	default:
		caption += "Panel titles give the exact most admitted in any span W, and the time from the first to the last admit inside it."
	}
	return chart{File: BoundaryFile, Title: "The window-boundary attack, up close", Caption: caption, PNG: png}, err
}

// boundaryFigure lays out boundaryChart; it also returns the bin width.
func boundaryFigure(cs []curve, pol result.PolicyJSON, attack int64) (figure, int64) {
	edge := attackedEdge(cs, pol.WindowNS)
	var bin int64 = 1
	for _, c := range cs {
		bin = max(bin, c.run.Series.BinNS)
	}
	half := zoomHalf(pol.WindowNS, bin)
	div, unit := timeUnit(float64(half))
	grid, cols := panelGrid(len(cs), 3)
	limit := float64(pol.Limit)
	hi := limit
	edgeStyle := draw.LineStyle{Color: ink, Width: vg.Points(1), Dashes: dotted}
	x0, x1 := -float64(half)/div, float64(half)/div
	series := make([]plotter.XYs, len(cs))
	for i, c := range cs {
		series[i] = zoomXY(c.run.Series, edge, half, div)
		for _, xy := range series[i] {
			hi = math.Max(hi, xy.Y)
		}
	}
	yMax := headroom(hi)
	for i, c := range cs {
		title := fmt.Sprintf("%s\n%s in one W (%.2fx)", c.label, group(c.run.MaxAdmittedInWindow), c.run.BurstRatio)
		if c.run.MaxWindowSpanNS > 0 {
			title += ", within " + fmtNS(int64(roundSig(float64(c.run.MaxWindowSpanNS), 3))) // 9.999ms is 10.0ms
		}
		p := panelPlot(title, i, len(cs), cols, fmt.Sprintf("%s from the edge", unit), "admitted per bin")
		if attack > 0 {
			p.Add(box(-float64(attack)/div, 0, float64(attack)/div, yMax, attackColour))
		}
		if limit > 0 {
			p.Add(hline(limit, x0, x1, limitLine))
		}
		if xys := series[i]; len(xys) > 0 {
			p.Add(&plotter.Line{XYs: xys, StepStyle: plotter.PostStep, LineStyle: c.style.line(1.2),
				FillColor: translucent(c.style.color, 0x70)})
		}
		p.Add(vline(0, 0, yMax, edgeStyle))
		p.X.Min, p.X.Max = x0, x1
		p.Y.Min, p.Y.Max = 0, yMax
		grid[i/cols][i%cols] = p
	}
	leg := newLegend()
	leg.add("window edge", swatch{line: edgeStyle})
	if attack > 0 {
		leg.add(fmt.Sprintf("the attack: %s each side of the edge", fmtNS(attack)), swatch{fill: attackColour})
	}
	if limit > 0 {
		leg.add(fmt.Sprintf("L = %d, a whole window's limit", pol.Limit), swatch{line: limitLine})
	}
	rowH := 2 * vg.Inch
	if len(grid) > 2 {
		rowH = 1.75 * vg.Inch
	}
	return figure{title: fmt.Sprintf("Around the window edge at t=%s, in bins of %s", fmtNS(edge), fmtNS(bin)),
		height: vg.Length(len(grid))*rowH + 1.1*vg.Inch, plots: grid, legend: leg, legendTop: true}, bin
}

// zoomXY returns the admitted bins of s that overlap [edge-half,
// edge+half], as a step line against time from the edge divided by div.
func zoomXY(s result.Series, edge, half int64, div float64) plotter.XYs {
	if s.BinNS <= 0 {
		return nil
	}
	lo := max(0, (edge-half)/s.BinNS)
	hi := min(int64(len(s.Admitted)), (edge+half+s.BinNS-1)/s.BinNS)
	var xys plotter.XYs
	for b := lo; b < hi; b++ {
		xys = append(xys, plotter.XY{X: float64(b*s.BinNS-edge) / div, Y: float64(s.Admitted[b])})
	}
	if n := len(xys); n > 0 {
		xys = append(xys, plotter.XY{X: float64(hi*s.BinNS-edge) / div, Y: xys[n-1].Y})
	}
	return xys
}

// keysChart draws each run's admitted per key, keys sorted from the most
// admitted, with Jain's fairness index in the legend. Skewed counts (the
// largest over 100 times the smallest non-zero one) go on log-log axes,
// where keys that got nothing are left out.
func keysChart(cs []curve) (chart, error) {
	var keyed []curve
	for _, c := range cs {
		if len(c.run.Keys) > 1 {
			keyed = append(keyed, c)
		}
	}
	series := make([]plotter.XYs, len(keyed))
	hi, lo := 0.0, math.Inf(1)
	for i, c := range keyed {
		series[i] = rankXY(c.run.Keys)
		for _, xy := range series[i] {
			hi = math.Max(hi, xy.Y)
			if xy.Y > 0 {
				lo = math.Min(lo, xy.Y)
			}
		}
	}
	logs := hi > 100*lo
	xlabel, ylabel := "key rank (most admitted first)", "admitted"
	if logs {
		xlabel, ylabel = xlabel+", log scale", ylabel+", log scale"
	}
	p := newPlot(xlabel, ylabel)
	leg := newLegend()
	for i, c := range keyed {
		xys := series[i]
		if logs {
			xys = slices.DeleteFunc(slices.Clone(xys), func(xy plotter.XY) bool { return xy.Y <= 0 })
			if len(xys) == 0 {
				continue
			}
		}
		// Earlier lines are drawn wider so that identical ones stay visible.
		width := 1.2 + 2*float64(len(keyed)-1-i)/float64(max(len(keyed)-1, 1))
		p.Add(lines(xys, plotter.NoStep, c.style.line(width), nil)...)
		if len(xys) <= 50 {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return chart{}, fmt.Errorf("report: %w", err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: c.style.color, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
			p.Add(sc)
		}
		leg.add(fmt.Sprintf("%s (Jain %.3f)", c.label, c.run.JainFairness), swatch{line: c.style.line(2)})
	}
	if logs {
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.X.Min, p.Y.Min = 1, lo
	} else {
		p.Y.Min, p.Y.Max = 0, headroom(hi)
	}
	png, err := figure{title: "Admitted per key", height: 4 * vg.Inch, plots: [][]*plot.Plot{{p}}, legend: leg}.png()
	return chart{
		File:  KeysFile,
		Title: "Admitted per key",
		Caption: "Requests admitted for each key, keys sorted from the most admitted; Jain's index is 1 " +
			"when every key got the same and 1/n when one key got everything.",
		PNG: png,
	}, err
}

// rankXY sorts keys by admitted, most first, and returns them as (rank,
// admitted): every one of the first 200 ranks, then evenly spaced ranks,
// the last one included, at most about maxPoints+200 points.
func rankXY(keys []result.KeyCount) plotter.XYs {
	adm := make([]int64, len(keys))
	for i, k := range keys {
		adm[i] = k.Admitted
	}
	slices.SortFunc(adm, func(a, b int64) int { return cmp.Compare(b, a) })
	step := max(1, (len(adm)+maxPoints-1)/maxPoints)
	var xys plotter.XYs
	for i, v := range adm {
		if i < 200 || i%step == 0 || i == len(adm)-1 {
			xys = append(xys, plotter.XY{X: float64(i + 1), Y: float64(v)})
		}
	}
	return xys
}
