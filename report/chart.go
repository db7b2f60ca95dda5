package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/ratebench/ratebench/algorithms/all"
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

// palette gives each algorithm a colour that stays the same on every
// chart of every page (see styleFor): fourteen, none of them grey (grey
// draws rejections and theory). Past its end colours repeat with a
// dash-dot pattern.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
	{0x39, 0x3b, 0x79, 0xff}, // indigo
	{0xbc, 0xbd, 0x22, 0xff}, // olive
	{0x63, 0x79, 0x39, 0xff}, // moss
	{0xad, 0x14, 0x57, 0xff}, // magenta
	{0x8c, 0x6d, 0x31, 0xff}, // ochre
	{0x00, 0x6d, 0x77, 0xff}, // teal
}

var (
	ink      = color.RGBA{0x22, 0x22, 0x22, 0xff}
	faint    = color.RGBA{0xbb, 0xbb, 0xbb, 0xff}
	gridGrey = color.RGBA{0xe6, 0xe6, 0xe6, 0xff}
	rejGrey  = color.RGBA{0x80, 0x80, 0x80, 0xff} // rejected per second
	shade    = color.RGBA{0xf0, 0xf0, 0xf0, 0xff} // after the workload's end
	dashed   = []vg.Length{vg.Points(5), vg.Points(3)}
	dotted   = []vg.Length{vg.Points(1.5), vg.Points(2)}
	dashDot  = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}
)

// limitLine is how every chart draws the limit: a wide, light band, drawn
// under the data so that a run at the limit stays visible on it, and
// unlike any run's line.
var limitLine = draw.LineStyle{Color: color.RGBA{0xc8, 0xc8, 0xc8, 0xff}, Width: vg.Points(4)}

// style is how one run is drawn: colour and dash pattern.
type style struct {
	color  color.RGBA
	dashes []vg.Length
}

// styleOf returns the style of the i-th colour: a colour of its own, and
// past the palette's end a colour again with a dash-dot pattern.
func styleOf(i int) style {
	s := style{color: palette[i%len(palette)]}
	if i >= len(palette) {
		s.dashes = dashDot
	}
	return s
}

// algorithmOrder fixes each algorithm's colour on every page: its place
// among the built-in algorithms, then the HTTP run's.
var algorithmOrder = append(all.Names(), "redis-rate", "http")

// styleFor returns the style of a run of algorithm, the same on every
// page; nth > 0 for a second run of the same algorithm in one result (its
// replicas, or another backend), which is dotted, a third dash-dotted.
// An algorithm not built in takes the colours after the built-in ones, in
// the order first seen (extra counts them).
func styleFor(algorithm string, nth int, extra map[string]int) style {
	i := slices.Index(algorithmOrder, algorithm)
	if i < 0 {
		n, ok := extra[algorithm]
		if !ok {
			n = len(extra)
			extra[algorithm] = n
		}
		i = len(algorithmOrder) + n
	}
	s := styleOf(i)
	switch {
	case nth == 1:
		s.dashes = dotted
	case nth > 1:
		s.dashes = dashDot
	}
	return s
}

// sideB returns s as the second side of a compare draws it: dashed, or
// dotted for the runs past the palette's end (dash-dot on side A), so
// that no two runs of a compare share a style.
func (s style) sideB() style {
	if s.dashes == nil {
		s.dashes = dashed
	} else {
		s.dashes = dotted
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
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{n: 4}
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	p.Add(grid{g})
	return p
}

// grid is gonum's grid, drawn at the round values of an axis whose tick
// labels are left off (a panel that shares the axis of its neighbour).
type grid struct{ *plotter.Grid }

// Plot implements plot.Plotter.
func (g grid) Plot(c draw.Canvas, p *plot.Plot) {
	q := *p
	if u, ok := q.X.Tick.Marker.(unlabelled); ok {
		q.X.Tick.Marker = u.Ticker
	}
	if u, ok := q.Y.Tick.Marker.(unlabelled); ok {
		q.Y.Tick.Marker = u.Ticker
	}
	g.Grid.Plot(c, &q)
}

// legend collects the entries drawn to the right of a chart, or in rows
// above it (figure.legendTop).
type legend struct {
	plot.Legend
	texts  []string
	thumbs [][]plot.Thumbnailer
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
	l.thumbs = append(l.thumbs, thumbs)
}

// width is the room the legend needs, or 0 when it is empty.
func (l *legend) width() vg.Length {
	if len(l.texts) == 0 {
		return 0
	}
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X + vg.Points(16)
}

// entries returns each entry as a legend of its own, and its width with
// a gap after it, for a legend laid out in rows.
func (l *legend) entries() ([]plot.Legend, []vg.Length) {
	out := make([]plot.Legend, len(l.texts))
	ws := make([]vg.Length, len(l.texts))
	for i, t := range l.texts {
		one := plot.NewLegend()
		one.TextStyle, one.Top, one.Left = l.TextStyle, true, true
		one.ThumbnailWidth, one.Padding = l.ThumbnailWidth, l.Padding
		one.Add(t, l.thumbs[i]...)
		r := one.Rectangle(draw.Canvas{})
		out[i], ws[i] = one, r.Max.X-r.Min.X+vg.Points(18)
	}
	return out, ws
}

// rowsOf lays the entries out in rows no wider than w: the index of the
// first entry of each row.
func rowsOf(ws []vg.Length, w vg.Length) []int {
	var starts []int
	var x vg.Length
	for i, ew := range ws {
		if i == 0 || x+ew > w {
			starts = append(starts, i)
			x = 0
		}
		x += ew
	}
	return starts
}

// swatch is a legend thumbnail: a line in a style, or a filled box, or an
// outlined one (a fill and an outline both give an outlined filled box).
type swatch struct {
	line    draw.LineStyle
	fill    color.Color
	outline bool
}

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	box := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y},
	}
	if s.fill != nil {
		c.FillPolygon(s.fill, c.ClipPolygonY(box))
	}
	if s.outline {
		c.StrokeLines(s.line, append(box, box[0]))
	}
	if s.fill != nil || s.outline {
		return
	}
	y := c.Center().Y
	c.StrokeLine2(s.line, c.Min.X, y, c.Max.X, y)
}

// stripes is a legend thumbnail for "in the run's own colour": a line
// (with the given dashes and width) or, when box is set, a filled box,
// made of stripes of the first palette colours, blended halfway to
// white when light is set.
type stripes struct {
	dashes []vg.Length
	width  float64
	box    bool
	light  bool
}

// Thumbnail implements plot.Thumbnailer.
func (s stripes) Thumbnail(c *draw.Canvas) {
	const n = 4
	w := (c.Max.X - c.Min.X) / n
	y := c.Center().Y
	for i := range n {
		col := palette[i]
		if s.light {
			col = lighter(col)
		}
		x0, x1 := c.Min.X+vg.Length(i)*w, c.Min.X+vg.Length(i+1)*w
		if s.box {
			c.FillPolygon(col, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0, Y: c.Max.Y}, {X: x1, Y: c.Max.Y}, {X: x1, Y: c.Min.Y}})
			continue
		}
		ls := draw.LineStyle{Color: col, Width: vg.Points(s.width), Dashes: s.dashes}
		if s.dashes != nil { // the pattern runs on across the stripes
			var off vg.Length
			for _, d := range s.dashes {
				off += d
			}
			ls.DashOffs = vg.Length(math.Mod(float64(vg.Length(i)*w), float64(off)))
		}
		c.StrokeLine2(ls, x0, y, x1, y)
	}
}

// figure is a whole PNG: a title, a grid of plots sharing aligned axes,
// and a legend on the right, or in rows under the title.
type figure struct {
	title     string
	height    vg.Length
	plots     [][]*plot.Plot // rows of columns; nil cells are left empty
	legend    *legend
	legendTop bool
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
	if f.legend != nil && f.legendTop && len(f.legend.texts) > 0 {
		area = f.legend.drawRows(area)
	} else if f.legend != nil {
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

// drawRows draws the legend in centred rows at the top of area and
// returns what is left below it.
func (l *legend) drawRows(area draw.Canvas) draw.Canvas {
	es, ws := l.entries()
	starts := rowsOf(ws, area.Size().X)
	h := l.TextStyle.Rectangle("Xg").Size().Y + l.Padding
	for r, first := range starts {
		last := len(es)
		if r+1 < len(starts) {
			last = starts[r+1]
		}
		var rowW vg.Length
		for _, w := range ws[first:last] {
			rowW += w
		}
		x := area.Center().X - rowW/2
		top := area.Max.Y - vg.Length(r)*h
		for i := first; i < last; i++ {
			es[i].Draw(draw.Canvas{Canvas: area.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: top - h}, Max: vg.Point{X: x + ws[i], Y: top}}})
			x += ws[i]
		}
	}
	return draw.Crop(area, 0, 0, 0, -vg.Length(len(starts))*h-vg.Points(6))
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

// niceTicks label an axis at round steps, 1, 2, 2.5 or 5 times a power of
// ten, at most n labels (0: 5), without trailing zeros, with unlabelled
// ticks in between.
type niceTicks struct{ n int }

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	n := t.n
	if n <= 0 {
		n = 5
	}
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	step, minor := niceStep(lo, hi, n)
	var ts []plot.Tick
	first := math.Ceil(lo/minor - 1e-9)
	for i := first; i*minor <= hi+minor*1e-9; i++ {
		v := roundSig(i*minor, 12)
		if v == 0 {
			v = 0 // not -0
		}
		tk := plot.Tick{Value: v}
		if m := math.Abs(math.Remainder(v, step)); m < minor*1e-6 {
			tk.Label = strconv.FormatFloat(roundSig(v, 9), 'f', -1, 64)
		}
		ts = append(ts, tk)
	}
	return ts
}

// niceStep returns the smallest round step (1, 2, 2.5 or 5 times a power
// of ten) that puts at most n multiples of it in [lo, hi], and the step
// of the unlabelled ticks between them.
func niceStep(lo, hi float64, n int) (step, minor float64) {
	mag := math.Pow10(int(math.Floor(math.Log10((hi - lo) / float64(n)))))
	for {
		for _, m := range []struct{ step, minor float64 }{{1, 0.5}, {2, 1}, {2.5, 0.5}, {5, 2.5}} {
			s := m.step * mag
			if math.Floor(hi/s+1e-9)-math.Ceil(lo/s-1e-9)+1 <= float64(n) {
				return s, m.minor * mag
			}
		}
		mag *= 10
	}
}

// headroom is the top of a linear axis whose data reach hi: 12% above,
// so that the highest line never touches the frame.
func headroom(hi float64) float64 {
	if !(hi > 0) {
		return 1
	}
	return hi * 1.12
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
