package report

import (
	"fmt"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Reading returns one plain-language sentence per run about its worst
// span, e.g. "fixed-window admitted 2.00x its limit (200 of 100) within
// 1ns around t=1s; theory 2.00x".
func Reading(r *result.Result) []string {
	out := make([]string, 0, len(r.Runs))
	for _, run := range r.Runs {
		span, end := time.Duration(run.MaxWindowSpanNS), time.Duration(run.MaxWindowEndNS)
		if run.Live != nil { // real clock readings
			span, end = round4(span), round4(end)
		}
		if r.Policy.Limit == 0 {
			out = append(out, fmt.Sprintf("%s admitted at most %d within %v around t=%v; no limit known (the server advertised no RateLimit-Policy and -limit was not given), so no ratio or theory.",
				run.Label(), run.MaxAdmittedInWindow, span, end))
			continue
		}
		head := fmt.Sprintf("%s admitted %.2fx its limit (%d of %d) within %v around t=%v",
			run.Label(), run.BurstRatio, run.MaxAdmittedInWindow, r.Policy.Limit, span, end)
		if run.TheoryFor() == 0 { // an HTTP run against an unnamed algorithm
			out = append(out, head+"; theory unknown.")
			continue
		}
		verdict := "within its theory"
		theory, u := run.TheoryFor(), time.Duration(run.TimingUncertaintyNS)
		switch {
		case run.MaxAdmittedInWindow <= theory:
		case !run.AboveTheory(r.Policy.WindowNS):
			// More than the theory only in a span so close to W that the
			// client's clock may have stretched it: not a finding.
			verdict = fmt.Sprintf("within its theory: more than %d only within %v, inside this run's %v timing uncertainty of W",
				theory, round4(time.Duration(*run.OverTheorySpanNS)), round4(u))
		default:
			verdict = "ABOVE its theory"
			if u > 0 && run.OverTheorySpanNS != nil {
				verdict += fmt.Sprintf(" (more than %d within %v, beyond this run's %v timing uncertainty)",
					theory, round4(time.Duration(*run.OverTheorySpanNS)), round4(u))
			}
			switch {
			case run.FailOpen && run.Errors > 0:
				// The limiter did not admit those: the fail-open
				// policy did, for decisions the backend failed.
				verdict += fmt.Sprintf(", because %d failed decisions were admitted by the fail-open policy", run.Errors)
			case run.LossyEvictions > 0:
				verdict += fmt.Sprintf(", because the key table forgot the state of %d keys", run.LossyEvictions)
			}
		}
		out = append(out, fmt.Sprintf("%s; theory %.2fx, %s.", head, float64(run.TheoryFor())/float64(r.Policy.Limit), verdict))
	}
	return out
}

// round4 rounds d to four significant digits: a live run's instants are
// clock readings, and "999.061812ms" says no more than "999.1ms".
func round4(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for v := d / 10000; v > 0; v /= 10 {
		unit *= 10
	}
	return d.Round(unit)
}
