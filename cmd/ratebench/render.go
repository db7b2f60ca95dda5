package main

import (
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
)

// render prints the finding and summary table and writes the report (charts,
// series.csv, .hgrm files and report.html) of a result already in dir.
func (e *env) render(dir string, res *result.Result) error {
	if res.Probe == nil {
		fmt.Fprintln(e.stdout, report.Finding(res))
	}
	if err := report.Table(e.stdout, res); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "results: %s\n", filepath.Join(dir, resultFile))
	return e.writeReport(dir, res)
}
