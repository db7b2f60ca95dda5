package redis_test

import (
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// Two limiters on the same Redis and prefix, as two app replicas would
// hold them, share one quota of 100 per second per key. (Not run: it needs
// a server at localhost:6379; the tests start their own.)
func ExampleNewGCRA() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379", MaxRetries: -1, ContextTimeoutEnabled: true})
	defer client.Close()
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	opts := redis.Options{Timeout: 100 * time.Millisecond}
	replicaA, err := redis.NewGCRA(client, "api", p, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	replicaB, _ := redis.NewGCRA(client, "api", p, opts)
	// Both replicas pass instants on one clock: here, Unix time.
	now := time.Duration(time.Now().UnixNano())
	for _, l := range []*redis.Limiter{replicaA, replicaB} {
		d, err := l.Allow(now, "user-42", 1)
		if err != nil { // the caller's failure policy decides
			fmt.Println("fail closed:", err)
			continue
		}
		fmt.Println(d.Allowed, d.Remaining)
	}
}
