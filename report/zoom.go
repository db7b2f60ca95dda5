package report

import (
	"cmp"
	"fmt"
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

// boundaryChart draws one small panel per run: what it admitted per time
// bin from W/2 before to W/2 after the attacked window edge, the edge dotted
// and the limit L dashed. The panel title gives the exact most admitted
// in any span W.
func boundaryChart(cs []curve, pol result.PolicyJSON) (chart, error) {
	edge := attackedEdge(cs, pol.WindowNS)
	var bin int64 = 1
	for _, c := range cs {
		bin = max(bin, c.run.Series.BinNS)
	}
	half := max(pol.WindowNS/2, 5*bin)
	div, unit := timeUnit(float64(half))
	cols := min(3, len(cs))
	rows := (len(cs) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for j := range grid {
		grid[j] = make([]*plot.Plot, cols)
	}
	limit := float64(pol.Limit)
	ymax := limit
	edgeStyle := draw.LineStyle{Color: ink, Width: vg.Points(1), Dashes: dotted}
	limitStyle := draw.LineStyle{Color: ink, Width: vg.Points(0.8), Dashes: dashed}
	x0, x1 := -float64(half)/div, float64(half)/div
	for i, c := range cs {
		xlabel, ylabel := fmt.Sprintf("%s from the edge", unit), ""
		if i%cols == 0 {
			ylabel = "admitted per bin"
		}
		p := newPlot(xlabel, ylabel)
		p.X.Label.TextStyle = textStyle(8.5)
		p.X.Label.TextStyle.XAlign = draw.XCenter
		p.Y.Label.TextStyle = textStyle(8.5)
		p.Y.Label.TextStyle.XAlign = draw.XCenter
		p.Add(corner{fmt.Sprintf("%s\n%s in one W (%.2fx)", c.label, group(c.run.MaxAdmittedInWindow), c.run.BurstRatio)})
		xys := zoomXY(c.run.Series, edge, half, div)
		if len(xys) > 0 {
			p.Add(&plotter.Line{XYs: xys, StepStyle: plotter.PostStep, LineStyle: c.style.line(1.2),
				FillColor: translucent(c.style.color, 0x70)})
			for _, xy := range xys {
				ymax = math.Max(ymax, xy.Y)
			}
		}
		p.Add(hline(limit, x0, x1, limitStyle))
		p.X.Min, p.X.Max = x0, x1
		grid[i/cols][i%cols] = p
	}
	for i := range cs {
		p := grid[i/cols][i%cols]
		p.Add(vline(0, 0, ymax*1.45, edgeStyle))
		p.Y.Min, p.Y.Max = 0, ymax*1.45
	}
	leg := newLegend()
	leg.add("window edge", swatch{line: edgeStyle})
	leg.add(fmt.Sprintf("L = %d", pol.Limit), swatch{line: limitStyle})
	png, err := figure{title: fmt.Sprintf("Around the window edge at t=%s", fmtNS(edge)), height: vg.Length(rows)*1.9*vg.Inch + 0.7*vg.Inch,
		plots: grid, legend: leg}.png()
	return chart{
		File:  BoundaryFile,
		Title: "The window-boundary attack, up close",
		Caption: fmt.Sprintf("Cost admitted (served, for shapers) per bin of %s from W/2 before to W/2 after the window edge "+
			"where the worst span ended; the attack sends L just before the edge and L just after. "+
			"Panel titles give the exact most admitted in any span W.", fmtNS(bin)),
		PNG: png,
	}, err
}

// corner is a plotter that writes a panel's title in its top-left
// corner, inside the data area, so that it never changes the layout.
type corner struct{ text string }

// Plot implements plot.Plotter.
func (c corner) Plot(dc draw.Canvas, _ *plot.Plot) {
	ts := textStyle(9)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	dc.FillText(ts, vg.Point{X: dc.Min.X + vg.Points(4), Y: dc.Max.Y - vg.Points(2)}, c.text)
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
		p.Y.Min = 0
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
