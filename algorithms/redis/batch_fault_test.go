//go:build !race

package redis_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
	"github.com/ratebench/ratebench/algorithms/redis/redistest"
)

// TestBatchFailure: while the server is frozen (batches time out) or dead
// (their connection fails), each decision of the failed batches fails, once,
// with a timeout or a backend error, also those queued behind them; once
// the server is back, decisions succeed again through the same Batcher.
func TestBatchFailure(t *testing.T) {
	need(t)
	srv, err := redistest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	redis.SetClientLog(io.Discard) // "failed to dial", by design here
	client := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, DialerRetries: 1, PoolSize: 16})
	t.Cleanup(func() { client.Close() })
	batcher := redis.NewBatcher(client, redis.BatchOptions{MaxBatch: 16})
	t.Cleanup(func() { batcher.Close() })
	l, err := redis.NewGCRA(client, freshPrefix(), algorithms.Policy{Limit: 1000, Window: time.Second}, redis.Options{Timeout: 200 * time.Millisecond, Batcher: batcher})
	if err != nil {
		t.Fatal(err)
	}
	const n = 64 // four full batches at least
	type tally struct{ ok, timeouts, backend, other int64 }
	burst := func() tally {
		var ok, timeouts, backend, other atomic.Int64
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, err := l.Allow(0, "k", 1)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, algorithms.ErrBackend) && errors.Is(err, context.DeadlineExceeded):
					timeouts.Add(1)
				case errors.Is(err, algorithms.ErrBackend):
					backend.Add(1)
				default:
					other.Add(1)
				}
			})
		}
		wg.Wait()
		return tally{ok.Load(), timeouts.Load(), backend.Load(), other.Load()}
	}
	recover := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := l.Allow(0, "probe", 1); err == nil {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("no recovery within 5s: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := burst(); got != (tally{ok: n}) {
		t.Fatalf("server up: %+v, want %d decided", got, n)
	}
	if err := srv.Pause(); err != nil {
		t.Skip(err)
	}
	got := burst()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if got != (tally{timeouts: n}) {
		t.Fatalf("server frozen: %+v, want %d timeouts", got, n)
	}
	recover()
	srv.Stop()
	got = burst()
	if got.ok != 0 || got.other != 0 || got.timeouts+got.backend != n {
		t.Fatalf("server dead: %+v, want %d backend errors (or timeouts)", got, n)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	recover()
	if got := burst(); got != (tally{ok: n}) {
		t.Fatalf("server back: %+v, want %d decided", got, n)
	}
}
