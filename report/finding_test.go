package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
)

// TestFinding: the first line of a page and of a terminal summary, for
// each kind of run a teacher or an SRE reads: the boundary case, replicas
// with local state, a run that holds to L, an attack whose headers lied,
// a compare that agrees and one that does not.
func TestFinding(t *testing.T) {
	sec := int64(time.Second)
	pol := result.PolicyJSON{Limit: 100, WindowNS: sec, Burst: 100}
	run := func(algo string, replicas int, admitted, maxInW, theory int64) result.Run {
		return result.Run{Algorithm: algo, Backend: "memory", Replicas: replicas, Offered: 1000, Admitted: admitted, Rejected: 1000 - admitted,
			MaxAdmittedInWindow: maxInW, MaxWindowEndNS: 1010 * int64(time.Millisecond), MaxWindowSpanNS: 20 * int64(time.Millisecond),
			TheoryMaxInWindow: theory, BurstRatio: float64(maxInW) / 100}
	}
	boundary := &result.Result{Policy: pol, Workload: map[string]any{"name": "boundary"},
		Runs: []result.Run{run("gcra", 1, 505, 101, 200), run("fixed-window", 1, 1000, 200, 200), run("sliding-log", 1, 500, 100, 100)}}
	replicas := &result.Result{Policy: pol, Workload: map[string]any{"name": "constant"},
		Runs: []result.Run{run("sliding-log", 4, 1000, 400, 100)}}
	held := &result.Result{Policy: pol, Workload: map[string]any{"name": "poisson"}, Runs: []result.Run{run("sliding-log", 1, 500, 100, 100)}}
	attack := &result.Result{Policy: pol, Meta: result.Meta{Mode: "http"}, Runs: []result.Run{run("http", 1, 250, 100, 0)}}
	attack.Runs[0].HTTP = &result.HTTPStats{PolicySource: "RateLimit-Policy", Headers: &result.HeaderStats{RemainingChecked: 40, RemainingContradicted: 3}}
	live := &result.Result{Policy: pol, Meta: result.Meta{Mode: "live"}, Runs: []result.Run{run("gcra", 1, 252, 101, 200)}}
	off := &result.Result{Policy: pol, Meta: result.Meta{Mode: "live"}, Runs: []result.Run{run("gcra", 1, 300, 101, 200)}}
	for _, tc := range []struct {
		name, got, want string
	}{
		{name: "boundary", got: Finding(boundary),
			want: "fixed-window let 2.00x its limit through, 200 of 100 within 20ms around t=1.01s: the boundary case, L just before a window edge and L just after. Also above L: gcra 1.01x. Held to L: sliding-log."},
		{name: "replicas", got: Finding(replicas),
			want: "sliding-log x4 let 4.00x its limit through, 400 of 100 within 20ms around t=1.01s: 4 replicas, each with its own state, admit their limit each."},
		{name: "held", got: Finding(held), want: "sliding-log held to its limit: at most 100 of 100 in any span of 1s."},
		{name: "attack", got: Finding(attack),
			want: "The service rejected 75.0% of 1000 requests against a limit of 100 per 1s, from its RateLimit-Policy; at most 100 in any span W (1.00x). Its headers were contradicted 3 of 40 times tested."},
		{name: "compare agrees", got: CompareFinding(live, attack, "A", "B"),
			want: "A and B agree: every matched run admitted within 2% of the other, and the same most in any span W to within 1% of the limit. Their latencies measure different things: A's are in-process decision times (microseconds), B's HTTP response times (milliseconds, network and server included)."},
		{name: "compare differs", got: CompareFinding(live, off, "A", "B"),
			want: "A and B differ on 1 of their runs, most on gcra: A admitted 252 and B 300 (+16.0%), at most 101 and 101 in any span W."},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestPageOpensWithFinding: the page's finding and checks come before
// any heading, the probe's answer in place of the runs' finding.
func TestPageOpensWithFinding(t *testing.T) {
	sec := int64(time.Second)
	r := &result.Result{Policy: result.PolicyJSON{Limit: 100, WindowNS: sec, Burst: 100}, Workload: map[string]any{"name": "boundary"},
		Runs: []result.Run{
			{Algorithm: "fixed-window", Replicas: 1, Offered: 400, Admitted: 400, MaxAdmittedInWindow: 200, TheoryMaxInWindow: 200, BurstRatio: 2},
			{Algorithm: "sliding-log", Replicas: 1, Offered: 400, Admitted: 200, Rejected: 200, MaxAdmittedInWindow: 100, TheoryMaxInWindow: 100, BurstRatio: 1},
		}}
	r.Checks = []result.Check{{Run: "sliding-log", Metric: "burst_ratio", Op: "<=", Threshold: 1.05, Value: 1, Pass: true},
		{Run: "fixed-window", Metric: "burst_ratio", Op: "<=", Threshold: 1.05, Value: 2}}
	page, err := renderHTML(r, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	finding := strings.Index(html, `<p class="finding">fixed-window let 2.00x its limit through`)
	fail := strings.Index(html, `<li class="over">check FAIL fixed-window.burst_ratio&lt;=1.05: 2.00</li>`)
	pass := strings.Index(html, `<li>check PASS sliding-log.burst_ratio&lt;=1.05: 1.00</li>`)
	heading := strings.Index(html, "<h2>")
	if finding < 0 || fail < finding || pass < fail || heading < pass {
		t.Errorf("finding at %d, failed check at %d, passed at %d, first heading at %d: want them in that order", finding, fail, pass, heading)
	}
}

// TestProbePageOpensWithAnswer: a page with a fit (a probe's, or fit
// DIR's) opens with the service's answer, not the experiments' findings,
// and the models' table comes before the readings.
func TestProbePageOpensWithAnswer(t *testing.T) {
	sec := int64(time.Second)
	r := &result.Result{Policy: result.PolicyJSON{Limit: 50, WindowNS: sec, Burst: 21}, Workload: map[string]any{"name": "probe"},
		Runs: []result.Run{{Algorithm: "probe-rate", Replicas: 1, Offered: 400, Admitted: 70, Rejected: 330, MaxAdmittedInWindow: 71, BurstRatio: 1.42}}}
	f := &fit.Result{Best: result.Fit{Algorithm: "gcra", Limit: 50, WindowNS: sec, Burst: 21, AgreementPct: 100, Scored: 400}}
	f.Fits = []result.Fit{f.Best}
	page, err := renderHTML(r, nil, nil, Options{Fit: f})
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	answer := strings.Index(html, `<p class="finding">The service behaves like gcra of 50 per 1s with a burst of 21`)
	models := strings.Index(html, "<h3>What the service behaves like</h3>")
	reading := strings.Index(html, "<h2>Reading</h2>")
	if answer < 0 || models < answer || reading < models || strings.Contains(html, `<p class="finding">probe-rate`) {
		t.Errorf("answer at %d, models at %d, reading at %d: want them in that order, and the answer as the finding", answer, models, reading)
	}
}
