package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// TestHTTPRun: an HTTP run against a server whose algorithm was not named
// has no theory: the reading, the table and the page say so instead of
// flagging it above a theory of 0, and the status line carries the 429
// ratio and the Retry-After values.
func TestHTTPRun(t *testing.T) {
	r := &result.Result{
		Meta:     result.Meta{Mode: "http"},
		Policy:   result.PolicyJSON{Limit: 100, WindowNS: int64(time.Second), Burst: 100},
		Workload: map[string]any{"name": "poisson"},
		Runs: []result.Run{{
			Algorithm: "http", Backend: "127.0.0.1:8080", Replicas: 1, Offered: 300, Admitted: 199, Rejected: 101,
			MaxAdmittedInWindow: 199, BurstRatio: 1.99, DisagreementPct: -1,
			StatusCodes: map[string]int64{"200": 199, "429": 101},
			HTTP:        &result.HTTPStats{Method: "GET", URL: "http://127.0.0.1:8080/", TooManyPct: 33.666, RetryAfterS: map[string]int64{"1": 101}},
		}},
	}
	if got := Reading(r)[0]; !strings.HasSuffix(got, "; theory unknown.") || strings.Contains(got, "ABOVE") {
		t.Errorf("reading %q", got)
	}
	var tb bytes.Buffer
	if err := Table(&tb, r); err != nil {
		t.Fatal(err)
	}
	if fields := strings.Fields(strings.Split(tb.String(), "\n")[1]); fields[6] != "-" {
		t.Errorf("table theory %q in %q", fields[6], tb.String())
	}
	if r.Runs[0].AboveTheory(r.Policy.WindowNS) {
		t.Error("a run without a theory is flagged above it")
	}
	page, err := renderHTML(r, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "200: 199, 429: 101; 429s: 33.7% of responses; Retry-After (s) 1: 101"; !strings.Contains(string(page), want) {
		t.Errorf("report.html lacks %q", want)
	}
	if want := "<title>ratebench attack: GET http://127.0.0.1:8080/, poisson workload</title>"; !strings.Contains(string(page), want) {
		t.Errorf("report.html lacks the title %q", want)
	}
}
