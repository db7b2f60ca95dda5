package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// maxNamed bounds the runs a finding names in one list.
const maxNamed = 4

// Finding is what a run found, in one or two sentences, for the top of
// its page and its terminal summary: which runs let more than the limit
// L through in some span W, by how much, where and (for the classic
// cases) why; for an HTTP run, the service's limit, how much it
// rejected and whether its headers told the truth. It flags what is
// above L, not only what is above theory.
func Finding(r *result.Result) string {
	if len(r.Runs) == 1 && r.Runs[0].HTTP != nil {
		return httpFinding(r, r.Runs[0])
	}
	limit := r.Policy.Limit
	w := time.Duration(r.Policy.WindowNS)
	if limit == 0 {
		best := slices.MaxFunc(r.Runs, func(a, b result.Run) int { return cmp.Compare(a.MaxAdmittedInWindow, b.MaxAdmittedInWindow) })
		return fmt.Sprintf("No limit is known, so nothing is judged against one: the most admitted in any span W was %d (%s).", best.MaxAdmittedInWindow, best.Label())
	}
	labels := r.Labels()
	var over, held []int
	for i, run := range r.Runs {
		if run.MaxAdmittedInWindow > limit {
			over = append(over, i)
		} else {
			held = append(held, i)
		}
	}
	if len(over) == 0 {
		if len(r.Runs) == 1 {
			return fmt.Sprintf("%s held to its limit: at most %d of %d in any span of %v.", labels[0], r.Runs[0].MaxAdmittedInWindow, limit, Round3(w))
		}
		return fmt.Sprintf("Every algorithm held to its limit: at most %d of %d in any span of %v.", maxOf(r.Runs, held), limit, Round3(w))
	}
	slices.SortStableFunc(over, func(a, b int) int { return cmp.Compare(r.Runs[b].BurstRatio, r.Runs[a].BurstRatio) })
	worst := r.Runs[over[0]]
	var b strings.Builder
	fmt.Fprintf(&b, "%s let %.2fx its limit through, %d of %d within %v around t=%v",
		labels[over[0]], worst.BurstRatio, worst.MaxAdmittedInWindow, limit,
		spanText(time.Duration(worst.MaxWindowSpanNS), w), Round3(time.Duration(worst.MaxWindowEndNS)))
	if why := classicCase(r, worst); why != "" {
		b.WriteString(": " + why)
	} else if t := worst.TheoryFor(); t > 0 && !worst.AboveTheory(r.Policy.WindowNS) {
		fmt.Fprintf(&b, ", as its theory allows (%.2fx)", float64(t)/float64(limit))
	}
	b.WriteString(".")
	if rest := over[1:]; len(rest) > 0 {
		var names []string
		for _, i := range rest[:min(len(rest), maxNamed)] {
			names = append(names, fmt.Sprintf("%s %.2fx", labels[i], r.Runs[i].BurstRatio))
		}
		if n := len(rest) - maxNamed; n > 0 {
			names = append(names, fmt.Sprintf("%d more", n))
		}
		fmt.Fprintf(&b, " Also above L: %s.", strings.Join(names, ", "))
	}
	if len(held) > 0 {
		var names []string
		for _, i := range held[:min(len(held), maxNamed)] {
			names = append(names, labels[i])
		}
		if n := len(held) - maxNamed; n > 0 {
			names = append(names, fmt.Sprintf("%d more", n))
		}
		fmt.Fprintf(&b, " Held to L: %s.", strings.Join(names, ", "))
	}
	var above []string
	for i, run := range r.Runs {
		if run.AboveTheory(r.Policy.WindowNS) {
			above = append(above, labels[i])
		}
	}
	if len(above) > 0 {
		fmt.Fprintf(&b, " ABOVE its theory: %s.", strings.Join(above, ", "))
	}
	return b.String()
}

// classicCase names the two cases a teacher shows, when run is one: a
// fixed window's 2L at a window edge, and N replicas with local state
// letting N x through.
func classicCase(r *result.Result, run result.Run) string {
	limit := r.Policy.Limit
	switch {
	case run.Replicas > 1 && !run.SharesState() && run.MaxAdmittedInWindow > limit*int64(run.Replicas-1):
		return fmt.Sprintf("%d replicas, each with its own state, admit their limit each", run.Replicas)
	case r.Workload["name"] == "boundary" && run.MaxAdmittedInWindow >= 2*limit && run.TheoryFor() >= 2*limit:
		return "the boundary case, L just before a window edge and L just after"
	}
	return ""
}

// httpFinding is the finding of an attack: the service's limit as known,
// what it rejected, and its headers.
func httpFinding(r *result.Result, run result.Run) string {
	var b strings.Builder
	pct := 0.0
	if run.Offered > 0 {
		pct = 100 * float64(run.Rejected) / float64(run.Offered)
	}
	fmt.Fprintf(&b, "The service rejected %.1f%% of %d requests", pct, run.Offered)
	if r.Policy.Limit > 0 {
		src := ""
		if run.HTTP.PolicySource != "" && run.HTTP.PolicySource != "config" && run.HTTP.PolicySource != "none" {
			src = ", from its " + run.HTTP.PolicySource
		}
		fmt.Fprintf(&b, " against a limit of %d per %v%s; at most %d in any span W (%.2fx)", r.Policy.Limit,
			Round3(time.Duration(r.Policy.WindowNS)), src, run.MaxAdmittedInWindow, run.BurstRatio)
	} else {
		fmt.Fprintf(&b, "; no limit is known (no RateLimit-Policy, no -limit); at most %d in any span W", run.MaxAdmittedInWindow)
	}
	b.WriteString(".")
	if h := run.HTTP.Headers; h != nil {
		bad := h.RemainingContradicted + h.RetryAfterEarly + h.RetryAfterOverstated + h.ResetContradicted
		tested := h.RemainingChecked + h.RetryAfterChecked + h.ResetChecked
		switch {
		case bad > 0:
			fmt.Fprintf(&b, " Its headers were contradicted %d of %d times tested.", bad, tested)
		case tested > 0:
			fmt.Fprintf(&b, " Its headers told the truth, %d of %d times tested.", tested, tested)
		}
	}
	return b.String()
}

// maxOf is the most any of the runs at idx admitted in a span W.
func maxOf(runs []result.Run, idx []int) int64 {
	var m int64
	for _, i := range idx {
		m = max(m, runs[i].MaxAdmittedInWindow)
	}
	return m
}

// CompareFinding says whether a and b agree, run by run, and where they
// differ most: matched runs agree when their admitted counts are within
// 2% (or 2 requests) of each other and their most admitted in any span W
// within 1% of the limit (or 1 request). nameA and nameB are how the page
// names the two sides.
func CompareFinding(a, b *result.Result, nameA, nameB string) string {
	type gap struct {
		label string
		a, b  *result.Run
		rel   float64 // the admitted counts' difference over the larger
	}
	var gaps []gap
	var alone []string
	limit := max(a.Policy.Limit, b.Policy.Limit)
	for _, p := range pairRuns(a, b) {
		if p.a == nil || p.b == nil {
			alone = append(alone, p.label)
			continue
		}
		d := float64(p.b.Admitted - p.a.Admitted)
		rel := 0.0
		if m := max(p.a.Admitted, p.b.Admitted); m > 0 {
			rel = d / float64(m)
		}
		dw := p.b.MaxAdmittedInWindow - p.a.MaxAdmittedInWindow
		if (math.Abs(d) > 2 && math.Abs(rel) > 0.02) || (math.Abs(float64(dw)) > 1 && math.Abs(float64(dw)) > 0.01*float64(limit)) {
			gaps = append(gaps, gap{p.label, p.a, p.b, rel})
		}
	}
	var out string
	switch {
	case len(gaps) == 0 && len(alone) == 0:
		out = fmt.Sprintf("%s and %s agree: every matched run admitted within 2%% of the other, and the same most in any span W to within 1%% of the limit.", nameA, nameB)
	case len(gaps) == 0:
		out = fmt.Sprintf("%s and %s agree on the runs they share; only one side has %s.", nameA, nameB, strings.Join(alone, ", "))
	default:
		slices.SortStableFunc(gaps, func(x, y gap) int { return cmp.Compare(math.Abs(y.rel), math.Abs(x.rel)) })
		g := gaps[0]
		out = fmt.Sprintf("%s and %s differ on %d of their runs, most on %s: %s admitted %d and %s %d (%+.1f%%), at most %d and %d in any span W.",
			nameA, nameB, len(gaps), g.label, nameA, g.a.Admitted, nameB, g.b.Admitted, 100*g.rel, g.a.MaxAdmittedInWindow, g.b.MaxAdmittedInWindow)
	}
	if note := latencyNote(a, b, nameA, nameB); note != "" {
		out += " " + note
	}
	return out
}

// latencyNote says when the two sides' latencies measure different
// things: an HTTP response time against an in-process decision, or a
// shaper's virtual delay.
func latencyNote(a, b *result.Result, nameA, nameB string) string {
	what := func(r *result.Result) string {
		switch r.Meta.Mode {
		case "http":
			return "HTTP response times (milliseconds, network and server included)"
		case "sim":
			return "virtual-time delays a shaper adds (0 for meters)"
		}
		return "in-process decision times (microseconds)"
	}
	wa, wb := what(a), what(b)
	if wa == wb {
		return ""
	}
	return fmt.Sprintf("Their latencies measure different things: %s's are %s, %s's %s.", nameA, wa, nameB, wb)
}
