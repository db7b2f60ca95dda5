package fit_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// TestFitVerdicts: the best fit names every model that decides alike on
// the trace, says whether denied requests count only when the trace can
// tell, and is sure only when one kind of model explains the trace.
func TestFitVerdicts(t *testing.T) {
	poisson := func(rate float64) workload.Source {
		return &workload.Poisson{Rate: rate, Duration: 30 * time.Second, Keys: 1, Cost: 1, Seed: 5}
	}
	no := false
	for _, tc := range []struct {
		why        string
		algo       string
		p          algorithms.Policy
		spec       workload.Source
		equivalent []string // all of these among Best.Equivalent
		denied     *bool
		confidence string
		doubt      string // in one of the doubts
		unsureOf   string // among the parts the doubts concern
	}{
		{why: "x/time/rate is a token bucket: the bucket family decides alike, and its denials count for nothing",
			algo: "x-rate", p: algorithms.Policy{Limit: 20, Window: time.Second, Burst: 7}, spec: poisson(40),
			equivalent: []string{"gcra", "token-bucket", "leaky-bucket", "x-rate", "nginx-limit-req"}, denied: &no, confidence: result.Sure},
		{why: "a window opened by a first request admits the same whether or not it counts denials",
			algo: "fixed-window-first", p: algorithms.Policy{Limit: 30, Window: 2 * time.Second}, spec: poisson(30),
			equivalent: []string{"fixed-window-first"}, confidence: result.Sure},
		{why: "a window that is not a whole second is found as it is",
			algo: "fixed-window", p: algorithms.Policy{Limit: 40, Window: 1500 * time.Millisecond}, spec: poisson(53),
			equivalent: []string{"fixed-window"}, confidence: result.Sure},
		{why: "starved from its first burst on, a log of every request admits what any model with that capacity would: nothing tells them apart",
			algo: "sliding-log-all", p: algorithms.Policy{Limit: 25, Window: 2 * time.Second}, spec: poisson(25),
			equivalent: []string{"sliding-log-all", "gcra", "fixed-window"}, confidence: result.Unsure, doubt: "cannot tell", unsureOf: fit.PartModel},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			res, err := fit.Run(simTrace(t, tc.algo, tc.p, tc.spec), fit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b := res.Best
			t.Logf("%s", res.Sentence())
			for _, name := range tc.equivalent {
				if !slices.Contains(b.Equivalent, name) {
					t.Errorf("%s: equivalent %v lacks %s", tc.why, b.Equivalent, name)
				}
			}
			switch {
			case tc.denied == nil && b.CountsDenied != nil:
				t.Errorf("%s: counts denied %v, want unknown", tc.why, *b.CountsDenied)
			case tc.denied != nil && (b.CountsDenied == nil || *b.CountsDenied != *tc.denied):
				t.Errorf("%s: counts denied %v, want %v", tc.why, b.CountsDenied, *tc.denied)
			}
			if res.Confidence != tc.confidence {
				t.Errorf("%s: confidence %q %q, want %q", tc.why, res.Confidence, res.Doubts, tc.confidence)
			}
			if tc.unsureOf != "" && !slices.Contains(res.UnsureOf, tc.unsureOf) {
				t.Errorf("%s: unsure of %q, want %s among them", tc.why, res.UnsureOf, tc.unsureOf)
			}
			if tc.confidence == result.Sure && len(res.UnsureOf) > 0 {
				t.Errorf("%s: sure, yet unsure of %q", tc.why, res.UnsureOf)
			}
			if tc.doubt != "" && !strings.Contains(strings.Join(res.Doubts, "\n"), tc.doubt) {
				t.Errorf("%s: doubts %q, want one saying %q", tc.why, res.Doubts, tc.doubt)
			}
			if !strings.Contains(res.Sentence(), "scope cannot be told") {
				t.Errorf("one client's trace, and the sentence claims a scope: %s", res.Sentence())
			}
		})
	}
}

// TestFitOutsider: a limiter no model describes (a window on the clock
// whose limit halves after every rejection, to no less than a floor, and
// comes back after an idle window) is explained by no model: when the
// best model predicts too little, and when it predicts nearly all but
// gets requests wrong that no timing would explain.
func TestFitOutsider(t *testing.T) {
	for _, tc := range []struct {
		why   string
		rate  float64 // per second, Poisson
		pause int     // one arrival in pause is followed by two idle windows
		floor int64
		doubt string // in the doubts
	}{
		{why: "overloaded, with a floor of 5: the best predicts under 95%", rate: 45, pause: 400, floor: 5, doubt: "predicts under 95%"},
		{why: "overloaded, with a floor of 1: the best predicts over 95%, with misses far from its edges", rate: 100, pause: 2000, floor: 1, doubt: "timing does not explain"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			res, err := fit.Run(halvingTrace(tc.rate, tc.pause, tc.floor), fit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", res.Sentence())
			if res.Confidence != result.Unexplained {
				t.Errorf("confidence %q, want %q: %s", res.Confidence, result.Unexplained, res.Sentence())
			}
			if !strings.Contains(strings.Join(res.Doubts, "\n"), tc.doubt) {
				t.Errorf("doubts %q, want one saying %q", res.Doubts, tc.doubt)
			}
		})
	}
}

// halvingTrace is 30s of Poisson arrivals at rate per second through a
// window of 1s on the clock whose limit starts at 40, halves (to no less
// than floor) at every rejection, and is 40 again after an idle window;
// answers take 1ms.
func halvingTrace(rate float64, pause int, floor int64) []fit.Request {
	const w = time.Second
	limit, start, count, last := int64(40), time.Duration(-1), int64(0), time.Duration(-w)
	rng := rand.New(rand.NewPCG(7, 8))
	var reqs []fit.Request
	for at := time.Duration(0); at < 30*time.Second; at += time.Duration(rng.ExpFloat64() / rate * 1e9) {
		if at-last > w {
			limit = 40
		}
		last = at
		if at >= start+w {
			start, count = at.Truncate(w), 0
		}
		ok := count < limit
		if ok {
			count++
		} else {
			limit = max(limit/2, floor)
		}
		reqs = append(reqs, fit.Request{Sent: at, Done: at + time.Millisecond, Key: "k", Admitted: ok})
		if rng.IntN(pause) == 0 { // now and then a pause, to bring the limit back
			at += 2 * w
		}
	}
	return reqs
}

// TestFitRateTimingDoubt: answers slower than the interval between two
// requests at a bucket's rate blur its burst and rate by a request or
// more, and the fit says so: unsure of the policy. Answers well inside
// that interval leave it sure.
func TestFitRateTimingDoubt(t *testing.T) {
	for _, tc := range []struct {
		answer time.Duration
		sure   bool
	}{
		{answer: time.Millisecond, sure: true},
		{answer: 25 * time.Millisecond}, // over the 20ms between two requests
	} {
		t.Run(tc.answer.String(), func(t *testing.T) {
			reqs := simTrace(t, "gcra", algorithms.Policy{Limit: 50, Window: time.Second, Burst: 20},
				&workload.Poisson{Rate: 55, Duration: 30 * time.Second, Keys: 1, Cost: 1, Seed: 5})
			for i := range reqs {
				reqs[i].Done = reqs[i].Sent + tc.answer
			}
			res, err := fit.Run(reqs, fit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			said := slices.ContainsFunc(res.Doubts, func(d string) bool { return strings.Contains(d, "between two requests at its rate") })
			if tc.sure {
				if res.Confidence != result.Sure || said {
					t.Errorf("confidence %q (%q), want sure", res.Confidence, res.Doubts)
				}
				return
			}
			if res.Confidence != result.Unsure || !slices.Contains(res.UnsureOf, fit.PartPolicy) || !said {
				t.Errorf("confidence %q, unsure of %q (%q), want unsure of the policy, for the answers' time", res.Confidence, res.UnsureOf, res.Doubts)
			}
		})
	}
}

// TestFitTimingDoubt: answers slower than a fiftieth of the window leave
// the fit unsure of the window's length and limit only: -expect still
// contradicts a model the service is not, and cannot tell a limit one off.
func TestFitTimingDoubt(t *testing.T) {
	reqs := simTrace(t, "fixed-window", algorithms.Policy{Limit: 40, Window: time.Second},
		&workload.Poisson{Rate: 53, Duration: 30 * time.Second, Keys: 1, Cost: 1, Seed: 5})
	for i := range reqs {
		reqs[i].Done = reqs[i].Sent + 30*time.Millisecond
	}
	res, err := fit.Run(reqs, fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Confidence != result.Unsure || !slices.Equal(res.UnsureOf, []string{fit.PartPolicy}) {
		t.Fatalf("confidence %q, unsure of %q (%q), want unsure of the policy alone", res.Confidence, res.UnsureOf, res.Doubts)
	}
	for _, tc := range []struct {
		expect string
		want   int
	}{
		{expect: "sliding-log 40/1s", want: fit.ExpectContradicted},
		{expect: "fixed-window 41/1s", want: fit.ExpectUnknown},
		{expect: "fixed-window 40/1s", want: fit.ExpectMatch},
	} {
		e, err := fit.ParseExpectation(tc.expect)
		if err != nil {
			t.Fatal(err)
		}
		if got, say := e.Check(res); got != tc.want {
			t.Errorf("-expect %q: %d %q, want %d", tc.expect, got, say, tc.want)
		}
	}
}
