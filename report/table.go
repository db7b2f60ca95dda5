// Package report renders a result.json: a terminal table, PNG charts
// (gonum/plot), a self-contained HTML page, CSV and .hgrm files.
package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Table writes one line per run: counts, the most admitted in any span W
// beside its theory, disagreement with the exact log, fairness and delays.
func Table(w io.Writer, r *result.Result) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ALGORITHM\tOFFERED\tADMITTED\tREJECTED\tERRORS\tMAX IN W\tTHEORY\tBURST RATIO\tDISAGREE %%\tJAIN\tP99 DELAY\t\n")
	for _, run := range r.Runs {
		theory := "-" // unknown: an HTTP run against an unnamed algorithm
		if t := run.TheoryFor(); t > 0 {
			theory = fmt.Sprint(t)
		}
		ratio := "-" // no limit known
		if r.Policy.Limit > 0 {
			ratio = strconv.FormatFloat(run.BurstRatio, 'f', 2, 64)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%.3f\t%s\t\n",
			run.Label(), run.Offered, run.Admitted, run.Rejected, run.Errors,
			run.MaxAdmittedInWindow, theory, ratio,
			pct(run.DisagreementPct), run.JainFairness, p99(run.Latency))
	}
	return tw.Flush()
}

func pct(p float64) string {
	if p < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", p)
}

func p99(l *result.Percentiles) string {
	if l == nil {
		return "-"
	}
	return time.Duration(l.P99).String()
}
