package main

import (
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/report"
)

// render prints the summary table, writes the report (charts, series.csv,
// .hgrm files and report.html) unless noReport, and says where they are.
func (e *env) render(dir string, res *bench.Result, noReport bool) error {
	if err := report.Table(e.stdout, res); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "results: %s\n", filepath.Join(dir, "result.json"))
	if noReport {
		return nil
	}
	if err := report.Write(dir, res, report.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "report:  %s\n", filepath.Join(dir, report.HTMLFile))
	return nil
}
