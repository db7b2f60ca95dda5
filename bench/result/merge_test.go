package result_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// TestMerge merges the fixture with a second host's run of the same plan
// and checks every rule of Merge.
func TestMerge(t *testing.T) {
	a, b := resulttest.Fixture(), resulttest.Fixture()
	b.Meta.StartedAt = a.Meta.StartedAt.Add(-time.Minute) // the earlier start wins
	b.Meta.ElapsedNS = 3e9
	// b's runs in another order: runs are matched by target, not position.
	slices.Reverse(b.Runs)
	lq := &b.Runs[2] // leaky-queue
	lq.Latency, lq.LatencyHDR = resulttest.Delays(1000)
	lq.Series.Admitted = append(lq.Series.Admitted, 5, 5) // a longer series
	fw := &b.Runs[3]                                      // fixed-window
	fw.MaxAdmittedInWindow, fw.BurstRatio, fw.MaxWindowEndNS = 180, 1.8, 42
	fw.DisagreementPct, fw.Offered = 0, 1800 // a third of a's weight
	sc := &b.Runs[0]                         // sliding-counter@redis
	sc.Keys = []result.KeyCount{{Key: "k0", Offered: 10, Admitted: 50}, {Key: "k3", Offered: 10, Admitted: 100}}

	m, err := result.Merge([]result.Input{{Name: "host-a", Result: a}, {Name: "host-b", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Meta.Hosts, []string{"host-a", "host-b"}) || m.Meta.CPUs != 16 ||
		!m.Meta.StartedAt.Equal(b.Meta.StartedAt) || m.Meta.ElapsedNS != 3e9 {
		t.Errorf("meta = %+v", m.Meta)
	}
	if got := m.Labels(); !slices.Equal(got, a.Labels()) {
		t.Fatalf("runs %q, want a's order %q", got, a.Labels())
	}
	for i, run := range m.Runs {
		ra := a.Runs[i]
		rb := b.Runs[slices.IndexFunc(b.Runs, func(r result.Run) bool { return r.Label() == ra.Label() })]
		if run.Offered != ra.Offered+rb.Offered || run.Admitted != ra.Admitted+rb.Admitted ||
			run.Rejected != ra.Rejected+rb.Rejected || run.Errors != ra.Errors+rb.Errors {
			t.Errorf("%s: counts not summed: %+v", run.Label(), run)
		}
		for j := range run.Series.Admitted {
			if want := at(ra.Series.Admitted, j) + at(rb.Series.Admitted, j); run.Series.Admitted[j] != want {
				t.Fatalf("%s: bin %d admitted %d, want %d", run.Label(), j, run.Series.Admitted[j], want)
			}
		}
	}
	// The histograms merged exactly: the count is the sum.
	q := m.Runs[2]
	if q.Latency == nil || q.Latency.Count != 301+1001 {
		t.Fatalf("merged latency = %+v, want a count of %d", q.Latency, 301+1001)
	}
	h, err := result.DecodeHistogram(q.LatencyHDR)
	if err != nil || h.TotalCount() != 1302 {
		t.Fatalf("merged histogram: %v, count %d", err, h.TotalCount())
	}
	if len(q.Series.Admitted) != 102 {
		t.Errorf("merged series has %d bins, want the longer 102", len(q.Series.Admitted))
	}
	// The max in a window is the larger one, a lower bound; disagreement
	// is weighted by offered.
	f := m.Runs[1]
	if f.MaxAdmittedInWindow != 200 || f.BurstRatio != 2 || f.MaxWindowEndNS != a.Runs[1].MaxWindowEndNS {
		t.Errorf("fixed-window max %d ratio %v end %d", f.MaxAdmittedInWindow, f.BurstRatio, f.MaxWindowEndNS)
	}
	if want := 16.667 * 600 / 2400; f.DisagreementPct != want {
		t.Errorf("disagreement %v, want %v", f.DisagreementPct, want)
	}
	if m.Runs[3].DisagreementPct != -1 {
		t.Errorf("no reference on either side: disagreement %v, want -1", m.Runs[3].DisagreementPct)
	}
	s := m.Runs[4]
	if s.StatusCodes["429"] != 600 || s.ErrorKinds["timeout"] != 6 {
		t.Errorf("status codes %v, error kinds %v not summed", s.StatusCodes, s.ErrorKinds)
	}
	wantKeys := []result.KeyCount{{Key: "k0", Offered: 210, Admitted: 200}, {Key: "k1", Offered: 200, Admitted: 100},
		{Key: "k2", Offered: 200, Admitted: 50}, {Key: "k3", Offered: 10, Admitted: 100}}
	if !slices.Equal(s.Keys, wantKeys) || s.KeyCount != 4 || s.JainFairness != result.Jain([]int64{200, 100, 50, 100}) {
		t.Errorf("keys %+v (%d), result.Jain %v", s.Keys, s.KeyCount, s.JainFairness)
	}
	// The inputs are untouched.
	if a.Runs[4].StatusCodes["429"] != 300 || len(a.Runs[2].Series.Admitted) != 100 {
		t.Error("Merge modified an input")
	}
}

func TestMergeMismatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*result.Result)
	}{
		{"policy", func(r *result.Result) { r.Policy.Burst = 50 }},
		{"bins", func(r *result.Result) { r.Runs[1].Series.BinNS = int64(time.Second) }},
		{"missing run", func(r *result.Result) { r.Runs = r.Runs[1:] }},
		{"other replicas", func(r *result.Result) { r.Runs[0].Replicas = 3 }},
		{"other backend", func(r *result.Result) { r.Runs[0].Backend = "redis" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := resulttest.Fixture()
			tc.change(b)
			_, err := result.Merge([]result.Input{{Name: "a", Result: resulttest.Fixture()}, {Name: "b", Result: b}})
			if !errors.Is(err, result.ErrMismatch) {
				t.Fatalf("err = %v, want result.ErrMismatch", err)
			}
		})
	}
}

// TestMergeLiveHTTP: two machines attacking one URL at once add up: the
// live counts and rates, the responses and Retry-After values, the
// service and lateness histograms; the 429 share is recomputed.
func TestMergeLiveHTTP(t *testing.T) {
	run := func(ok, tooMany int64, retry map[string]int64, svc []int64) result.Run {
		r := result.Run{Algorithm: "http", Offered: ok + tooMany, Admitted: ok, Rejected: tooMany,
			StatusCodes: map[string]int64{"200": ok, "429": tooMany}}
		l := &result.LiveStats{Workers: 32, Scheduled: ok + tooMany + 1, Dropped: 1, Late: 2, OfferedRatePerS: 100, AchievedRatePerS: 99, SpanNS: 1e9}
		l.Service, l.ServiceHDR = resulttest.Values(svc...)
		l.Lateness, l.LatenessHDR = resulttest.Values(svc...)
		r.Live = l
		r.HTTP = &result.HTTPStats{URL: "http://127.0.0.1:8080/", Responses: ok + tooMany, Connections: 4,
			TooManyPct: 100 * float64(tooMany) / float64(ok+tooMany), RetryAfterS: retry, CompletedRatePerS: 99}
		return r
	}
	pol := result.PolicyJSON{Limit: 100, WindowNS: 1e9, Burst: 100}
	a := &result.Result{Policy: pol, Runs: []result.Run{run(90, 10, map[string]int64{"1": 10}, []int64{100, 200})}}
	b := &result.Result{Policy: pol, Runs: []result.Run{run(10, 90, map[string]int64{"1": 40, "2": 50}, []int64{300, 400, 500})}}
	m, err := result.Merge([]result.Input{{Name: "a", Result: a}, {Name: "b", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Runs[0]
	h, l := r.HTTP, r.Live
	if h.Responses != 200 || h.Connections != 8 || h.CompletedRatePerS != 198 || h.TooManyPct != 50 {
		t.Errorf("http = %+v, want 200 responses, 8 connections, 198/s, 50%% 429s", h)
	}
	if h.RetryAfterS["1"] != 50 || h.RetryAfterS["2"] != 50 || a.Runs[0].HTTP.RetryAfterS["1"] != 10 {
		t.Errorf("Retry-After %v, want 1s: 50, 2s: 50, and the input untouched", h.RetryAfterS)
	}
	if l.Workers != 64 || l.Scheduled != 202 || l.Dropped != 2 || l.Late != 4 || l.LatePct != 2 ||
		l.OfferedRatePerS != 200 || l.AchievedRatePerS != 198 || l.SpanNS != 1e9 {
		t.Errorf("live = %+v", l)
	}
	if l.Service.Count != 5 || l.Lateness.Count != 5 || l.Service.Max < 500 {
		t.Errorf("service %+v, lateness %+v: want the 5 values of both", l.Service, l.Lateness)
	}
	// A live run does not merge with a sim run of the same target.
	c := &result.Result{Policy: pol, Runs: []result.Run{{Algorithm: "http"}}}
	if _, err := result.Merge([]result.Input{{Name: "a", Result: a}, {Name: "c", Result: c}}); !errors.Is(err, result.ErrMismatch) {
		t.Errorf("live with sim: err %v, want result.ErrMismatch", err)
	}
	if _, err := result.Merge([]result.Input{{Name: "c", Result: c}, {Name: "a", Result: a}}); !errors.Is(err, result.ErrMismatch) {
		t.Errorf("sim with live: err %v, want result.ErrMismatch", err)
	}
}

// at is xs[i], or 0 past its end.
func at(xs []int64, i int) int64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}
