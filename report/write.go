package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
)

// Options tune Write. The zero value is ready to use.
type Options struct {
	// Title heads report.html; "" gives "ratebench: <workload> workload".
	Title string
	// Fit, when set, is the fit of the run's trace (fit.json): the page
	// says what the service behaves like.
	Fit *fit.Result
}

// File names Write produces in a run folder. The .hgrm files are named
// after each run's label (see FileStem).
const (
	HTMLFile         = "report.html"
	SeriesFile       = "series.csv"
	AdmittedRateFile = "admitted_rate.png"
	BoundaryFile     = "boundary.png"
	BurstRatioFile   = "burst_ratio.png"
	LatencyFile      = "latency.png"
	KeysFile         = "keys.png"
)

// Write renders r into dir (created if missing): admitted_rate.png,
// burst_ratio.png, boundary.png (boundary workload), latency.png (when a
// run has a latency histogram), keys.png (when a run has more than one
// key), series.csv, one <label>.hgrm per latency histogram (and, for live
// runs, <label>.service.hgrm and <label>.lateness.hgrm) and
// report.html, which embeds every chart and needs nothing else to be read.
// Every file is written to a temporary name and renamed. Write reads r
// only; it is safe to call concurrently on different folders.
func Write(dir string, r *result.Result, opts Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	charts, err := runCharts(r)
	if err != nil {
		return err
	}
	for _, c := range charts {
		if err := result.WriteFileAtomic(filepath.Join(dir, c.File), c.PNG); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := result.WriteFileAtomic(filepath.Join(dir, SeriesFile), seriesCSV(r)); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	hgrms, err := hgrms(r)
	if err != nil {
		return err
	}
	for _, h := range hgrms {
		if err := result.WriteFileAtomic(filepath.Join(dir, h.File), h.Data); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	page, err := renderHTML(r, charts, hgrms, opts)
	if err != nil {
		return err
	}
	if err := result.WriteFileAtomic(filepath.Join(dir, HTMLFile), page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// fileStem turns a label into a file-name stem: letters, digits, '.', '_',
// '@' and '-' are kept, anything else becomes '-' ("gcra x4@redis" gives
// "gcra-x4@redis").
func fileStem(label string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '.', r == '_', r == '@', r == '-':
			return r
		}
		return '-'
	}, label)
}

// isBoundary reports whether r ran the boundary workload.
func isBoundary(r *result.Result) bool {
	name, _ := r.Workload["name"].(string)
	return name == "boundary"
}

// Files returns the names of every file Write may produce for r in a run
// folder (whether or not r's runs need each chart), so that a folder's
// earlier report can be removed exactly, and nothing else.
func Files(r *result.Result) []string {
	files := []string{HTMLFile, SeriesFile, AdmittedRateFile, BoundaryFile, BurstRatioFile, LatencyFile, KeysFile}
	for _, l := range r.Labels() {
		stem := fileStem(l)
		files = append(files, stem+".hgrm", stem+".service.hgrm", stem+".lateness.hgrm")
	}
	return files
}
