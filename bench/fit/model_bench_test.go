package fit

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// BenchmarkScore replays one trace through each model at the policy it
// was simulated with, as the search does once per candidate policy: the
// fit's cost per request, model by model. Answers take up to a
// millisecond, so that some requests group and some are too close to
// call, as in a probe.
func BenchmarkScore(b *testing.B) {
	p := algorithms.Policy{Limit: 50, Window: time.Second, Burst: 20}
	for _, f := range families {
		b.Run("model="+f.name, func(b *testing.B) {
			e, err := all.Lookup(f.name)
			if err != nil {
				b.Fatal(err)
			}
			var reqs rowsOf
			spec := &workload.Poisson{Rate: 6 * p.Rate(), Duration: 20 * time.Second, Keys: 3, Cost: 1, Seed: 9}
			cfg := bench.Config{Policy: p, Workload: spec, Trace: &reqs}
			tgt := call.Target{Name: f.name, New: func() (algorithms.Limiter, error) { return e.New(p) }}
			if _, err := bench.Simulate(context.Background(), cfg, []call.Target{tgt}); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range reqs {
				reqs[i].Done = reqs[i].Sent + time.Duration(rng.Int64N(int64(time.Millisecond)))
			}
			d := newData(reqs, 0, Options{})
			s := d.scopes[0]
			pp := params{interval: int64(p.Interval()), burst: p.WithDefaults().Burst, limit: p.Limit, window: int64(p.Window)}
			m := f.new()
			var counts groupCounts
			own := make([]bool, len(d.t))
			for b.Loop() {
				d.score(m, pp, s, &counts, own, nil, math.MaxInt64)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(d.t)), "ns/request")
		})
	}
}
