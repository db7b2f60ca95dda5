//go:build !race

// Built without -race only: see fit_test.go.

package fit

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
)

// TestNginxPerMinute: nginx keeps `rate=90r/m` as 90*1000/60 = 1500
// thousandths of a request per second, and so do the algorithm (for 90
// per 1m: floor(90*10^12/(60*10^9 ns))) and the model, from the policy's
// interval and from every interval of 90 a minute the search tries; the
// model predicts every decision of the algorithm with `burst=4` (B = 5),
// and a fit of a trace that starts with a burst after idle finds it.
func TestNginxPerMinute(t *testing.T) {
	const nginxRate = 90 * 1000 / 60 // ngx_http_limit_req_zone: rate = n * 1000 / scale, scale 60 for r/m
	p := algorithms.Policy{Limit: 90, Window: time.Minute, Burst: 5}
	m := &nginxModel{}
	for _, interval := range []int64{
		int64(p.Interval()),                          // ceil(60s/90) = 666666667ns
		int64(math.Ceil(6e10 / 90)),                  // the search's interval of a whole rate per minute
		int64(math.Round(float64(time.Minute) / 90)), // a rate read off the data, rounded
	} {
		m.reset(params{interval: interval, burst: p.Burst}, 1)
		if m.rate != nginxRate || m.burst != 4000 {
			t.Errorf("interval %dns: the model keeps rate %d and burst %d thousandths, nginx %d and 4000", interval, m.rate, m.burst, nginxRate)
		}
	}

	// The algorithm at that rate: 5 at once, then a request drains in
	// ceil(1000*1000/1500) = 667 whole ms (at 1499, 668; at 1501 a drain of
	// 2000ms would leave 2 thousandths more, seen below).
	g, err := algorithms.NewNginxLimitReq(p)
	if err != nil {
		t.Fatal(err)
	}
	t0 := 10 * time.Second
	for i := range 6 {
		d, err := g.Allow(t0, "k", 1)
		if err != nil || d.Allowed != (i < 5) {
			t.Fatalf("request %d at t0: %+v, %v; want the first 5 admitted", i, d, err)
		}
		if i == 5 && d.RetryAfter != 667*time.Millisecond {
			t.Fatalf("the 6th at t0: RetryAfter %v, want 667ms", d.RetryAfter)
		}
	}

	// A burst after idle, as a probe starts, then Poisson arrivals at
	// twice the rate for 20 minutes: the model predicts each decision of
	// the algorithm.
	g, _ = algorithms.NewNginxLimitReq(p)
	rng := rand.New(rand.NewPCG(3, 1))
	var reqs []Request
	var rejected int
	decide := func(at time.Duration) {
		d, err := g.Allow(at, "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, Request{Sent: at, Done: at, Key: "k", Admitted: d.Allowed})
		if !d.Allowed {
			rejected++
		}
	}
	for range 10 {
		decide(time.Second)
	}
	for at := time.Second; at < 20*time.Minute; {
		at += time.Duration(rng.ExpFloat64() / 3 * 1e9)
		decide(at)
	}
	m.reset(params{interval: int64(p.Interval()), burst: p.Burst}, 1)
	for i, r := range reqs {
		if pred := m.decide(0, int64(r.Sent)); pred != r.Admitted {
			t.Fatalf("request %d at %v: model %v, algorithm %v", i, r.Sent, pred, r.Admitted)
		}
		m.apply(0, int64(r.Sent), r.Admitted)
	}

	// The fit finds it: 1.5 per second, written as 15 per 10s (the first
	// of 1s, 10s, 1m and 1h in which it is a whole number), a burst of 5.
	res, err := Run(reqs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range res.Fits {
		if f.Algorithm != "nginx-limit-req" || f.Scope != ScopeGlobal {
			continue
		}
		found = true
		if f.AgreementPct < 99.9 || f.Burst != p.Burst || f.Limit*int64(time.Minute) != 90*f.WindowNS {
			t.Errorf("nginx-limit-req fitted as %s at %.2f%%, want 90 per minute with a burst of 5 at >= 99.9%%", f, f.AgreementPct)
		}
		t.Logf("%d requests, %d rejected: %s at %.2f%%; best %s", len(reqs), rejected, f, f.AgreementPct, res.Best)
	}
	if !found {
		t.Fatal("no nginx-limit-req fit")
	}
}
