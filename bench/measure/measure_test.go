package measure_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
)

// count feeds rows to a Summary of c and finishes it over duration ns.
func count(t *testing.T, c measure.Counting, rows []call.Row, duration int64) result.Run {
	t.Helper()
	s := measure.New(c)
	for i := range rows {
		s.Add(&rows[i])
	}
	run, err := s.Finish(duration)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestCounting: failures count as the engine counts them (an executor's
// apart, a limiter's by its failure policy), statuses and error kinds are
// tallied, latency is done minus sent with its p99 the timing
// uncertainty, and a shaper's latency is what its admitted requests
// waited, with no uncertainty.
func TestCounting(t *testing.T) {
	rows := func() []call.Row {
		return []call.Row{
			{Sent: 0, Done: 1000, Key: "k", Status: 200, Outcome: call.Admitted},
			{Sent: 10, Done: 2000, Key: "k", Status: 429, Outcome: call.Rejected},
			{Sent: 20, Done: 3000, Key: "j", Outcome: call.Failed, ErrorKind: "timeout"},
			{Sent: 30, Done: 4000, Key: "j", Outcome: call.Failed},
		}
	}
	for _, tc := range []struct {
		name                       string
		c                          measure.Counting
		admitted, rejected, errors int64
		latencies                  int64 // values in the latency histogram
		maxLatency                 int64 // about
		uncertainty                int64 // about
	}{
		{name: "HTTP: failures apart", c: measure.Counting{HTTP: true, Latency: true},
			admitted: 1, rejected: 1, errors: 2, latencies: 4, maxLatency: 3970, uncertainty: 3970},
		{name: "limiter, fail closed: failures rejected", c: measure.Counting{Latency: true},
			admitted: 1, rejected: 3, errors: 2, latencies: 4, maxLatency: 3970, uncertainty: 3970},
		{name: "limiter, fail open: failures admitted", c: measure.Counting{FailOpen: true, Latency: true},
			admitted: 3, rejected: 1, errors: 2, latencies: 4, maxLatency: 3970, uncertainty: 3970},
		{name: "shaper: its admitted requests' delays, no uncertainty", c: measure.Counting{Served: true},
			admitted: 1, rejected: 3, errors: 2, latencies: 1, maxLatency: 1000},
		{name: "engine, no latency of its own", admitted: 1, rejected: 3, errors: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Policy, c.Bin = result.PolicyJSON{Limit: 10, WindowNS: 1e6, Burst: 10}, 1e5
			run := count(t, c, rows(), 1e6)
			if run.Offered != 4 || run.Admitted != tc.admitted || run.Rejected != tc.rejected || run.Errors != tc.errors {
				t.Errorf("offered %d admitted %d rejected %d errors %d, want 4 %d %d %d",
					run.Offered, run.Admitted, run.Rejected, run.Errors, tc.admitted, tc.rejected, tc.errors)
			}
			if run.StatusCodes["200"] != 1 || run.StatusCodes["429"] != 1 || len(run.StatusCodes) != 2 ||
				run.ErrorKinds["timeout"] != 1 || run.ErrorKinds["other"] != 1 {
				t.Errorf("status codes %v, error kinds %v", run.StatusCodes, run.ErrorKinds)
			}
			switch {
			case tc.latencies == 0 && run.Latency != nil:
				t.Errorf("latency %+v, want none", run.Latency)
			case tc.latencies > 0 && (run.Latency == nil || run.Latency.Count != tc.latencies ||
				run.Latency.Max < tc.maxLatency-10 || run.Latency.Max > tc.maxLatency+10):
				t.Errorf("latency %+v, want %d values up to %d ns", run.Latency, tc.latencies, tc.maxLatency)
			}
			if d := run.TimingUncertaintyNS - tc.uncertainty; d < -10 || d > 10 {
				t.Errorf("timing uncertainty %d, want about %d", run.TimingUncertaintyNS, tc.uncertainty)
			}
			if len(run.Series.Admitted) != 10 || run.KeyCount != 2 || run.DisagreementPct != -1 {
				t.Errorf("%d bins (want 10), %d keys (want 2), disagreement %v (want -1)", len(run.Series.Admitted), run.KeyCount, run.DisagreementPct)
			}
		})
	}
}

// TestDisagreement: with a reference, each decision is compared with the
// exact log's at its instant, per key; an executor's failures are not
// compared, a limiter's count by its failure policy; Disagree gives an
// engine's own count instead.
func TestDisagreement(t *testing.T) {
	// Limit 2 per 1000 ns. Key k: the exact log admits the first two and
	// rejects the third; the rows admitted the third (a false admit) and
	// rejected the second (a false reject). Key j: admitted, as the log
	// would; then a failure.
	rows := func() []call.Row {
		return []call.Row{
			{Sent: 0, Key: "k", Outcome: call.Admitted},
			{Sent: 10, Key: "k", Outcome: call.Rejected},
			{Sent: 20, Key: "k", Outcome: call.Admitted},
			{Sent: 30, Key: "j", Outcome: call.Admitted},
			{Sent: 40, Key: "j", Outcome: call.Failed},
		}
	}
	pol := result.PolicyJSON{Limit: 2, WindowNS: 1000, Burst: 2}
	for _, tc := range []struct {
		name               string
		c                  measure.Counting
		engine             bool // Disagree(3, 4) in place of a reference
		falseAdm, falseRej int64
		pct                float64
	}{
		{name: "HTTP: the failure not compared", c: measure.Counting{HTTP: true}, falseAdm: 1, falseRej: 1, pct: 40},
		{name: "fail closed: the failure a false reject", falseAdm: 1, falseRej: 2, pct: 60},
		{name: "fail open: the failure as the log", c: measure.Counting{FailOpen: true}, falseAdm: 1, falseRej: 1, pct: 40},
		{name: "the engine's own count", engine: true, falseAdm: 3, falseRej: 4, pct: 140},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Policy, c.Bin = pol, 100
			if !tc.engine {
				ref, err := backend.Reference(pol.Policy(), 2)()
				if err != nil {
					t.Fatal(err)
				}
				c.Reference = ref
			}
			s := measure.New(c)
			for _, r := range rows() {
				s.Add(&r)
			}
			if tc.engine {
				s.Disagree(3, 4)
			}
			run, err := s.Finish(0)
			if err != nil {
				t.Fatal(err)
			}
			if run.FalseAdmits != tc.falseAdm || run.FalseRejects != tc.falseRej || run.DisagreementPct != tc.pct {
				t.Errorf("false admits %d, false rejects %d, disagreement %v%%; want %d, %d, %v%%",
					run.FalseAdmits, run.FalseRejects, run.DisagreementPct, tc.falseAdm, tc.falseRej, tc.pct)
			}
		})
	}
}

// TestOrderAndServing: a row sent before the one before it counts at that
// one's instant and is counted as reordered; a shaper's admits count when
// served, so the most admitted in a window follows the served instants;
// the table-full mark and costs are counted.
func TestOrderAndServing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		served    bool
		rows      []call.Row
		reordered int64
		maxIn     int64 // most admitted (cost) in any 1000 ns
		tableFull int64
		cost      int64 // admitted cost
	}{
		{name: "sent out of order", rows: []call.Row{
			{Sent: 100, Key: "k", Outcome: call.Admitted},
			{Sent: 50, Key: "k", Outcome: call.Admitted},
			{Sent: 1099, Key: "k", Outcome: call.Admitted},
		}, reordered: 1, maxIn: 3, cost: 3},
		{name: "a shaper's admits at their served instants", served: true, rows: []call.Row{
			{Sent: 0, Done: 0, Key: "k", Outcome: call.Admitted},
			{Sent: 10, Done: 1500, Key: "k", Outcome: call.Admitted},
			{Sent: 20, Done: 3000, Key: "k", Outcome: call.Admitted},
		}, maxIn: 1, cost: 3},
		{name: "costs and a full table", rows: []call.Row{
			{Sent: 0, Key: "k", Outcome: call.Admitted, Cost: 5},
			{Sent: 1, Key: "n", Outcome: call.Rejected, TableFull: true},
			{Sent: 2, Key: "k", Outcome: call.Rejected, Cost: 2},
		}, maxIn: 5, tableFull: 1, cost: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := measure.New(measure.Counting{Policy: result.PolicyJSON{Limit: 10, WindowNS: 1000, Burst: 10}, Bin: 100, Served: tc.served})
			for i := range tc.rows {
				s.Add(&tc.rows[i])
			}
			run, err := s.Finish(0)
			if err != nil {
				t.Fatal(err)
			}
			if s.Reordered() != tc.reordered || run.MaxAdmittedInWindow != tc.maxIn || run.TableFull != tc.tableFull || run.AdmittedCost != tc.cost {
				t.Errorf("reordered %d, most in a window %d, table full %d, admitted cost %d; want %d, %d, %d, %d",
					s.Reordered(), run.MaxAdmittedInWindow, run.TableFull, run.AdmittedCost, tc.reordered, tc.maxIn, tc.tableFull, tc.cost)
			}
		})
	}
}

// ExampleSummary counts a fixed window's rows at its boundary: 3 admitted
// at the end of one window and 3 at the start of the next are 6 in a span
// of 1s for a limit of 3.
func ExampleSummary() {
	s := measure.New(measure.Counting{Policy: result.PolicyOf(algorithms.Policy{Limit: 3, Window: 1e9}), Bin: 1e8, Theory: 6, Over: 6})
	for _, at := range []int64{900e6, 950e6, 990e6, 1000e6, 1010e6, 1050e6, 1100e6} {
		r := call.Row{Sent: time.Duration(at), Key: "k", Outcome: call.Admitted}
		if at == 1100e6 {
			r.Outcome = call.Rejected
		}
		s.Add(&r)
	}
	run, _ := s.Finish(2e9)
	fmt.Printf("admitted %d of %d, most in any 1s %d, %.1fx the limit\n", run.Admitted, run.Offered, run.MaxAdmittedInWindow, run.BurstRatio)
	// Output: admitted 6 of 7, most in any 1s 6, 2.0x the limit
}
