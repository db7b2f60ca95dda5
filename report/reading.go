package report

import (
	"fmt"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Reading returns one plain-language sentence per run about its worst
// span, e.g. "fixed-window admitted 2.00x its limit (200 of 100) within
// 20ms around t=1.01s; theory 2.00x". Durations are rounded to three
// significant digits (see spanText and round3).
func Reading(r *result.Result) []string {
	out := make([]string, 0, len(r.Runs))
	w := time.Duration(r.Policy.WindowNS)
	for _, run := range r.Runs {
		span, end := spanText(time.Duration(run.MaxWindowSpanNS), w), Round3(time.Duration(run.MaxWindowEndNS))
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
				theory, spanText(time.Duration(*run.OverTheorySpanNS), w), Round3(u))
		default:
			verdict = "ABOVE its theory"
			if u > 0 && run.OverTheorySpanNS != nil {
				verdict += fmt.Sprintf(" (more than %d within %v, beyond this run's %v timing uncertainty)",
					theory, spanText(time.Duration(*run.OverTheorySpanNS), w), Round3(u))
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

// Round3 rounds d to three significant digits, for sentences: a sim's
// instants sit a nanosecond off round ones ("19.999999ms around
// t=1.009999999s") and a live run's are clock readings, and neither says
// more than "20ms around t=1.01s".
func Round3(d time.Duration) time.Duration { return roundDigits(d, 3) }

// roundDigits rounds d to n significant digits.
func roundDigits(d time.Duration, n int) time.Duration {
	limit := time.Duration(1)
	for range n {
		limit *= 10
	}
	unit := time.Duration(1)
	for v := d.Abs(); v >= limit; v /= 10 {
		unit *= 10
	}
	return d.Round(unit)
}

// spanText rounds a span within a window of w to three significant
// digits, or to more when three would make a span shorter than w read as
// w itself (999.7ms as 1s): the sentence is about spans below W.
func spanText(d, w time.Duration) time.Duration {
	r := Round3(d)
	for n := 4; d < w && r >= w && n <= 9; n++ {
		r = roundDigits(d, n)
	}
	return r
}
