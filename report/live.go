package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// liveRow is one live run's real-time measures, formatted; Late marks a
// sender late for more than result.LateShareWarn of the arrivals.
type liveRow struct {
	Label, Offered, Achieved, Dropped, LatePct string
	SvcP50, SvcP99, LateP50, LateP99           string
	Late                                       bool
}

// liveRows lists the runs the live engine (or attack) made: offered and
// achieved rate, drops at the in-flight cap, the sender's lateness and the
// service time. Nil when no run is live.
func liveRows(r *result.Result) []liveRow {
	var out []liveRow
	names := r.Labels()
	for i, run := range r.Runs {
		l := run.Live
		if l == nil {
			continue
		}
		row := liveRow{
			Label: names[i], Offered: rate(l.OfferedRatePerS), Achieved: rate(l.AchievedRatePerS),
			Dropped: group(l.Dropped), LatePct: strconv.FormatFloat(l.LatePct, 'f', 2, 64) + "%",
			SvcP50: "-", SvcP99: "-", LateP50: "-", LateP99: "-",
			// A probe's bursts are sent all at once on purpose: late by
			// design, not for want of machine.
			Late: l.LatePct > 100*result.LateShareWarn && r.Probe == nil,
		}
		if s := l.Service; s != nil {
			row.SvcP50, row.SvcP99 = fmtNS(s.P50), fmtNS(s.P99)
		}
		if s := l.Lateness; s != nil {
			row.LateP50, row.LateP99 = fmtNS(s.P50), fmtNS(s.P99)
		}
		out = append(out, row)
	}
	return out
}

// liveNote explains the real-time table, with the lateness threshold and
// what the harness cost; "" when no run is live.
func liveNote(r *result.Result) string {
	for _, run := range r.Runs {
		if run.Live == nil {
			continue
		}
		s := fmt.Sprintf("Open loop: each request keeps its intended send time. Offered is the arrivals per second the schedule asked for, "+
			"achieved what was really sent; dropped were due while the in-flight cap was reached. Latency (in the summary) runs from the "+
			"intended time to the answer, service time from the actual start, and lateness is how late the sender started; "+
			"\"late\" is the share started over %v late, marked above %.0f%%: the machine, not the limiter, was then the bottleneck.",
			Round3(time.Duration(run.Live.LateAfterNS)), 100*result.LateShareWarn)
		if r.Probe != nil {
			s += " A probe sends its bursts all at once, on purpose: their lateness is by design, and not marked."
		}
		if h := harnessText(r); h != "" {
			s += " " + h
		}
		return s
	}
	return ""
}

// harnessText says what the harness itself cost, from the calibration of
// the first live run that has one; "" when none has.
func harnessText(r *result.Result) string {
	for _, run := range r.Runs {
		if run.Live == nil || run.Live.Calibration == nil {
			continue
		}
		c := run.Live.Calibration
		s := fmt.Sprintf("The harness itself, measured with a no-op limiter on the first %v of the same schedule: %.0f ns per decision (median; mean %.0f ns)",
			Round3(time.Duration(c.DurationNS)), c.OverheadNS, c.OverheadMeanNS)
		if c.ClockReadNS > 0 {
			s += fmt.Sprintf(", of which two clock reads at %.0f ns each", c.ClockReadNS)
		}
		if c.Latency != nil && c.Service != nil {
			s += fmt.Sprintf("; the no-op's latency p50 %s, p99 %s, service time p50 %s: the floor under the figures above on this machine",
				fmtNS(c.Latency.P50), fmtNS(c.Latency.P99), fmtNS(c.Service.P50))
		}
		return s + "."
	}
	return ""
}

// rate formats a rate per second: "19,979/s".
func rate(perS float64) string { return group(int64(perS+0.5)) + "/s" }
