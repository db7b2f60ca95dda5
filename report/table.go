// Package report renders a result.json: a terminal table, PNG charts
// (gonum/plot), a self-contained HTML page, CSV and .hgrm files.
package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Table writes one line per run: counts, the most admitted in any span W
// beside its theory, disagreement with the exact log, fairness, and the
// p99 of the latency on the real clock (from each request's intended send)
// or, in virtual time, of the delay a shaper put on admitted requests.
func Table(w io.Writer, r *result.Result) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	p99Head := "P99 DELAY"
	if slices.ContainsFunc(r.Runs, func(run result.Run) bool { return run.Live != nil }) {
		p99Head = "P99 LATENCY"
	}
	fmt.Fprintf(tw, "ALGORITHM\tOFFERED\tADMITTED\tREJECTED\tERRORS\tMAX IN W\tTHEORY\tBURST RATIO\tDISAGREE %%\tJAIN\t%s\t\n", p99Head)
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
	return Round3(time.Duration(l.P99)).String()
}
