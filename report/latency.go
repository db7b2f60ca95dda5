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
	specs, top, err := latencySpecs(sides)
	if err != nil {
		return chart{}, err
	}
	what := "latency"
	if mode == "sim" {
		what = "delay"
	}
	// Values in ns on a log axis from a whole decade: a linear one flattens
	// everything under a tenth of the max. At most seven decades below the
	// max are shown; lower values, and delays of zero (recorded as 1ns),
	// are drawn at the bottom edge.
	p := newPlot("percentile", what+", log scale")
	leg := newLegend()
	spectra, lo, hiX := latencySpectra(specs)
	p.Y.Min, p.Y.Max = logRange(lo, top, 7)
	clamped := false
	for i, s := range specs {
		clamped = clampBelow(spectra[i], p.Y.Min) || clamped
		p.Add(lines(spectra[i], plotter.NoStep, s.c.style.line(1.5), nil)...)
		if len(sides) == 1 {
			leg.add(fmt.Sprintf("%s (max %s)", s.c.label, fmtNS(s.h.Max())), swatch{line: s.c.style.line(2)})
		}
	}
	if len(sides) > 1 {
		labelLegend(leg, sides, func(c curve) bool { return c.run.LatencyHDR != "" })
	}
	setPercentileAxis(&p.X, hiX)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = durationTicks{}
	title, caption := latencyText(mode, clamped, p.Y.Min)
	png, err := figure{title: title, height: 4.2 * vg.Inch, plots: [][]*plot.Plot{{p}}, legend: leg}.png()
	return chart{File: file, Title: title, Caption: caption, PNG: png}, err
}

// latencySpec is one curve of the latency chart and its histogram.
type latencySpec struct {
	c curve
	h *hdrhistogram.Histogram
}

// latencySpecs decodes the latency histogram of every curve of sides
// that has one, and returns them with the largest max among them, in ns.
func latencySpecs(sides []side) ([]latencySpec, float64, error) {
	var specs []latencySpec
	var top float64
	for _, sd := range sides {
		for _, c := range sd.curves {
			if c.run.LatencyHDR == "" {
				continue
			}
			h, err := result.DecodeHistogram(c.run.LatencyHDR)
			if err != nil {
				return nil, 0, fmt.Errorf("report: %s: %w", c.label, err)
			}
			specs = append(specs, latencySpec{c, h})
			top = math.Max(top, float64(h.Max()))
		}
	}
	return specs, top, nil
}

// latencySpectra returns the spectrum of each spec, the lowest value
// among them above a delay of zero (+Inf when none is), and the highest
// x, at least 100.
func latencySpectra(specs []latencySpec) (spectra []plotter.XYs, lo, hiX float64) {
	hiX, lo = 100.0, math.Inf(1)
	spectra = make([]plotter.XYs, len(specs))
	for i, s := range specs {
		spectra[i] = spectrum(s.h, 1)
		for _, xy := range spectra[i] {
			if xy.Y > result.HistLowest { // not a delay of zero
				lo = math.Min(lo, xy.Y)
			}
		}
		hiX = math.Max(hiX, spectra[i][len(spectra[i])-1].X)
	}
	return spectra, lo, hiX
}

// clampBelow raises the values of xys under lo to lo, and reports
// whether there were any.
func clampBelow(xys plotter.XYs, lo float64) bool {
	clamped := false
	for j := range xys {
		if xys[j].Y < lo {
			xys[j].Y, clamped = lo, true
		}
	}
	return clamped
}

// setPercentileAxis makes a into a log 1/(1-p) axis from 1 to the decade at
// or above hiX, with smaller tick labels when it reaches past 99.9999%.
func setPercentileAxis(a *plot.Axis, hiX float64) {
	hiX = math.Pow10(int(math.Ceil(math.Log10(hiX) - 1e-9)))
	a.Scale = plot.LogScale{}
	a.Tick.Marker = percentileTicks(hiX)
	if hiX > 1e6 {
		a.Tick.Label = textStyle(7.5)
		a.Tick.Label.XAlign, a.Tick.Label.YAlign = draw.XCenter, draw.YTop
	}
	a.Min, a.Max = 1, hiX
}

// latencyText is the latency chart's title and caption: of latency, or
// in sim mode of the delay shapers put on requests, saying when values
// under yMin were drawn at the bottom edge.
func latencyText(mode string, clamped bool, yMin float64) (title, caption string) {
	title = "Latency by percentile"
	caption = "Latency (done minus intended send time) at each percentile up to the max, on a log scale; " +
		"the x axis stretches the tail as HdrHistogram's plotter does (log of 1/(1-p))."
	if mode == "sim" {
		title = "Shaper delay by percentile"
		caption = "The delay a shaper put on the requests it admitted, at each percentile up to the max, on a log scale; " +
			"meters decide instantly in virtual time and have no line. The x axis stretches the tail " +
			"as HdrHistogram's plotter does (log of 1/(1-p))."
	}
	switch {
	case clamped && mode == "sim":
		caption += fmt.Sprintf(" Delays under %s, zero among them, are drawn at the bottom edge.", fmtNS(int64(yMin)))
	case clamped:
		caption += fmt.Sprintf(" Values under %s are drawn at the bottom edge.", fmtNS(int64(yMin)))
	}
	return title, caption
}

// logRange returns the range of a log axis of ns for values in [lo, hi]:
// from the whole decade at or below lo, but at most most decades below
// hi, to half as much again as hi, so that the top line stays clear of
// the frame, and at least one decade.
func logRange(lo, hi float64, most int) (float64, float64) {
	if !(hi > 0) {
		return 1, 10
	}
	bottom := math.Floor(math.Log10(hi) + 1e-9)
	if lo > 0 && !math.IsInf(lo, 1) {
		bottom = math.Min(bottom, math.Floor(math.Log10(lo)+1e-9))
	}
	bottom = math.Max(math.Max(bottom, math.Ceil(math.Log10(hi))-float64(most)), 0)
	return math.Pow10(int(bottom)), math.Max(hi*1.5, math.Pow10(int(bottom)+1))
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
