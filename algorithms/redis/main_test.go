package redis_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms/redis/redistest"
)

// The servers every test of the package shares, started by TestMain.
var (
	node       *redistest.Server
	cluster    *redistest.Cluster
	nodeClient goredis.UniversalClient
	clusClient goredis.UniversalClient
	setupErr   error // why the servers did not start
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if redistest.Missing() == "" {
		dir, err := redistest.TempDir()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		setupErr = start(dir)
		defer stop()
	}
	return m.Run()
}

func start(dir string) error {
	var err error
	if node, err = redistest.Start(dir); err != nil {
		return err
	}
	if cluster, err = redistest.StartCluster(dir, 3); err != nil {
		return err
	}
	nodeClient = goredis.NewClient(&goredis.Options{Addr: node.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cluster.Addrs(), MaxRetries: -1, ContextTimeoutEnabled: true})
	clusClient = cc
	return cc.ForEachShard(context.Background(), func(ctx context.Context, c *goredis.Client) error {
		return c.Ping(ctx).Err()
	})
}

func stop() {
	for _, c := range []goredis.UniversalClient{nodeClient, clusClient} {
		if c != nil {
			c.Close()
		}
	}
	if node != nil {
		node.Stop()
	}
	if cluster != nil {
		cluster.Stop()
	}
}

// need skips tb without redis-server (fails it under
// RATEBENCH_REQUIRE_REDIS=1) and fails it when the servers did not start.
func need(tb testing.TB) {
	tb.Helper()
	redistest.Skip(tb)
	if setupErr != nil {
		tb.Fatal(setupErr)
	}
}

// backends are the two deployments every limiter is tested on.
func backends() []struct {
	name   string
	client goredis.UniversalClient
} {
	return []struct {
		name   string
		client goredis.UniversalClient
	}{{"node", nodeClient}, {"cluster", clusClient}}
}

var prefixes atomic.Int64

// freshPrefix returns a key prefix no other limiter of this process uses,
// so that every New starts from empty state.
func freshPrefix() string {
	return fmt.Sprintf("test:%d:%d", time.Now().UnixNano(), prefixes.Add(1))
}
