package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/ratebench/ratebench/bench/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// spectrum returns the percentile spectrum of h as HdrHistogram's plotter
// draws it: x = 1/(1-p) for each percentile line of the .hgrm file, y the
// value there divided by div, ending at the max.
func spectrum(h *hdrhistogram.Histogram, div float64) plotter.XYs {
	var xys plotter.XYs
	for _, b := range h.CumulativeDistributionWithTicks(hgrmTicks) {
		q := b.Quantile / 100
		if q >= 1 {
			continue
		}
		xys = append(xys, plotter.XY{X: 1 / (1 - q), Y: float64(b.ValueAt) / div})
	}
	// The max is the top 1/N of N values: it ends the line at 1/(1-p) = N
	// (this library's iterator jumps to 100% once it reaches the last
	// bucket, where HdrHistogram's Java one keeps halving the distance).
	top := float64(h.Max()) / div
	end := max(float64(h.TotalCount()), 10)
	if len(xys) == 0 {
		return plotter.XYs{{X: 1, Y: top}, {X: end, Y: top}}
	}
	last := xys[len(xys)-1]
	if last.Y < top {
		xys = append(xys, plotter.XY{X: last.X, Y: top})
	}
	if last.X < end {
		xys = append(xys, plotter.XY{X: end, Y: top})
	}
	return xys
}

// percentileTicks labels the decades of a 1/(1-p) axis up to hi: 1 is
// 0%, 10 is 90%, 100 is 99%, 1000 is 99.9% and so on.
func percentileTicks(hi float64) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for k := 0; math.Pow10(k) <= hi*1.0001; k++ {
		label := "0%"
		if k > 0 {
			label = strconv.FormatFloat(100-100/math.Pow10(k), 'f', max(0, k-2), 64) + "%"
		}
		ts = append(ts, plot.Tick{Value: math.Pow10(k), Label: label})
	}
	return ts
}

// latencyChart draws the percentile spectrum of every curve with a
// latency histogram on a log 1/(1-p) axis, the way HdrHistogram's plotter
// does. In sim mode the values are the delays shapers put on admitted
// requests.
func latencyChart(file string, sides []side, mode string) (chart, error) {
	type spec struct {
		c curve
		h *hdrhistogram.Histogram
	}
	var specs []spec
	var top float64
	for _, sd := range sides {
		for _, c := range sd.curves {
			if c.run.LatencyHDR == "" {
				continue
			}
			h, err := result.DecodeHistogram(c.run.LatencyHDR)
			if err != nil {
				return chart{}, fmt.Errorf("report: %s: %w", c.label, err)
			}
			specs = append(specs, spec{c, h})
			top = math.Max(top, float64(h.Max()))
		}
	}
	what := "latency"
	if mode == "sim" {
		what = "delay"
	}
	// Linear like HdrHistogram's plotter, unless the maxima are so far
	// apart that the smaller lines would lie flat on the axis.
	logY := false
	for _, s := range specs {
		logY = logY || float64(s.h.Max())*30 < top
	}
	div, unit := timeUnit(top)
	ylabel := fmt.Sprintf("%s (%s)", what, unit)
	if logY {
		div, ylabel = 1, what+", log scale"
	}
	p := newPlot("percentile", ylabel)
	leg := newLegend()
	hiX, lo := 100.0, math.Inf(1)
	for _, s := range specs {
		xys := spectrum(s.h, div)
		for _, xy := range xys {
			if xy.Y > 0 {
				lo = math.Min(lo, xy.Y)
			}
		}
		p.Add(lines(xys, plotter.NoStep, s.c.style.line(1.5), nil)...)
		hiX = math.Max(hiX, xys[len(xys)-1].X)
		if len(sides) == 1 {
			leg.add(fmt.Sprintf("%s (max %s)", s.c.label, fmtNS(s.h.Max())), swatch{line: s.c.style.line(2)})
		}
	}
	if len(sides) > 1 {
		labelLegend(leg, sides, func(c curve) bool { return c.run.LatencyHDR != "" })
	}
	hiX = math.Pow10(int(math.Ceil(math.Log10(hiX) - 1e-9)))
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks(hiX)
	if hiX > 1e6 {
		p.X.Tick.Label = textStyle(7.5)
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	}
	p.X.Min, p.X.Max = 1, hiX
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max, 1e-9) * 1.05
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = durationTicks{}
		p.Y.Min = math.Max(lo, 1/div)
		if math.IsInf(lo, 1) {
			p.Y.Min = 1 / div
		}
		p.Y.Max = top / div * 1.5
	}
	title := "Latency by percentile"
	caption := "Latency (done minus intended send time) at each percentile up to the max; " +
		"the x axis stretches the tail as HdrHistogram's plotter does (log of 1/(1-p))."
	if mode == "sim" {
		title = "Shaper delay by percentile"
		caption = "The delay a shaper put on the requests it admitted, at each percentile up to the max; " +
			"meters decide instantly in virtual time and have no line. The x axis stretches the tail " +
			"as HdrHistogram's plotter does (log of 1/(1-p))."
	}
	png, err := figure{title: title, height: 4.2 * vg.Inch, plots: [][]*plot.Plot{{p}}, legend: leg}.png()
	return chart{File: file, Title: title, Caption: caption, PNG: png}, err
}

// durationTicks marks the decades of a log axis of nanoseconds with
// durations ("1µs", "10ms", "100s"), with minor ticks in between.
type durationTicks struct{}

// Ticks implements plot.Ticker.
func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for k := int(math.Floor(math.Log10(math.Max(lo, 1)))); math.Pow10(k) <= hi; k++ {
		v := math.Pow10(k)
		ts = append(ts, plot.Tick{Value: v, Label: decade(k)})
		for m := 2.0; m < 10 && m*v <= hi; m++ {
			ts = append(ts, plot.Tick{Value: m * v})
		}
	}
	return ts
}

// decade names 10^k ns: "1ns", "10ns", "100ns", "1µs", ... "1s", "1000s".
func decade(k int) string {
	units := []string{"ns", "µs", "ms", "s"}
	u := min(k/3, 3)
	return strconv.FormatFloat(math.Pow10(k-3*u), 'f', -1, 64) + units[u]
}

// fmtNS formats ns with three significant digits: "950ns", "1.23ms", "2s".
func fmtNS(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return strconv.FormatInt(ns, 10) + "ns"
	case d < time.Millisecond:
		return sig3(float64(ns)/1e3) + "µs"
	case d < time.Second:
		return sig3(float64(ns)/1e6) + "ms"
	}
	return sig3(float64(ns)/1e9) + "s"
}

// sig3 formats v (at least 1) with three significant digits, no exponent.
func sig3(v float64) string {
	digits := 2
	switch {
	case v >= 100:
		digits = 0
	case v >= 10:
		digits = 1
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}
