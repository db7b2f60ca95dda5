package redis_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
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
// node) and the 3-node test Cluster: algo=redis-X is this package's script
// for X with time passed in, one round trip per decision; algo=redis-X-batched
// the same through a Batcher (concurrent decisions decided together, one
// script call per batch and slot); algo=redis-rate the go-redis/redis_rate
// peer; algo=evalsha-trivial the ceiling of a script that does nothing
// ("return 1") through go-redis, and case=redis-benchmark the same trivial
// script driven by redis-benchmark -c 32 -P 1. case=serial is one
// goroutine, case=parallel 32 (batching is for concurrent callers: the
// batched cells are parallel only), case=cluster-parallel 32 on the
// Cluster; each goroutine decides its own key. decisions/s is the
// throughput. Compare the ratios, which one run on one machine makes
// meaningful, not the absolute figures.
func BenchmarkDecide(b *testing.B) {
	need(b)
	client := goredis.NewClient(&goredis.Options{Addr: node.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, PoolSize: 2 * benchWorkers})
	defer client.Close()
	clus := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cluster.Addrs(), MaxRetries: -1, ContextTimeoutEnabled: true, PoolSize: 2 * benchWorkers})
	defer clus.Close()
	type cell struct {
		name, cases string
		l           algorithms.Limiter
	}
	var cells []cell
	add := func(name, cases string, client goredis.UniversalClient, opts redis.Options) {
		algo := strings.TrimSuffix(strings.TrimPrefix(name, "redis-"), "-batched")
		if name == redis.RedisRateName {
			algo = name
		}
		l, err := redis.New(algo, client, freshPrefix(), benchPolicy, opts)
		if err != nil {
			b.Fatal(err)
		}
		cells = append(cells, cell{name, cases, l})
	}
	algos := []string{"gcra", "token-bucket", "fixed-window", "sliding-counter", "sliding-log"}
	for _, name := range algos {
		add("redis-"+name, "serial parallel", client, redis.Options{Timeout: time.Second})
	}
	batcher := redis.NewBatcher(client, redis.BatchOptions{})
	defer batcher.Close()
	for _, name := range algos {
		add("redis-"+name+"-batched", "parallel", client, redis.Options{Timeout: time.Second, Batcher: batcher})
	}
	clusBatcher := redis.NewBatcher(clus, redis.BatchOptions{})
	defer clusBatcher.Close()
	add("redis-gcra", "cluster-parallel", clus, redis.Options{Timeout: time.Second})
	for _, name := range []string{"gcra", "sliding-log"} {
		add("redis-"+name+"-batched", "cluster-parallel", clus, redis.Options{Timeout: time.Second, Batcher: clusBatcher})
	}
	add("redis-rate", "serial parallel", client, redis.Options{Timeout: time.Second})
	cells = append(cells, cell{"evalsha-trivial", "serial parallel", trivial{client}})
	for _, c := range cells {
		for _, cs := range strings.Fields(c.cases) {
			workers := benchWorkers
			if cs == "serial" {
				workers = 1
			}
			b.Run("algo="+c.name+"/case="+cs, func(b *testing.B) {
				flush(b, client, clus)
				decide(b, c.l, workers)
			})
		}
	}
	b.Run("algo=evalsha-trivial/case=redis-benchmark", func(b *testing.B) { redisBenchmark(b, client) })
}

// flush empties the servers before a cell, so that the keys of the cells
// before it (which live for their TTL, a minute and more) are not expired
// by the server during it.
func flush(b *testing.B, client *goredis.Client, clus *goredis.ClusterClient) {
	ctx := context.Background()
	err := client.FlushAll(ctx).Err()
	if err == nil {
		err = clus.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error { return c.FlushAll(ctx).Err() })
	}
	if err != nil {
		b.Fatal(err)
	}
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
