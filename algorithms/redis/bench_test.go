package redis_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// benchWorkers is the concurrency of the parallel cells: 32 goroutines,
// like redis-benchmark -c 32 below.
const benchWorkers = 32

// benchPolicy keeps about half the decisions rejections at full speed.
var benchPolicy = algorithms.Policy{Limit: 100000, Window: time.Second}

// BenchmarkDecide measures decisions through the local test server (one
// node): algo=redis-X is this package's script for X with time passed in,
// algo=redis-rate the go-redis/redis_rate peer, algo=evalsha-trivial the
// ceiling of a script that does nothing ("return 1") through go-redis, and
// case=redis-benchmark the same trivial script driven by redis-benchmark -c
// 32 -P 1. case=serial is one goroutine, case=parallel 32; decisions/s is
// the throughput. Compare the ratios, which one run on one machine makes
// meaningful, not the absolute figures.
func BenchmarkDecide(b *testing.B) {
	need(b)
	client := goredis.NewClient(&goredis.Options{Addr: node.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, PoolSize: 2 * benchWorkers})
	defer client.Close()
	type cell struct {
		name string
		l    algorithms.Limiter
	}
	var cells []cell
	for _, name := range []string{"gcra", "token-bucket", "fixed-window", "sliding-counter", "sliding-log"} {
		l, err := redis.New(name, client, freshPrefix(), benchPolicy, redis.Options{Timeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		cells = append(cells, cell{"redis-" + name, l})
	}
	batcher := redis.NewBatcher(client, redis.BatchOptions{})
	defer batcher.Close()
	for _, name := range []string{"gcra", "sliding-log"} {
		l, err := redis.New(name, client, freshPrefix(), benchPolicy, redis.Options{Timeout: time.Second, Batcher: batcher})
		if err != nil {
			b.Fatal(err)
		}
		cells = append(cells, cell{"redis-" + name + "-batched", l})
	}
	rr, err := redis.NewRedisRate(client, freshPrefix(), benchPolicy, redis.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	cells = append(cells, cell{"redis-rate", rr}, cell{"evalsha-trivial", trivial{client}})
	for _, c := range cells {
		b.Run("algo="+c.name+"/case=serial", func(b *testing.B) { decide(b, c.l, 1) })
		b.Run("algo="+c.name+"/case=parallel", func(b *testing.B) { decide(b, c.l, benchWorkers) })
	}
	b.Run("algo=evalsha-trivial/case=redis-benchmark", func(b *testing.B) { redisBenchmark(b, client) })
}

// decide runs b.N decisions over workers goroutines, each on its own key,
// at the wall clock's instant.
func decide(b *testing.B, l algorithms.Limiter, workers int) {
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	b.ResetTimer()
	for w := range workers {
		key := "bench-" + strconv.Itoa(w)
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if _, err := l.Allow(time.Since(start), key, 1); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// trivial runs a script that only returns 1, through go-redis.
type trivial struct{ c goredis.UniversalClient }

var trivialScript = goredis.NewScript("return 1")

func (t trivial) Allow(time.Duration, string, int64) (algorithms.Decision, error) {
	err := trivialScript.Run(context.Background(), t.c, nil).Err()
	return algorithms.Decision{Allowed: true}, err
}

var rpsRE = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark runs redis-benchmark -c 32 -P 1 EVALSHA <trivial> 0 for
// b.N requests (skipped when redis-benchmark is not on PATH).
func redisBenchmark(b *testing.B, client goredis.UniversalClient) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		b.Skip("redis-benchmark is not on PATH")
	}
	sha, err := trivialScript.Load(context.Background(), client).Result()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	out, err := exec.Command("redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(node.Port),
		"-n", strconv.Itoa(max(b.N, benchWorkers)), "-c", strconv.Itoa(benchWorkers), "-P", "1", "-q",
		"EVALSHA", sha, "0").CombinedOutput()
	b.StopTimer()
	if err != nil {
		b.Fatalf("redis-benchmark: %v: %s", err, out)
	}
	m := rpsRE.FindSubmatch(out)
	if m == nil {
		b.Fatalf("redis-benchmark said %q", out)
	}
	rps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rps, "decisions/s")
}
