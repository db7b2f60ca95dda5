package redis_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// TestConformance runs the suite every in-memory limiter passes against
// each Redis algorithm, on one node and on a 3-node Cluster, with time
// passed in (ServerTime cannot be scripted: see TestServerTime).
func TestConformance(t *testing.T) {
	need(t)
	for _, b := range backends() {
		for _, name := range redis.Names() {
			if name == redis.RedisRateName {
				continue // reads Redis's clock: TestRedisRate
			}
			e, err := all.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(b.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				cfg := algotest.ForEntry(e)
				cfg.New = func(p algorithms.Policy) (algorithms.Limiter, error) {
					return redis.New(name, b.client, freshPrefix(), p, redis.Options{})
				}
				algotest.Run(t, cfg)
			})
		}
	}
}
