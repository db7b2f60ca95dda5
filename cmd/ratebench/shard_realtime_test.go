//go:build !race

package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms/redis/redistest"
	"github.com/ratebench/ratebench/bench/result"
)

// TestAttackShardsMatchServer runs three attack shards of one schedule
// against one server, started at one instant: merged, their 200s and 429s
// are the server's admitted and rejected.
func TestAttackShardsMatchServer(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "20", "-window", "1s", "-key", "header:X-Key")
	dir := t.TempDir()
	dirs := runShards(t, dir, 3, 300*time.Millisecond, func(shard []string) (int, string, string) {
		return attackCLI(t, context.Background(), append([]string{"-url", s.url + "/api", "-rate", "300", "-workload", "poisson",
			"-keys", "9", "-key-header", "X-Key", "-duration", "600ms", "-seed", "5", "-no-report"}, shard...)...)
	})
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
	var held int64
	for _, d := range dirs {
		r, err := result.ReadFile(filepath.Join(d, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		held += r.Runs[0].Latency.Count
	}
	if run.Latency == nil || run.Latency.Count != held || held != run.Offered {
		t.Errorf("merged latency histogram holds %v values; the shards' hold %d, offered %d", run.Latency, held, run.Offered)
	}
	if got := run.StatusCodes["200"]; got != admitted || run.Admitted != admitted || admitted == 0 {
		t.Errorf("merged shards: %d 200s (admitted %d); server admitted %d", got, run.Admitted, admitted)
	}
	if got := run.StatusCodes["429"]; got != rejected || run.Rejected != rejected {
		t.Errorf("merged shards: %d 429s (rejected %d); server rejected %d", got, run.Rejected, rejected)
	}
}

// TestLiveShardsShareRedis: three live shards of a one-key schedule, each
// sending a third of its arrivals to one Redis under one -prefix, admit
// what one process sending them all admits, within the timing
// uncertainty: the state they share is one limiter's.
func TestLiveShardsShareRedis(t *testing.T) {
	redistest.Skip(t)
	dir := t.TempDir()
	srv, err := redistest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	args := []string{"run", "-mode", "live", "-algos", "gcra", "-limit", "50", "-window", "1s", "-workload", "constant",
		"-rate", "300", "-duration", "2s", "-backend", "redis://" + srv.Addr(), "-trace", "-no-report"}
	whole := filepath.Join(dir, "whole")
	if code, _, stderr := runCLI(t, dir, append(slices.Clone(args), "-out", whole)...); code != 0 {
		t.Fatalf("one process: exit %d: %s", code, stderr)
	}
	dirs := runShards(t, dir, 3, 500*time.Millisecond, func(shard []string) (int, string, string) {
		return runCLI(t, dir, append(append(slices.Clone(args), "-prefix", "ratebench-test:shared"), shard...)...)
	})
	merged := filepath.Join(dir, "merged")
	if code, _, stderr := runCLI(t, dir, append(append([]string{"merge"}, dirs...), "-out", merged)...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	one, err := result.ReadFile(filepath.Join(whole, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := result.ReadFile(filepath.Join(merged, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	w, m := one.Runs[0], all.Runs[0]
	// A decision instant off by d moves at most L*d/W admits across the
	// run's end; the shards' instants are off by their lateness.
	var off time.Duration
	for _, r := range []result.Run{w, m} {
		off = max(off, time.Duration(r.Live.Lateness.P99), time.Duration(r.Live.StartLagNS))
	}
	tol := 2 + int64(math.Ceil(50*off.Seconds()))
	t.Logf("one process admitted %d of %d; three shards %d of %d (tolerance %d, lateness p99 and start lag up to %v)",
		w.Admitted, w.Offered, m.Admitted, m.Offered, tol, off)
	if m.Live.Scheduled != w.Live.Scheduled || m.Admitted < w.Admitted-tol || m.Admitted > w.Admitted+tol {
		t.Errorf("three shards on one Redis admitted %d of %d scheduled; one process %d of %d; want the same schedule, admitted within %d",
			m.Admitted, m.Live.Scheduled, w.Admitted, w.Live.Scheduled, tol)
	}
	if m.MaxAdmittedInWindow > w.MaxAdmittedInWindow+tol {
		t.Errorf("three shards admitted up to %d in a window, one process %d: they did not share the state", m.MaxAdmittedInWindow, w.MaxAdmittedInWindow)
	}
}

// runShards runs n shards of one schedule at once, started start from
// now: run gets each shard's -out, -shard, -start-at and -max-start-lag
// flags and returns the exit code, stdout and stderr. It returns their
// folders, dir/shard-i, after every shard exited 0.
func runShards(t *testing.T, dir string, n int, start time.Duration, run func(shard []string) (int, string, string)) []string {
	t.Helper()
	at := strconv.FormatInt(time.Now().Add(start).UnixNano(), 10)
	dirs := make([]string, n)
	codes := make([]int, n)
	stderrs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		wg.Go(func() {
			codes[i], _, stderrs[i] = run([]string{"-out", dirs[i], "-shard", fmt.Sprintf("%d/%d", i, n), "-start-at", at, "-max-start-lag", "1s"})
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, codes[i], stderrs[i])
		}
	}
	return dirs
}
