// Package resulttest holds a result of every kind of run, for the tests of
// the packages that read results (merge, reports).
package resulttest

import (
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// Fixture returns a hand-made boundary result with every feature a report
// shows: a run at 2x its limit, a shaper with a delay histogram, replicas,
// a Redis backend with errors and status codes, and several keys.
func Fixture() *result.Result {
	const bins, binNS = 100, int64(100 * time.Millisecond)
	r := &result.Result{
		Meta: result.Meta{
			Version: "v0.1.0-test", Go: "go1.26.0", GOOS: "linux", GOARCH: "amd64", CPUs: 8, Seed: 7,
			Mode: "sim", StartedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
			Args:      []string{"/tmp/go-build/ratebench", "boundary", "-out", "results/my boundary"},
			ElapsedNS: int64(1500 * time.Millisecond),
		},
		Policy: result.PolicyJSON{Limit: 100, WindowNS: int64(time.Second), Burst: 100},
		Workload: map[string]any{
			"name": "boundary", "limit": int64(100), "window_ns": int64(time.Second),
			"edge_ns": int64(10 * time.Millisecond), "every_windows": 3,
			"duration_ns": int64(10 * time.Second), "keys": 3, "cost": int64(1),
		},
	}
	attack := func(perEdge func(edge int, adm, rej []int64)) result.Series {
		s := result.Series{BinNS: binNS, Admitted: make([]int64, bins), Rejected: make([]int64, bins)}
		for _, edge := range []int{10, 40, 70} {
			perEdge(edge, s.Admitted, s.Rejected)
		}
		return s
	}
	run := func(name string, maxW, theory int64, s result.Series) result.Run {
		var adm, rej int64
		for i := range s.Admitted {
			adm += s.Admitted[i]
			rej += s.Rejected[i]
		}
		return result.Run{
			Algorithm: name, Backend: "memory", Replicas: 1,
			Offered: adm + rej, Admitted: adm, Rejected: rej, OfferedCost: adm + rej, AdmittedCost: adm, RejectedCost: rej,
			MaxAdmittedInWindow: maxW, MaxWindowEndNS: int64(1009 * time.Millisecond), MaxWindowSpanNS: int64(19 * time.Millisecond),
			TheoryMaxInWindow: theory, BurstRatio: float64(maxW) / 100, TheoryRatio: float64(theory) / 100,
			DisagreementPct: 0, JainFairness: 1, ThroughputPerS: float64(adm) / 10, Series: s, KeyCount: 1,
		}
	}
	tb := run("token-bucket", 102, 200, attack(func(e int, a, j []int64) { a[e-1], a[e], j[e] = 100, 2, 98 }))
	tb.DisagreementPct, tb.FalseAdmits = 0.67, 4
	fw := run("fixed-window", 200, 200, attack(func(e int, a, j []int64) { a[e-1], a[e] = 100, 100 }))
	fw.DisagreementPct, fw.FalseAdmits = 16.667, 100
	fw.MaxWindowEndNS = int64(1009*time.Millisecond) + 999
	lq := run("leaky-queue", 100, 101, attack(func(e int, a, j []int64) {
		for b := e - 1; b < e+9; b++ {
			a[b] = 10
		}
		j[e] = 100
	}))
	lq.Latency, lq.LatencyHDR = Delays(300)
	sl := run("sliding-log", 200, 100, attack(func(e int, a, j []int64) { a[e-1], a[e] = 100, 100 }))
	sl.Replicas, sl.DisagreementPct = 2, -1
	sl.MaxAdmittedInWindow, sl.BurstRatio = 200, 2
	sc := run("sliding-counter", 100, 100, attack(func(e int, a, j []int64) { a[e-1], j[e] = 100, 100 }))
	sc.Backend, sc.Errors = "redis", 3
	sc.MaxAdmittedInWindow, sc.BurstRatio = 150, 1.5 // above its theory: the table and reading flag it
	sc.ErrorKinds = map[string]int64{"timeout": 3}
	sc.StatusCodes = map[string]int64{"200": 297, "429": 300, "503": 3}
	sc.Keys = []result.KeyCount{{Key: "k0", Offered: 200, Admitted: 150}, {Key: "k1", Offered: 200, Admitted: 100}, {Key: "k2", Offered: 200, Admitted: 50}}
	sc.KeyCount, sc.JainFairness = 3, result.Jain([]int64{150, 100, 50})
	r.Runs = []result.Run{tb, fw, lq, sl, sc}
	return r
}

// Delays returns percentiles and an encoded histogram of n shaper delays
// spread from 10ms to 1s, with a tail.
func Delays(n int) (*result.Percentiles, string) {
	h := result.NewHistogram()
	for i := range n {
		_ = h.RecordValue(int64(i%100+1) * int64(10*time.Millisecond))
	}
	_ = h.RecordValue(int64(3 * time.Second))
	return result.PercentilesOf(h), result.EncodeHistogram(h)
}

// Values returns percentiles and an encoded histogram of vals (ns).
func Values(vals ...int64) (*result.Percentiles, string) {
	h := result.NewHistogram()
	for _, v := range vals {
		_ = h.RecordValue(v)
	}
	return result.PercentilesOf(h), result.EncodeHistogram(h)
}
