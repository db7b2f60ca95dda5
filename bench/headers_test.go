package bench

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// TestHeaderCheck: Retry-After and remaining judged by what followed for
// the same key, from rows in send order.
func TestHeaderCheck(t *testing.T) {
	ms := time.Millisecond
	adm := func(key string, sent, done time.Duration, remaining int64, reset time.Duration) TraceRow {
		return TraceRow{Key: key, Sent: sent, Done: done, Outcome: Admitted, RetryAfter: -1, Remaining: remaining, ResetAfter: reset}
	}
	rej := func(key string, sent, done, ra time.Duration) TraceRow {
		return TraceRow{Key: key, Sent: sent, Done: done, Outcome: Rejected, RetryAfter: ra, Remaining: -1, ResetAfter: -1}
	}
	for _, tc := range []struct {
		name string
		rows []TraceRow
		want result.HeaderStats
	}{
		{name: "honest Retry-After: retried at t+RA, admitted",
			rows: []TraceRow{rej("a", 0, ms, time.Second), rej("a", 500*ms, 501*ms, time.Second), adm("a", 1001*ms, 1002*ms, -1, -1)},
			want: result.HeaderStats{RetryAfterChecked: 1}},
		{name: "too early: retried at t+RA, rejected",
			rows: []TraceRow{rej("a", 0, ms, time.Second), rej("a", 1001*ms, 1002*ms, time.Second)},
			want: result.HeaderStats{RetryAfterChecked: 1, RetryAfterEarly: 1}},
		{name: "overstated: admitted 100ms after a Retry-After of 5s",
			rows: []TraceRow{rej("a", 0, ms, 5*time.Second), adm("a", 101*ms, 102*ms, -1, -1)},
			want: result.HeaderStats{RetryAfterChecked: 1, RetryAfterOverstated: 1, OverstatedFactor: 50}},
		{name: "admitted within the second of granularity: not overstated",
			rows: []TraceRow{rej("a", 0, ms, time.Second), adm("a", 101*ms, 102*ms, -1, -1)},
			want: result.HeaderStats{}},
		{name: "sent while the rejection was in flight: not judged",
			rows: []TraceRow{rej("a", 0, 10*ms, 5*time.Second), adm("a", 5*ms, 12*ms, -1, -1)},
			want: result.HeaderStats{}},
		{name: "another key's admission says nothing",
			rows: []TraceRow{rej("a", 0, ms, 5*time.Second), adm("b", 100*ms, 101*ms, -1, -1)},
			want: result.HeaderStats{}},
		{name: "no Retry-After",
			rows: []TraceRow{rej("a", 0, ms, -1), rej("b", 0, ms, -1)},
			want: result.HeaderStats{RejectedNoRetryAfter: 2}},
		{name: "remaining told the truth",
			rows: []TraceRow{adm("a", 0, ms, 1, time.Second), adm("a", 2*ms, 3*ms, 0, time.Second)},
			want: result.HeaderStats{RemainingChecked: 1}},
		{name: "remaining lied: said 3 left, next rejected",
			rows: []TraceRow{adm("a", 0, ms, 3, time.Second), rej("a", 2*ms, 3*ms, time.Second)},
			want: result.HeaderStats{RemainingChecked: 1, RemainingContradicted: 1}},
		{name: "remaining used up by requests in flight: not judged",
			rows: []TraceRow{adm("a", 0, 5*ms, 1, time.Second), adm("a", 2*ms, 6*ms, -1, -1), rej("a", 7*ms, 8*ms, time.Second)},
			want: result.HeaderStats{}},
		{name: "next request after the reset: not judged",
			rows: []TraceRow{adm("a", 0, ms, 1, 10*ms), rej("a", 20*ms, 21*ms, time.Second)},
			want: result.HeaderStats{}},
		{name: "errors are skipped",
			rows: []TraceRow{adm("a", 0, ms, 1, time.Second), {Key: "a", Sent: 2 * ms, Done: 3 * ms, Outcome: Failed, RetryAfter: -1, Remaining: -1, ResetAfter: -1}, adm("a", 4*ms, 5*ms, -1, -1)},
			want: result.HeaderStats{RemainingChecked: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHeaderCheck()
			for _, r := range tc.rows {
				h.Row(r)
			}
			if got := *h.Result(); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
