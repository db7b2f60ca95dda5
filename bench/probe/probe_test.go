package probe

import (
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
)

// rows are trace rows answered with the given statuses, in order.
func rows(statuses ...int) []call.Row {
	out := make([]call.Row, len(statuses))
	for i, s := range statuses {
		out[i] = call.Row{Seq: int64(i), Status: s, Outcome: call.Failed, ErrorKind: "http_5xx"}
		if s >= 200 && s < 300 {
			out[i].Outcome, out[i].ErrorKind = call.Admitted, ""
		}
	}
	return out
}

func TestFindReject(t *testing.T) {
	for _, tc := range []struct {
		name      string
		statuses  []int
		want      []int // nil: not found yet
		wantFound bool
	}{
		{name: "429 seen", statuses: []int{200, 429, 503, 503}, want: []int{429}, wantFound: true},
		{name: "a proxy's 503", statuses: []int{200, 200, 503, 503, 500}, want: []int{503}, wantFound: true},
		{name: "the most frequent other status", statuses: []int{200, 403, 403, 500}, want: []int{403}, wantFound: true},
		{name: "all admitted: the next burst tells", statuses: []int{200, 200, 204}},
	} {
		var p prober
		p.findReject(rows(tc.statuses...))
		if !slices.Equal(p.reject, tc.want) || p.found != tc.wantFound {
			t.Errorf("%s: reject %v found %v, want %v %v", tc.name, p.reject, p.found, tc.want, tc.wantFound)
		}
	}
}

// TestClassify: rows counted as errors before the reject status was found
// (a 503 service's first burst) are rejections once it is, in the trace
// and in their run's counts; other statuses stay errors by kind.
func TestClassify(t *testing.T) {
	p := &prober{reject: []int{503}}
	p.rows = rows(200, 503, 503, 500, 200, 503)
	p.runEnds = []int{4, 6}
	for range 2 {
		p.out.Runs = append(p.out.Runs, result.Run{Errors: 9, HTTP: &result.HTTPStats{Responses: 3}})
	}
	var traced []call.Row
	p.cfg.Trace = traceFunc(func(r call.Row) { traced = append(traced, r) })
	p.classify()
	first, second := p.out.Runs[0], p.out.Runs[1]
	if first.Rejected != 2 || first.Errors != 1 || first.ErrorKinds["http_5xx"] != 1 || second.Rejected != 1 || second.Errors != 0 {
		t.Errorf("runs: %+v / %+v", first, second)
	}
	if !slices.Equal(first.HTTP.RejectStatuses, []int{503}) || first.HTTP.TooManyPct < 66 || first.HTTP.TooManyPct > 67 {
		t.Errorf("first run: reject statuses %v, %.1f%% rejected", first.HTTP.RejectStatuses, first.HTTP.TooManyPct)
	}
	want := []call.Class{call.Admitted, call.Rejected, call.Rejected, call.Failed, call.Admitted, call.Rejected}
	if len(traced) != len(want) {
		t.Fatalf("%d rows traced, want %d", len(traced), len(want))
	}
	for i, r := range traced {
		if r.Outcome != want[i] || r.Algorithm != "probe" {
			t.Errorf("row %d: %v of %q, want %v of probe", i, r.Outcome, r.Algorithm, want[i])
		}
	}
}

type traceFunc func(call.Row)

func (f traceFunc) Row(r call.Row) { f(r) }

func TestIdleFor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		window   time.Duration
		capacity int64
		rate     float64 // per ns
		want     time.Duration
	}{
		{name: "a bucket's refill and a fifth", capacity: 50, rate: 50 / 1e9, want: 1200 * time.Millisecond},
		{name: "at least 300ms", capacity: 10, rate: 1000 / 1e9, want: 300 * time.Millisecond},
		{name: "at most 5s", capacity: 100, rate: 1 / 1e9, want: 5 * time.Second},
		{name: "the window given, and a fifth", window: 2 * time.Second, capacity: 10, rate: 1000 / 1e9, want: 2400 * time.Millisecond},
		{name: "no rate yet", capacity: 10, want: time.Second},
	} {
		p := &prober{cfg: Config{Window: tc.window}}
		if got := p.idleFor(tc.capacity, tc.rate); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSchedule(t *testing.T) {
	s := newSchedule()
	s.burst(0, 4, 2)
	s.idle(time.Second)
	s.constant(10, time.Second, 1)
	if len(s.arrivals) != 14 || s.keys != 2 {
		t.Fatalf("%d arrivals over %d keys, want 14 over 2", len(s.arrivals), s.keys)
	}
	if s.arrivals[1].Key != "k1" || s.arrivals[4].At != time.Second || s.arrivals[5].At != 1100*time.Millisecond || s.at != 2*time.Second {
		t.Errorf("arrivals %v, at %v", s.arrivals[:6], s.at)
	}
	s.thin(0.5)
	if len(s.arrivals) != 7 {
		t.Errorf("thinned to half: %d arrivals, want 7", len(s.arrivals))
	}
	// The span ends 1ms after the last arrival, and 50µs for each of the
	// two left of the burst at 0.
	if got, want := s.span(), s.arrivals[len(s.arrivals)-1].At+time.Millisecond+100*time.Microsecond; got != want {
		t.Errorf("span %v, want %v", got, want)
	}
}
