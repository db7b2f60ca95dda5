package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
)

// A hand-made result: the fixed window lets 2L through around a window
// edge, the sliding log does not.
func example() *result.Result {
	return &result.Result{
		Policy:   result.PolicyJSON{Limit: 100, WindowNS: int64(time.Second), Burst: 100},
		Workload: map[string]any{"name": "boundary"},
		Runs: []result.Run{
			{Algorithm: "fixed-window", Backend: "memory", Replicas: 1, Offered: 400, Admitted: 400,
				MaxAdmittedInWindow: 200, MaxWindowEndNS: int64(1009 * time.Millisecond), MaxWindowSpanNS: int64(19 * time.Millisecond),
				TheoryMaxInWindow: 200, BurstRatio: 2, TheoryRatio: 2, DisagreementPct: 50, JainFairness: 1},
			{Algorithm: "sliding-log", Backend: "memory", Replicas: 1, Offered: 400, Admitted: 200, Rejected: 200,
				MaxAdmittedInWindow: 100, MaxWindowEndNS: int64(999 * time.Millisecond), MaxWindowSpanNS: int64(9 * time.Millisecond),
				TheoryMaxInWindow: 100, BurstRatio: 1, TheoryRatio: 1, JainFairness: 1},
		},
	}
}

func ExampleTable() {
	if err := report.Table(os.Stdout, example()); err != nil {
		fmt.Println(err)
	}
	// Output:
	//      ALGORITHM  OFFERED  ADMITTED  REJECTED  ERRORS  MAX IN W  THEORY  BURST RATIO  DISAGREE %   JAIN  P99 DELAY
	//   fixed-window      400       400         0       0       200     200         2.00      50.000  1.000          -
	//    sliding-log      400       200       200       0       100     100         1.00       0.000  1.000          -
}

func ExampleReading() {
	for _, line := range report.Reading(example()) {
		fmt.Println(line)
	}
	// Output:
	// fixed-window admitted 2.00x its limit (200 of 100) within 19ms around t=1.01s; theory 2.00x, within its theory.
	// sliding-log admitted 1.00x its limit (100 of 100) within 9ms around t=999ms; theory 1.00x, within its theory.
}

func ExampleFinding() {
	fmt.Println(report.Finding(example()))
	// Output:
	// fixed-window let 2.00x its limit through, 200 of 100 within 19ms around t=1.01s: the boundary case, L just before a window edge and L just after. Held to L: sliding-log.
}
