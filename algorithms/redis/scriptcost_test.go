package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// BenchmarkScriptCost measures what each script costs inside Redis, from
// INFO commandstats: the server's time in EVALSHA divided by the decisions
// those calls made (metric "redis-us/decision"), and the decisions per
// call. The figures are the server's, not the client's: they do not depend
// on the round trip, but on a busy machine they include the time the
// server waited for a CPU, so the client is one goroutine. case=single
// sends one decision per call, case=batched batches of 32 (one decision of
// each of 32 keys, as 32 busy goroutines through a Batcher send them). Run
// it alone (-bench BenchmarkScriptCost): the statistics are the server's,
// reset by each cell.
func BenchmarkScriptCost(b *testing.B) {
	need(b)
	client := goredis.NewClient(&goredis.Options{Addr: node.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, PoolSize: 2 * benchWorkers})
	defer client.Close()
	opts := redis.Options{Timeout: time.Second}
	for _, name := range redis.Names() {
		l, err := redis.New(name, client, freshPrefix(), benchPolicy, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("algo="+name+"/case=single", func(b *testing.B) { scriptCost(b, client, l, 1) })
	}
	for _, name := range redis.Names() {
		if name == redis.RedisRateName {
			continue // not batched
		}
		l, err := redis.New(name, client, freshPrefix(), benchPolicy, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("algo="+name+"/case=batched", func(b *testing.B) { scriptCost(b, client, batches{client, l.(*redis.Limiter)}, 1) })
	}
}

// batches decides benchWorkers decisions at a time, one per key, as one
// batch (DecideBatch): what 32 goroutines through a Batcher send when
// every batch is full, without their contention for the CPU, which would
// count in the server's time on a small machine. The decisions of one batch
// share one instant.
type batches struct {
	c goredis.UniversalClient
	l *redis.Limiter
}

// Allow decides keys bench-0 to bench-31 at now, and returns the first
// decision.
func (bs batches) Allow(now time.Duration, _ string, cost int64) (algorithms.Decision, error) {
	steps := make([]redis.BatchStep, benchWorkers)
	for i := range steps {
		steps[i] = redis.BatchStep{L: bs.l, At: now, Key: "bench-" + strconv.Itoa(i), Cost: cost}
	}
	d, err := redis.DecideBatch(bs.c, steps)
	if err != nil {
		return algorithms.Decision{}, err
	}
	return d[0], nil
}

// scriptCost runs decide (or, for batches, one batch per 32 decisions)
// with the server's statistics reset before and read after.
func scriptCost(b *testing.B, client *goredis.Client, l algorithms.Limiter, workers int) {
	ctx := context.Background()
	if err := client.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	decisions := b.N
	if bs, ok := l.(batches); ok {
		start := time.Now()
		decisions = 0
		for decisions < b.N {
			if _, err := bs.Allow(time.Since(start), "", 1); err != nil {
				b.Fatal(err)
			}
			decisions += benchWorkers
		}
	} else {
		decide(b, l, workers)
	}
	b.StopTimer()
	info, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	calls, usec := evalshaStats(b, info)
	if testing.Verbose() {
		b.Log(info)
	}
	if calls == 0 {
		b.Fatalf("no EVALSHA in %q", info)
	}
	b.ReportMetric(usec/float64(decisions), "redis-us/decision")
	b.ReportMetric(float64(decisions)/calls, "decisions/call")
}

// evalshaStats returns the calls and microseconds of EVALSHA (with EVAL,
// which go-redis falls back to on NOSCRIPT) in INFO commandstats.
func evalshaStats(b *testing.B, info string) (calls, usec float64) {
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "cmdstat_evalsha" && name != "cmdstat_eval" {
			continue
		}
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				calls += x
			case "usec":
				usec += x
			}
		}
	}
	return calls, usec
}
