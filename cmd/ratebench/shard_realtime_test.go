//go:build !race

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// TestAttackShardsMatchServer runs three attack shards of one schedule
// against one server, started at one instant: merged, their 200s and 429s
// are the server's admitted and rejected.
func TestAttackShardsMatchServer(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "20", "-window", "1s", "-key", "header:X-Key")
	dir := t.TempDir()
	const n = 3
	at := strconv.FormatInt(time.Now().Add(300*time.Millisecond).UnixNano(), 10)
	dirs := make([]string, n)
	codes := make([]int, n)
	stderrs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		wg.Go(func() {
			codes[i], _, stderrs[i] = attackCLI(t, context.Background(), "-url", s.url+"/api", "-rate", "300", "-workload", "poisson",
				"-keys", "9", "-key-header", "X-Key", "-duration", "600ms", "-seed", "5", "-no-report", "-out", dirs[i],
				"-shard", fmt.Sprintf("%d/%d", i, n), "-start-at", at, "-max-start-lag", "1s")
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, codes[i], stderrs[i])
		}
	}
	_, totalsLine := s.stop(t)
	admitted, rejected := totals(t, totalsLine)
	out := filepath.Join(dir, "merged")
	code, _, stderr := runCLI(t, dir, append(append([]string{"merge"}, dirs...), "-out", out)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if got := run.StatusCodes["200"]; got != admitted || run.Admitted != admitted || admitted == 0 {
		t.Errorf("merged shards: %d 200s (admitted %d); server admitted %d", got, run.Admitted, admitted)
	}
	if got := run.StatusCodes["429"]; got != rejected || run.Rejected != rejected {
		t.Errorf("merged shards: %d 429s (rejected %d); server rejected %d", got, run.Rejected, rejected)
	}
}
