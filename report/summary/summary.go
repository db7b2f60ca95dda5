// Package summary writes the lines a terminal shows after a live run or
// an HTTP attack, beside the summary table: what the table does not show
// (rates sent and achieved, drops and lateness, latency beside service
// time, statuses, the harness's own cost). Its functions only read the
// runs they are given and may be called concurrently.
package summary

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
)

// Live writes to w, for the live runs among runs (Run.Live set), what the
// table does not show: the rates, drops and lateness of the sender,
// latency beside service time, and what the harness itself costs (its
// calibration, from the last run that has one). Durations are rounded
// to three or four significant digits.
func Live(w io.Writer, runs []result.Run) {
	ns := func(v int64) time.Duration { // three or four significant digits
		d := time.Duration(v)
		switch {
		case d >= time.Second:
			return d.Round(time.Millisecond)
		case d >= time.Millisecond:
			return d.Round(time.Microsecond)
		case d >= time.Microsecond:
			return d.Round(10 * time.Nanosecond)
		}
		return d
	}
	var cal *result.Calibration
	for _, r := range runs {
		l := r.Live
		if l == nil {
			continue
		}
		cal = l.Calibration
		fmt.Fprintf(w, "%s: sent %.0f/s of %.0f/s offered, %d dropped, %.2f%% late; latency p50 %v p99 %v; service p50 %v p99 %v\n",
			r.Algorithm, l.AchievedRatePerS, l.OfferedRatePerS, l.Dropped, l.LatePct,
			ns(r.Latency.P50), ns(r.Latency.P99), ns(l.Service.P50), ns(l.Service.P99))
	}
	if cal != nil {
		fmt.Fprintf(w, "harness: %.0fns per decision (median; mean %.0fns; a clock read costs %.0fns here, a decision takes two); a no-op limiter's latency p50 %v p99 %v, service p50 %v\n",
			cal.OverheadNS, cal.OverheadMeanNS, cal.ClockReadNS, ns(cal.Latency.P50), ns(cal.Latency.P99), ns(cal.Service.P50))
	}
}

// Attack writes to w what the table does not show of an attack's run
// (Run.HTTP and Run.Live set) under the policy pol it was measured
// against: rates, statuses, Retry-After values, latency beside service
// time and lateness, and what the rate-limit headers were worth.
func Attack(w io.Writer, run result.Run, pol algorithms.Policy) {
	l, h := run.Live, run.HTTP
	from := ""
	if n := len(h.SourceAddrs); n > 0 {
		from = fmt.Sprintf(" from %d source addresses", n)
	}
	if h.Closed {
		fmt.Fprintf(w, "%s: closed loop over %d connections%s: completed %.0f/s\n", h.URL, h.Connections, from, h.CompletedRatePerS)
	} else {
		fmt.Fprintf(w, "%s: sent %.0f/s of %.0f/s offered (%d dropped, %.2f%% late), completed %.0f/s over %d connections%s\n",
			h.URL, l.AchievedRatePerS, l.OfferedRatePerS, l.Dropped, l.LatePct, h.CompletedRatePerS, h.Connections, from)
	}
	fmt.Fprintf(w, "status: %s; rejected (%s): %.2f%% of responses", Counts(run.StatusCodes), Statuses(h.RejectStatuses), h.TooManyPct)
	if len(h.RetryAfterS) > 0 {
		fmt.Fprintf(w, "; Retry-After (s): %s", Counts(h.RetryAfterS))
	}
	if h.HonorRetryAfter {
		fmt.Fprintf(w, "; held back %d", h.HeldBack)
	}
	if len(run.ErrorKinds) > 0 {
		fmt.Fprintf(w, "; errors: %s", Counts(run.ErrorKinds))
	}
	fmt.Fprintln(w)
	d := func(v int64) time.Duration { return time.Duration(v).Round(time.Microsecond) }
	policy := fmt.Sprintf("%d per %v (%s)", pol.Limit, pol.Window, h.PolicySource)
	if pol.Limit == 0 {
		policy = "none known"
	}
	fmt.Fprintf(w, "latency p50 %v p99 %v max %v; service p50 %v p99 %v; lateness p99 %v; policy %s\n",
		d(run.Latency.P50), d(run.Latency.P99), d(run.Latency.Max), d(l.Service.P50), d(l.Service.P99), d(l.Lateness.P99), policy)
	if s := report.HeadersReading(h.Headers); s != "" {
		fmt.Fprintf(w, "headers: %s\n", s)
	}
}

// Statuses is codes as text: "429" or "429, 503".
func Statuses(codes []int) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ", ")
}

// Counts is m as text, "200: 9, 429: 1", in key order (numerically when
// the keys are numbers); "none" when m is empty.
func Counts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if errA == nil && errB == nil {
			return x - y
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
