package summary_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report/summary"
)

func TestCountsAndStatuses(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{name: "numeric keys in numeric order", got: summary.Counts(map[string]int64{"429": 1, "200": 9, "1000": 2}), want: "200: 9, 429: 1, 1000: 2"},
		{name: "words in text order", got: summary.Counts(map[string]int64{"timeout": 3, "refused": 1}), want: "refused: 1, timeout: 3"},
		{name: "none", got: summary.Counts(nil), want: "none"},
		{name: "one status", got: summary.Statuses([]int{429}), want: "429"},
		{name: "two statuses", got: summary.Statuses([]int{429, 503}), want: "429, 503"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// pct is percentiles whose p50 is p50 and the rest p99.
func pct(p50, p99 time.Duration) *result.Percentiles {
	return &result.Percentiles{P50: int64(p50), P99: int64(p99), Max: int64(p99)}
}

// TestLive: one line per live run, sim runs skipped, and the harness's
// cost from the calibration.
func TestLive(t *testing.T) {
	live := &result.LiveStats{AchievedRatePerS: 149.6, OfferedRatePerS: 150, Dropped: 2, LatePct: 0.5, Service: pct(1234567*time.Nanosecond, 3*time.Millisecond),
		Calibration: &result.Calibration{OverheadNS: 80, OverheadMeanNS: 95, ClockReadNS: 20, Latency: pct(time.Microsecond, 2*time.Microsecond),
			Service: pct(500*time.Nanosecond, time.Microsecond)}}
	runs := []result.Run{
		{Algorithm: "gcra", Live: live, Latency: pct(1500*time.Microsecond, 2*time.Second)},
		{Algorithm: "fixed-window"}, // a simulation's
	}
	var b bytes.Buffer
	summary.Live(&b, runs)
	want := "gcra: sent 150/s of 150/s offered, 2 dropped, 0.50% late; latency p50 1.5ms p99 2s; service p50 1.235ms p99 3ms\n" +
		"harness: 80ns per decision (median; mean 95ns; a clock read costs 20ns here, a decision takes two); a no-op limiter's latency p50 1µs p99 2µs, service p50 500ns\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	summary.Live(&b, runs[1:])
	if b.Len() != 0 {
		t.Errorf("a simulation's summary: %q, want nothing", b.String())
	}
}

// TestAttack: an open-loop attack's rates, statuses and Retry-After
// values, and its policy; a closed loop's completed rate; no policy
// known.
func TestAttack(t *testing.T) {
	base := func() result.Run {
		return result.Run{Algorithm: "http", StatusCodes: map[string]int64{"200": 90, "429": 10}, Latency: pct(2*time.Millisecond, 9*time.Millisecond),
			Live: &result.LiveStats{AchievedRatePerS: 99.7, OfferedRatePerS: 100, Service: pct(time.Millisecond, 8*time.Millisecond), Lateness: pct(0, 50*time.Microsecond)},
			HTTP: &result.HTTPStats{URL: "http://127.0.0.1:8080/", RejectStatuses: []int{429}, TooManyPct: 10, RetryAfterS: map[string]int64{"1": 10},
				Connections: 4, CompletedRatePerS: 99.5, PolicySource: "flags"}}
	}
	closed := base()
	closed.HTTP.Closed, closed.HTTP.SourceAddrs = true, []string{"127.0.0.2", "127.0.0.3"}
	for _, tc := range []struct {
		name string
		run  result.Run
		pol  algorithms.Policy
		want []string // lines, in order
	}{
		{name: "open loop", run: base(), pol: algorithms.Policy{Limit: 10, Window: 100 * time.Millisecond}, want: []string{
			"http://127.0.0.1:8080/: sent 100/s of 100/s offered (0 dropped, 0.00% late), completed 100/s over 4 connections",
			"status: 200: 90, 429: 10; rejected (429): 10.00% of responses; Retry-After (s): 1: 10",
			"latency p50 2ms p99 9ms max 9ms; service p50 1ms p99 8ms; lateness p99 50µs; policy 10 per 100ms (flags)"}},
		{name: "closed loop from two addresses, no policy", run: closed, want: []string{
			"http://127.0.0.1:8080/: closed loop over 4 connections from 2 source addresses: completed 100/s",
			"status: 200: 90, 429: 10; rejected (429): 10.00% of responses; Retry-After (s): 1: 10",
			"latency p50 2ms p99 9ms max 9ms; service p50 1ms p99 8ms; lateness p99 50µs; policy none known"}},
	} {
		var b bytes.Buffer
		summary.Attack(&b, tc.run, tc.pol)
		if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
