package corpus

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Bounds on one probe of a target: a probe that needs more to tell what
// a limiter does has failed, whatever it found.
const (
	MaxWall     = time.Minute // from the command's start to its exit
	MaxRequests = 5000        // requests sent, answered or not
)

// Tolerances of Check.
const (
	rateTolerance  = 0.01                 // rate and window, relative
	phaseTolerance = 5 * time.Millisecond // windows' start on the Unix clock, at least
	minAgreement   = 99.0                 // % of the scored requests predicted
	maxAmbiguous   = 5.0                  // % of the requests too close to call
)

// Run is one probe of a target, for Check and Row.
type Run struct {
	Result  *result.Result // the probe's result.json, with its Probe
	Sources int            // client addresses it sent from (-source-addrs); 1 without
	Wall    time.Duration  // from the command's start to its exit
}

// requests is the requests the probe sent.
func (r Run) requests() int64 {
	var n int64
	for _, run := range r.Result.Runs {
		n += run.Offered
	}
	return n
}

// Check judges a probe of a target against its truth and returns every
// criterion that failed, each as "criterion: what was found, what was
// wanted", none when all hold:
//
//   - model: the best fit's model, or one of its Equivalent, is one of
//     the truth's Algorithms;
//   - rate: Limit/Window within 1%;
//   - capacity (a bucket): the burst exact; limit and window (a window):
//     the limit exact, the window within 1%;
//   - phase (windows on the Unix clock): within 5ms, or the probe's
//     timing uncertainty when larger (PhaseTolerance);
//   - scope: the truth's when the probe sent from several addresses; from
//     one, "global", the only scope one client can see;
//   - counts denied: the truth's; unknown (null) when no trace can tell,
//     and allowed to be unknown when the verdict is unsure (its group
//     holds models that count and models that do not);
//   - agreement: at least 99% of the scored requests predicted and at
//     most 5% too close to call;
//   - confidence (a limiter no model explains, in place of all the
//     above): "unexplained";
//   - reject status, requests and wall time: the truth's status alone; at
//     most MaxRequests sent within MaxWall.
//
// Safe for concurrent use.
func Check(t Truth, r Run) []string {
	var fails []string
	fail := func(criterion, format string, args ...any) {
		fails = append(fails, criterion+": "+fmt.Sprintf(format, args...))
	}
	p := r.Result.Probe
	if p == nil {
		return []string{"probe: result.json has no probe"}
	}
	b := p.Best
	if t.Outside {
		if p.Confidence != result.Unexplained {
			fail("confidence", "%q, want %q: no model explains the limiter, and the best, %s, predicted %.2f%%",
				p.Confidence, result.Unexplained, b, b.AgreementPct)
		}
	} else {
		fails = append(fails, checkFit(t, b, r.Sources, p.Confidence == result.Sure, time.Duration(p.UncertaintyNS))...)
		if b.AgreementPct < minAgreement || b.AmbiguousPct > maxAmbiguous {
			fail("agreement", "%.2f%% predicted, %.2f%% too close to call; want >= %g%% and <= %g%%",
				b.AgreementPct, b.AmbiguousPct, minAgreement, maxAmbiguous)
		}
	}
	if !slices.Equal(p.RejectStatuses, []int{t.RejectStatus}) {
		fail("reject status", "%v, want [%d]", p.RejectStatuses, t.RejectStatus)
	}
	if n := r.requests(); n > MaxRequests {
		fail("requests", "%d sent, want at most %d", n, MaxRequests)
	}
	if r.Wall > MaxWall {
		fail("wall time", "%v, want at most %v", r.Wall.Round(time.Millisecond), MaxWall)
	}
	return fails
}

// checkFit checks the best fit's model, policy, phase, scope and counting
// of denied requests, sent from sources client addresses; an unsure fit
// (not sure) may leave the counting of denied requests unknown.
func checkFit(t Truth, b result.Fit, sources int, sure bool, u time.Duration) []string {
	var fails []string
	fail := func(criterion, format string, args ...any) {
		fails = append(fails, criterion+": "+fmt.Sprintf(format, args...))
	}
	if !slices.Contains(t.Algorithms, b.Algorithm) && !slices.ContainsFunc(b.Equivalent, func(m string) bool { return slices.Contains(t.Algorithms, m) }) {
		also := ""
		if len(b.Equivalent) > 0 {
			also = fmt.Sprintf(" (equivalent: %s)", strings.Join(b.Equivalent, ", "))
		}
		fail("model", "%s%s, want one of %s", b.Algorithm, also, strings.Join(t.Algorithms, ", "))
	}
	if b.WindowNS <= 0 {
		fail("rate", "window %v", time.Duration(b.WindowNS))
	} else {
		fails = append(fails, checkPolicy(t, b, u)...)
	}
	scope := t.Scope
	if sources < 2 && scope == result.ScopeSource {
		scope = result.ScopeGlobal // one client address: one limit is all it can see
	}
	if b.Scope != scope {
		fail("scope", "%q from %d client addresses, want %q", b.Scope, sources, scope)
	}
	switch got := b.CountsDenied; {
	case t.CountsDenied == nil && got != nil:
		fail("counts denied", "%v, want unknown (null): the limiter decides alike either way", *got)
	case t.CountsDenied != nil && got == nil && sure:
		fail("counts denied", "unknown (null), want %v", *t.CountsDenied)
	case t.CountsDenied != nil && got != nil && *got != *t.CountsDenied:
		fail("counts denied", "%v, want %v", *got, *t.CountsDenied)
	}
	return fails
}

// checkPolicy checks the best fit's rate, capacity or limit and window,
// and phase; b.WindowNS > 0. u is the probe's timing uncertainty: where
// windows start is known to no better than the answers' time (see
// PhaseTolerance).
func checkPolicy(t Truth, b result.Fit, u time.Duration) []string {
	var fails []string
	fail := func(criterion, format string, args ...any) {
		fails = append(fails, criterion+": "+fmt.Sprintf(format, args...))
	}
	rate := float64(b.Limit) / time.Duration(b.WindowNS).Seconds()
	if math.Abs(rate/t.RatePerS()-1) > rateTolerance {
		fail("rate", "%.4g per second, want %.4g within 1%%", rate, t.RatePerS())
	}
	if t.RateOnly {
		if b.Burst != t.Burst {
			fail("capacity", "burst %d, want %d", b.Burst, t.Burst)
		}
	} else {
		if b.Limit != t.Limit {
			fail("limit", "%d per window, want %d", b.Limit, t.Limit)
		}
		if math.Abs(float64(b.WindowNS)/float64(t.Window)-1) > rateTolerance {
			fail("window", "%v, want %v within 1%%", time.Duration(b.WindowNS), t.Window)
		}
	}
	if t.Phase != nil {
		switch {
		case b.UnixPhaseNS == nil:
			fail("phase", "none on the Unix clock, want windows %v after each multiple of %v", *t.Phase, t.Window)
		case phaseApart(time.Duration(*b.UnixPhaseNS), *t.Phase, t.Window) > PhaseTolerance(u):
			fail("phase", "windows %v after each multiple of the window, want %v within %v",
				time.Duration(*b.UnixPhaseNS), *t.Phase, PhaseTolerance(u))
		}
	}
	return fails
}

// PhaseTolerance is how far a fitted phase of windows on the Unix clock
// may be from the true one when the probe's answers took up to u (p99):
// 5ms, or u when larger. An edge is seen only between a request's send
// and its answer, so a phase is known to no better than u, and a sure
// verdict is right when it is that close.
func PhaseTolerance(u time.Duration) time.Duration { return max(phaseTolerance, u) }

// phaseApart is how far apart two phases of windows w are, either way
// round the window.
func phaseApart(a, b, w time.Duration) time.Duration {
	d := (a - b) % w
	if d < 0 {
		d += w
	}
	return min(d, w-d)
}

// TableHeader is the header of a markdown table of Rows.
const TableHeader = "| target | true policy | verdict | agreement | too close to call | requests | wall time |\n|---|---|---|---|---|---|---|"

// Row is one probe of a target as a row of a markdown table under
// TableHeader: the target, its truth, the probe's sentence, the best
// fit's agreement and share too close to call, the requests sent and the
// wall time.
func Row(target string, t Truth, r Run) string {
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	verdict, agree, ambig := "(no probe)", "", ""
	if p := r.Result.Probe; p != nil {
		verdict = p.Sentence
		if p.Confidence != "" {
			verdict += " [" + p.Confidence + "]"
		}
		agree, ambig = fmt.Sprintf("%.2f%%", p.Best.AgreementPct), fmt.Sprintf("%.2f%%", p.Best.AmbiguousPct)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %v |", cell(target), cell(t.String()), cell(verdict), agree, ambig,
		result.Group(r.requests()), r.Wall.Round(100*time.Millisecond))
}
