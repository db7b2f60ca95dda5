package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/algorithms/redis/redistest"
	"github.com/ratebench/ratebench/bench/result"
)

func TestBackendFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown scheme", []string{"-backend", "mongo://x"}, 2, "mongo"},
		{"algorithm the backend lacks", []string{"-backend", "sqlite://x.db", "-algos", "gcra"}, 2, "gcra"},
		{"server time in sim mode", []string{"-backend", "redis://127.0.0.1:1", "-algos", "gcra", "-redis-time", "server"}, 2, "live"},
		{"bad redis-time", []string{"-redis-time", "later"}, 2, "-redis-time"},
		{"zero timeout", []string{"-backend-timeout", "0s"}, 2, "-backend-timeout"},
		{"prefix in memory", []string{"-prefix", "team-a"}, 2, "-prefix"},
		{"sim shards on redis", []string{"-backend", "redis://127.0.0.1:1", "-algos", "gcra", "-shard", "1/3"}, 2, "sim shards"},
		// Port 1 on loopback refuses at once: found before the run, so bad
		// input, as an unreachable -url is.
		{"unreachable redis", []string{"-backend", "redis://127.0.0.1:1", "-algos", "gcra", "-backend-timeout", "200ms"}, 2, "cannot be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "-duration", "1s", "-no-report", "-out", filepath.Join(dir, "out")}, tc.args...)
			code, _, stderr := runCLI(t, dir, args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want %d and one line naming %q", code, stderr, tc.code, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Error("the output folder was created")
			}
		})
	}
}

// TestReplicasShareQuotaOnRedis: through the CLI, 4 replicas with local
// state admit 4x, and 4 replicas sharing Redis admit 1x.
func TestReplicasShareQuotaOnRedis(t *testing.T) {
	redistest.Skip(t)
	dir := t.TempDir()
	srv, err := redistest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ratio := func(backend string) float64 {
		out := filepath.Join(dir, strings.NewReplacer(":", "_", "/", "_").Replace(backend))
		code, _, stderr := runCLI(t, dir, "run", "-algos", "sliding-log", "-workload", "constant", "-rate", "800",
			"-limit", "100", "-duration", "5s", "-replicas", "4", "-backend", backend, "-no-report", "-out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		var r result.Result
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		return r.Runs[0].BurstRatio
	}
	local, shared := ratio("memory"), ratio("redis://"+srv.Addr())
	if local != 4 || shared < 0.95 || shared > 1.05 {
		t.Fatalf("burst ratio with 4 replicas: local %.2f, shared Redis %.2f; want 4.00 and 1.00 within 5%%", local, shared)
	}
}
