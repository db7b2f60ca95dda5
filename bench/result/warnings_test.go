package result_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// TestWarnings: the warnings of live runs say what is doubtful, as data,
// and a sim run, or a live one that is fine, has none.
func TestWarnings(t *testing.T) {
	late := &result.Percentiles{P99: 3e6}
	runs := []result.Run{
		{Algorithm: "sim-run"},
		{Algorithm: "fine", Live: &result.LiveStats{LatePct: 4.9, Scheduled: 100}},
		{Algorithm: "late", Live: &result.LiveStats{LatePct: 7.5, LateAfterNS: int64(time.Millisecond), Lateness: late}},
		{Algorithm: "dropping", Live: &result.LiveStats{Dropped: 5, Scheduled: 100, MaxInFlight: 7}},
		{Algorithm: "waiting", Live: &result.LiveStats{Unserved: 3, Calibration: &result.Calibration{LatePct: 6}}},
		{Algorithm: "stuck", Live: &result.LiveStats{Abandoned: 2}},
		{Algorithm: "forgetful", LossyEvictions: 4, TableFull: 9},
		{Algorithm: "http", Offered: 10, Errors: 3, ErrorKinds: map[string]int64{"timeout": 3},
			Live: &result.LiveStats{Unsent: 8, Scheduled: 18}, HTTP: &result.HTTPStats{PolicySource: result.PolicyNone}},
	}
	want := []result.Warning{
		{Kind: result.WarnLate, Run: "late", LatePct: 7.5, LateAfterNS: int64(time.Millisecond), LatenessP99NS: int64(3 * time.Millisecond)},
		{Kind: result.WarnDropped, Run: "dropping", N: 5, Of: 100, MaxInFlight: 7},
		{Kind: result.WarnUnserved, Run: "waiting", N: 3},
		{Kind: result.WarnAbandoned, Run: "stuck", N: 2},
		{Kind: result.WarnLossy, Run: "forgetful", N: 4},
		{Kind: result.WarnTableFull, Run: "forgetful", N: 9},
		{Kind: result.WarnUnsent, Run: "http", HTTP: true, N: 8, Of: 18},
		{Kind: result.WarnNoPolicy, Run: "http", HTTP: true},
		{Kind: result.WarnFailed, Run: "http", HTTP: true, N: 3, Of: 10, ErrorKinds: map[string]int64{"timeout": 3}},
		{Kind: result.WarnCalibrationLate, LatePct: 6},
	}
	got := result.Warnings(runs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Warnings:\n got %+v\nwant %+v", got, want)
	}
	for _, w := range got {
		if s := resulttest.Sentences(w); s != nil {
			t.Errorf("%s warning holds sentences %q: records hold numbers and names", w.Kind, s)
		}
	}
}

// TestWarningsBlameTheBackend: a late sender on a backend that timed out
// is blamed on the backend, with its error; on memory, on the machine.
func TestWarningsBlameTheBackend(t *testing.T) {
	late := func(backend string, timeouts int64) result.Run {
		r := result.Run{Algorithm: "gcra", Backend: backend, Offered: 1000, Errors: timeouts,
			Live: &result.LiveStats{LatePct: 40, LateAfterNS: int64(time.Millisecond), Lateness: &result.Percentiles{P99: int64(time.Second)}}}
		if timeouts > 0 {
			r.ErrorKinds = map[string]int64{"timeout": timeouts}
			r.FirstError = "redis: gcra: context deadline exceeded"
		}
		return r
	}
	for _, tc := range []struct {
		name string
		run  result.Run
		want result.Warning
	}{
		// Redis paused: the workers waited out its timeouts.
		{"paused redis", late("redis", 300), result.Warning{Kind: result.WarnBackendLate, Run: "gcra", LatePct: 40, LateAfterNS: int64(time.Millisecond),
			LatenessP99NS: int64(time.Second), N: 300, Backend: "redis", FirstError: "redis: gcra: context deadline exceeded"}},
		// In memory nothing but the machine can be late.
		{"busy machine", late("memory", 0), result.Warning{Kind: result.WarnLate, Run: "gcra", LatePct: 40, LateAfterNS: int64(time.Millisecond), LatenessP99NS: int64(time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := result.Warnings([]result.Run{tc.run})
			if len(ws) != 1 || !reflect.DeepEqual(ws[0], tc.want) {
				t.Errorf("Warnings = %+v, want [%+v]", ws, tc.want)
			}
		})
	}
}
