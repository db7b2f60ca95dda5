package benchtest_test

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/benchtest"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/workload"
)

// BenchmarkOwnLimiter shows benchtest.BenchmarkSpec in a user's
// `go test -bench`: ns/op per arrival, plus admitted/op and burst-ratio as
// metrics.
func BenchmarkOwnLimiter(b *testing.B) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	benchtest.BenchmarkSpec(b, bench.Config{Policy: p}, workload.Spec{Name: "poisson", Rate: 150, Seed: 1}, call.Target{Name: "gcra", Theory: 2 * p.Limit, New: func() (algorithms.Limiter, error) {
		return algorithms.NewGCRA(p)
	}})
}
