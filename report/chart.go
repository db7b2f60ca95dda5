package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chart is one rendered PNG: its file name, what report.html says about
// it, and its bytes.
type chart struct {
	File    string
	Title   string
	Caption string
	PNG     []byte
}

// Drawing constants: charts are 8 inches wide at 144 dpi (1152 pixels),
// sharp on high-density screens and small enough to embed.
const (
	dpi        = 144
	chartWidth = 8 * vg.Inch
	maxPoints  = 1000 // most points per line: bins are summed beyond that
)

// sans is the typeface of every chart: Liberation Sans, built into
// gonum/plot, so rendering needs no system fonts.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// palette gives each run a colour that stays the same on every chart;
// past its end colours repeat with a dash pattern.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0xbc, 0xbd, 0x22, 0xff}, // olive
}

var (
	ink      = color.RGBA{0x22, 0x22, 0x22, 0xff}
	faint    = color.RGBA{0xbb, 0xbb, 0xbb, 0xff}
	gridGrey = color.RGBA{0xe6, 0xe6, 0xe6, 0xff}
	dashed   = []vg.Length{vg.Points(5), vg.Points(3)}
	dotted   = []vg.Length{vg.Points(1.5), vg.Points(2)}
)

// style is how one run is drawn: colour and dash pattern.
type style struct {
	color  color.RGBA
	dashes []vg.Length
}

// styleOf returns the style of the i-th run.
func styleOf(i int) style {
	s := style{color: palette[i%len(palette)]}
	if i >= len(palette) {
		s.dashes = dashed
	}
	return s
}

// lineStyle is s as a line of the given width in points.
func (s style) line(width float64) draw.LineStyle {
	return draw.LineStyle{Color: s.color, Width: vg.Points(width), Dashes: s.dashes}
}

// lighter returns c blended halfway to white.
func lighter(c color.RGBA) color.RGBA {
	return color.RGBA{c.R/2 + 0x80, c.G/2 + 0x80, c.B/2 + 0x80, 0xff}
}

// translucent returns c at the given opacity (0-255), premultiplied.
func translucent(c color.RGBA, a uint8) color.RGBA {
	f := func(v uint8) uint8 { return uint8(uint16(v) * uint16(a) / 255) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), a}
}

// textStyle is sans at size points in ink.
func textStyle(size vg.Length) text.Style {
	return text.Style{Color: ink, Font: font.From(sans, size), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot with the report's fonts, a light grid and the
// given axis labels.
func newPlot(xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.TextStyle = textStyle(10)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = textStyle(10)
		a.Label.TextStyle.XAlign = draw.XCenter
		a.Tick.Label = textStyle(8.5)
		a.Color = faint
		a.Tick.Color = faint
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	p.Add(g)
	return p
}

// legend collects the entries drawn to the right of a chart.
type legend struct {
	plot.Legend
	texts []string
}

func newLegend() *legend {
	l := &legend{Legend: plot.NewLegend()}
	l.TextStyle = textStyle(9)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(20)
	l.Padding = vg.Points(3)
	return l
}

func (l *legend) add(name string, thumbs ...plot.Thumbnailer) {
	l.Add(name, thumbs...)
	l.texts = append(l.texts, name)
}

// width is the room the legend needs, or 0 when it is empty.
func (l *legend) width() vg.Length {
	if len(l.texts) == 0 {
		return 0
	}
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X + vg.Points(16)
}

// swatch is a legend thumbnail: a line in a style, or a filled box.
type swatch struct {
	line draw.LineStyle
	fill color.Color
}

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	if s.fill != nil {
		pts := []vg.Point{
			{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y},
			{X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y},
		}
		c.FillPolygon(s.fill, c.ClipPolygonY(pts))
		return
	}
	y := c.Center().Y
	c.StrokeLine2(s.line, c.Min.X, y, c.Max.X, y)
}

// figure is a whole PNG: a title, a grid of plots sharing aligned axes,
// and a legend on the right.
type figure struct {
	title  string
	height vg.Length
	plots  [][]*plot.Plot // rows of columns; nil cells are left empty
	legend *legend
}

// png draws the figure and encodes it.
func (f figure) png() ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(chartWidth, f.height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	area := draw.Crop(dc, vg.Points(6), -vg.Points(6), vg.Points(4), -vg.Points(6))
	if f.title != "" {
		ts := textStyle(12)
		ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
		area.FillText(ts, vg.Point{X: area.Center().X, Y: area.Max.Y}, f.title)
		area = draw.Crop(area, 0, 0, 0, -ts.Rectangle(f.title).Size().Y-vg.Points(8))
	}
	if f.legend != nil {
		if w := f.legend.width(); w > 0 {
			f.legend.Draw(draw.Crop(area, area.Size().X-w+vg.Points(12), 0, 0, -vg.Points(4)))
			area = draw.Crop(area, 0, -w, 0, 0)
		}
	}
	rows, cols := len(f.plots), len(f.plots[0])
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(10)}
	cells := plot.Align(f.plots, tiles, area)
	for j := range f.plots {
		for i, p := range f.plots[j] {
			if p != nil {
				p.Draw(cells[j][i])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// lines returns xys as a line drawn in pieces of at most 64 points that
// share their ends: gonum's rasterizer slows down sharply on long paths.
func lines(xys plotter.XYs, step plotter.StepKind, ls draw.LineStyle, fill color.Color) []plot.Plotter {
	const piece = 64
	var out []plot.Plotter
	for i := 0; ; i += piece {
		out = append(out, &plotter.Line{XYs: xys[i:min(i+piece+1, len(xys))], StepStyle: step, LineStyle: ls, FillColor: fill})
		if i+piece+1 >= len(xys) {
			return out
		}
	}
}

// hline returns a horizontal line at y from x0 to x1.
func hline(y, x0, x1 float64, ls draw.LineStyle) *plotter.Line {
	l := &plotter.Line{XYs: plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}, LineStyle: ls}
	return l
}

// vline returns a vertical line at x from y0 to y1.
func vline(x, y0, y1 float64, ls draw.LineStyle) *plotter.Line {
	return &plotter.Line{XYs: plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}}, LineStyle: ls}
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("75000", not "75000.00").
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(roundSig(ts[i].Value, 9), 'f', -1, 64)
		}
	}
	return ts
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return f
}

// unlabelled wraps a Ticker and drops its labels (for stacked panels that
// share the x axis of the panel below).
type unlabelled struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	ts := u.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// timeUnit picks the unit to show a span of ns in: its divisor and name.
func timeUnit(ns float64) (float64, string) {
	switch {
	case ns >= 10e9:
		return 1e9, "s"
	case ns >= 10e6:
		return 1e6, "ms"
	case ns >= 10e3:
		return 1e3, "µs"
	}
	return 1, "ns"
}
