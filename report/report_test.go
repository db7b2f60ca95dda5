package report

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// dataURI matches an embedded PNG; golden files hold a placeholder instead
// of the image bytes, which depend on the font rasteriser.
var dataURI = regexp.MustCompile(`data:image/png;base64,[A-Za-z0-9+/=]+`)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				t.Fatalf("%s differs from the golden file at line %d:\n got: %.200q\nwant: %.200q\n(go test -update rewrites it)",
					name, i+1, at2(gl, i), at2(wl, i))
			}
		}
	}
}

func at2(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<EOF>"
}

// rendered is the fixture's report, written once for the tests that only
// read it, and removed by TestMain.
var rendered struct {
	sync.Once
	dir string
	err error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if rendered.dir != "" {
		os.RemoveAll(rendered.dir)
	}
	os.Exit(code)
}

// writeFixture returns the folder the fixture's report was written to.
// Tests must not change it.
func writeFixture(t *testing.T) string {
	t.Helper()
	rendered.Do(func() {
		if rendered.dir, rendered.err = os.MkdirTemp("", "ratebench-report-"); rendered.err == nil {
			rendered.err = Write(rendered.dir, resulttest.Fixture(), Options{})
		}
	})
	if rendered.err != nil {
		t.Fatal(rendered.err)
	}
	return rendered.dir
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteGolden(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t)
	page := readFile(t, filepath.Join(dir, HTMLFile))
	golden(t, "report.html.golden", dataURI.ReplaceAll(page, []byte("data:image/png;base64,...")))
	golden(t, "series.csv.golden", readFile(t, filepath.Join(dir, SeriesFile)))
}

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	// No temporary file is left behind; the .hgrm is named after the
	// shaper; a boundary run has the window edge's chart, not the rate's.
	want := []string{BoundaryFile, BurstRatioFile, KeysFile, LatencyFile, "leaky-queue.hgrm", HTMLFile, SeriesFile}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("files = %q, want %q", got, want)
	}
	for _, name := range want {
		if strings.HasSuffix(name, ".png") {
			checkPNG(t, name, readFile(t, filepath.Join(dir, name)))
		}
	}
}

// TestWriteOptionalCharts checks that charts without data are left out:
// not the boundary workload, no latency, one key.
func TestWriteOptionalCharts(t *testing.T) {
	t.Parallel()
	r := resulttest.Fixture()
	r.Workload["name"] = "poisson"
	for i := range r.Runs {
		r.Runs[i].Latency, r.Runs[i].LatencyHDR, r.Runs[i].Keys = nil, "", nil
	}
	dir := t.TempDir()
	if err := Write(dir, r, Options{Title: "custom <title>"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{BoundaryFile, LatencyFile, KeysFile, "leaky-queue.hgrm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s written without data for it", name)
		}
	}
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	if n := strings.Count(page, "<img "); n != 2 {
		t.Errorf("report.html has %d images, want 2 (rate and burst ratio)", n)
	}
	if !strings.Contains(page, "<title>custom &lt;title&gt;</title>") {
		t.Error("the title option is not used, or not escaped")
	}
}

// checkPNG decodes b and checks that it is a picture: several colours and
// a fair share of pixels that are not white.
func checkPNG(t *testing.T, name string, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bounds := img.Bounds()
	if bounds.Dx() < 200 || bounds.Dy() < 150 {
		t.Fatalf("%s is %dx%d pixels", name, bounds.Dx(), bounds.Dy())
	}
	colours := map[[4]uint32]bool{}
	ink, seen := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 3 { // every 9th pixel is plenty
		for x := bounds.Min.X; x < bounds.Max.X; x += 3 {
			seen++
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
			if r < 0xf000 || g < 0xf000 || b < 0xf000 {
				ink++
			}
		}
	}
	if len(colours) < 8 || ink < seen/200 {
		t.Fatalf("%s looks blank: %d colours, %d non-white pixels of %d looked at", name, len(colours), ink, seen)
	}
	return img
}

// TestHgrm parses the .hgrm back: header, percentile lines that never go
// down, the last at 100% with every value counted, and the footer.
func TestHgrm(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t)
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, filepath.Join(dir, "leaky-queue.hgrm"))))
	if !sc.Scan() || strings.Join(strings.Fields(sc.Text()), " ") != "Value Percentile TotalCount 1/(1-Percentile)" {
		t.Fatalf("header = %q", sc.Text())
	}
	var lines int
	var value, pctl float64
	var count int64
	var footer []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
			continue
		case strings.HasPrefix(f[0], "#"):
			footer = append(footer, sc.Text())
			continue
		case len(f) != 4:
			t.Fatalf("line %q: want 4 fields", sc.Text())
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		c, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("line %q does not parse", sc.Text())
		}
		if v < value || p < pctl || c < count {
			t.Fatalf("line %q goes down after value %v, percentile %v, count %v", sc.Text(), value, pctl, count)
		}
		if inv := f[3]; p < 1 && inv == "inf" || p == 1 && inv != "inf" {
			t.Fatalf("line %q: 1/(1-p) = %s", sc.Text(), inv)
		}
		value, pctl, count = v, p, c
		lines++
	}
	lat := resulttest.Fixture().Runs[2].Latency
	if lines < 10 || pctl != 1 || count != lat.Count {
		t.Fatalf("%d lines ending at percentile %v with count %d, want >= 10 ending at 1 with %d", lines, pctl, count, lat.Count)
	}
	if math.Abs(value-float64(lat.Max)/1e6) > 0.001 { // milliseconds, 3 decimals
		t.Fatalf("last value %v ms, want the max %v ms", value, float64(lat.Max)/1e6)
	}
	if len(footer) != 3 || !strings.Contains(footer[1], "Total count") {
		t.Fatalf("footer = %q", footer)
	}
}

// TestHTMLSelfContained checks that report.html needs nothing else: no
// script, nothing from the network, every image an embedded PNG.
func TestHTMLSelfContained(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t)
	page := string(readFile(t, filepath.Join(dir, HTMLFile)))
	for _, bad := range []string{"<script", "http://", "https://", "//cdn", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	srcs := regexp.MustCompile(`<img src="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) != 4 { // boundary, burst ratio, latency, keys
		t.Fatalf("%d images, want 4", len(srcs))
	}
	for _, m := range srcs {
		data, ok := strings.CutPrefix(m[1], "data:image/png;base64,")
		if !ok {
			t.Fatalf("image src %.60q is not an embedded PNG", m[1])
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		checkPNG(t, "embedded image", b)
	}
	for _, want := range []string{
		"ratebench boundary -out &#39;results/my boundary&#39;", // the command, quoted for a shell
		"fixed-window admitted 2.00x its limit",                 // the reading
		"sliding-counter@redis", "sliding-log x2",               // labels
		`<tr class="over"><td class="l">sliding-counter@redis</td>`, // above its theory
		`<li class="over">sliding-counter@redis admitted 1.50x its limit`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		run         result.Run
		label, stem string
	}{
		{result.Run{Algorithm: "gcra", Backend: "memory", Replicas: 1}, "gcra", "gcra"},       // the common case
		{result.Run{Algorithm: "gcra"}, "gcra", "gcra"},                                       // zero backend and replicas
		{result.Run{Algorithm: "gcra", Backend: "memory", Replicas: 4}, "gcra x4", "gcra-x4"}, // replicas
		{result.Run{Algorithm: "gcra", Backend: "redis", Replicas: 4}, "gcra x4@redis", "gcra-x4@redis"},
		{result.Run{Algorithm: "fixed-window", Backend: "sqlite:///tmp/a b"}, "fixed-window@sqlite:///tmp/a b", "fixed-window@sqlite----tmp-a-b"},
	} {
		if got := tc.run.Label(); got != tc.label {
			t.Errorf("Label(%+v) = %q, want %q", tc.run, got, tc.label)
		}
		if got := fileStem(tc.label); got != tc.stem {
			t.Errorf("fileStem(%q) = %q, want %q", tc.label, got, tc.stem)
		}
	}
}

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""}, // not recorded
		{[]string{"/tmp/go-build1/exe/ratebench", "run", "-rate", "150"}, "ratebench run -rate 150"}, // go run's binary
		{[]string{"rb", "run", "-out", "a b", "-algos", "it's"}, `ratebench run -out 'a b' -algos 'it'\''s'`},
		{[]string{"rb", "run", "-workload", "replay:/x/y.csv", ""}, "ratebench run -workload replay:/x/y.csv ''"},
	} {
		if got := command(tc.args); got != tc.want {
			t.Errorf("command(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestPercentileTicks(t *testing.T) {
	var got []string
	for _, tk := range percentileTicks(1e4) {
		got = append(got, tk.Label)
	}
	if want := []string{"0%", "90%", "99%", "99.9%", "99.99%"}; !slices.Equal(got, want) {
		t.Fatalf("ticks = %q, want %q", got, want)
	}
}

// TestSpectrum checks the latency line: x = 1/(1-p), ending at the max at
// 1/(1-p) = count.
func TestSpectrum(t *testing.T) {
	h := result.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 1000)
	}
	xys := spectrum(h, 1)
	if xys[0].X != 1 {
		t.Errorf("first point at x = %v, want 1 (0%%)", xys[0].X)
	}
	last := xys[len(xys)-1]
	if last.X < 1000 || last.Y != float64(h.Max()) {
		t.Errorf("last point %+v, want (>= 1000, %d)", last, h.Max())
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].X < xys[i-1].X || xys[i].Y < xys[i-1].Y {
			t.Fatalf("point %d %+v goes back from %+v", i, xys[i], xys[i-1])
		}
	}
}

// TestRateXY checks that long series are summed into at most maxPoints
// steps, as rates per second.
func TestRateXY(t *testing.T) {
	bins := make([]int64, 4000)
	for i := range bins {
		bins[i] = 10 // 10 per 100ms = 100/s
	}
	xys, k := rateXY(bins, 1e8, 1)
	if k != 4 || len(xys) != 1001 {
		t.Fatalf("k = %d, %d points; want 4 bins per step and 1000 steps + the closing point", k, len(xys))
	}
	for _, xy := range xys {
		if xy.Y != 100 {
			t.Fatalf("rate %v, want 100/s", xy.Y)
		}
	}
	if end := xys[len(xys)-1].X; end != 400 {
		t.Fatalf("ends at %vs, want 400s", end)
	}
	// A window of 1s over bins of 100ms: steps of a whole window.
	if xys, k := rateXY(bins[:100], 1e8, 10); k != 10 || len(xys) != 11 || xys[3].Y != 100 {
		t.Fatalf("one window per step: k = %d, %d points, rate %v; want 10, 11, 100/s", k, len(xys), xys[3].Y)
	}
}
