package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
	"github.com/ratebench/ratebench/algorithms/redis/redistest"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// startRedis starts a one-node redis-server for t and stops it after.
func startRedis(t *testing.T) *redistest.Server {
	t.Helper()
	redistest.Skip(t)
	s, err := redistest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// startCluster starts a 3-node Redis Cluster for t and stops it after.
func startCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	redistest.Skip(t)
	c, err := redistest.StartCluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func backendTargets(t *testing.T, names []string, p algorithms.Policy, keys, replicas int, url string, opts backend.Options) []call.Target {
	t.Helper()
	targets, closeFn, err := backend.Targets(names, p, keys, replicas, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closeFn(); err != nil {
			t.Error(err)
		}
	})
	return targets
}

func simRuns(t *testing.T, cfg bench.Config, targets []call.Target) []result.Run {
	t.Helper()
	runs, err := bench.Simulate(context.Background(), cfg, targets)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestParseBackend(t *testing.T) {
	for _, tc := range []struct {
		in, kind string
		bad      bool // wraps ErrBadBackend
	}{
		{"memory", backend.Memory, false},
		{"", backend.Memory, false},                                 // the flag's zero value
		{"redis://127.0.0.1:6379", backend.Redis, false},            // host and port
		{"redis://u:secret@localhost:6379/2", backend.Redis, false}, // password and database
		{"rediss://localhost:6380?dial_timeout=2s", backend.Redis, false},
		{"redis+cluster://h1:7000,h2:7001,h3:7002", backend.RedisCluster, false},
		{"rediss+cluster://u:p@h1:7000,h2:7001?pool_size=64", backend.RedisCluster, false},
		{"sqlite:///tmp/limits.db", backend.SQLite, false}, // absolute path
		{"sqlite://limits.db", backend.SQLite, false},      // relative path
		{"postgres://localhost", "", true},                 // unknown scheme
		{"localhost:6379", "", true},                       // no scheme
		{"redis://localhost:6379/x", "", true},             // bad database
		{"redis://localhost:6379?nonsense=1", "", true},    // unknown option
		{"redis+cluster://h1:7000,,h2:7001", "", true},     // empty host
		{"redis+cluster://h1:7000/3", "", true},            // a cluster has db 0 only
		{"sqlite://", "", true},                            // no path
		{"sqlite://a?b", "", true},                         // '?' in path
	} {
		b, err := backend.Parse(tc.in)
		if tc.bad {
			if !errors.Is(err, backend.ErrBad) {
				t.Errorf("ParseBackend(%q) = %+v, %v; want ErrBadBackend", tc.in, b, err)
			}
			continue
		}
		if err != nil || b.Kind != tc.kind {
			t.Errorf("ParseBackend(%q) = %q, %v; want %q", tc.in, b.Kind, err, tc.kind)
		}
	}
	if b, _ := backend.Parse("redis://u:secret@localhost:6379"); b.Display != "redis://u:xxxxx@localhost:6379" {
		t.Errorf("Display = %q, want the password hidden", b.Display)
	}
}

func TestBackendTargetsErrors(t *testing.T) {
	redis.SetClientLog(io.Discard) // "failed to dial", by design here
	p := algorithms.Policy{Limit: 10, Window: time.Second}
	dir := t.TempDir()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "redis://" + l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		name    string
		algos   []string
		backend string
		opts    backend.Options
		want    error
	}{
		{"sqlite has only fixed-window", []string{"gcra"}, "sqlite://" + filepath.Join(dir, "a.db"), backend.Options{}, backend.ErrBad},
		{"redis has no leaky bucket", []string{"leaky-bucket"}, closed, backend.Options{}, backend.ErrBad},
		{"redis-rate in virtual time", []string{"redis-rate"}, closed, backend.Options{}, backend.ErrBad},
		{"server time in virtual time", []string{"gcra"}, closed, backend.Options{ServerTime: true}, backend.ErrBad},
		{"unknown scheme", nil, "mysql://x", backend.Options{}, backend.ErrBad},
		{"nobody listens", nil, closed, backend.Options{Timeout: 200 * time.Millisecond}, algorithms.ErrBackend},
		{"unknown algorithm on memory", []string{"nope"}, "memory", backend.Options{}, nil},
	} {
		_, closeFn, err := backend.Targets(tc.algos, p, 1, 1, tc.backend, tc.opts)
		if err == nil {
			closeFn()
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
		if errors.Is(err, backend.ErrBad) && errors.Is(err, algorithms.ErrBackend) {
			t.Errorf("%s: %v is both a usage and a backend error", tc.name, err)
		}
	}
}

// TestBackendSameAsMemory: on the same seeded traces in virtual time,
// every algorithm on Redis (one node and a 3-node Cluster) and SQLite
// admits exactly what it admits in memory: the whole run (counts, series,
// span maximum, disagreement with the exact reference, per-key counts) is
// the same.
func TestBackendSameAsMemory(t *testing.T) {
	node := startRedis(t)
	cluster := startCluster(t)
	p := algorithms.Policy{Limit: 50, Window: time.Second, Burst: 20}
	backends := []string{
		"redis://" + node.Addr(),
		"redis+cluster://" + cluster.Nodes[0].Addr() + "," + cluster.Nodes[1].Addr(),
		"sqlite://" + filepath.Join(t.TempDir(), "limits.db"),
	}
	for _, w := range []struct {
		src  workload.Source
		keys int
	}{
		{&workload.Zipf{Rate: 150, S: 1.1, Duration: 4 * time.Second, Keys: 20, Cost: 1, Seed: 42}, 20},
		{&workload.Boundary{Limit: 50, Window: time.Second, Edge: 10 * time.Millisecond, EveryWindows: 2, Duration: 4 * time.Second, Keys: 1, Cost: 2}, 1},
	} {
		cfg := bench.Config{Policy: p, Workload: w.src, Reference: backend.Reference(p, w.keys)}
		mem := simRuns(t, cfg, backendTargets(t, nil, p, w.keys, 1, "memory", backend.Options{}))
		want := map[string]result.Run{}
		for _, r := range mem {
			want[r.Algorithm] = r
		}
		for _, url := range backends {
			for _, r := range simRuns(t, cfg, backendTargets(t, nil, p, w.keys, 1, url, backend.Options{})) {
				if r.Errors != 0 {
					t.Fatalf("%s %s on %s: %d errors %v", w.src.Record()["name"], r.Algorithm, url, r.Errors, r.ErrorKinds)
				}
				m := want[r.Algorithm]
				r.Backend = m.Backend
				got, _ := json.Marshal(r)
				exp, _ := json.Marshal(m)
				if string(got) != string(exp) {
					t.Errorf("%s %s on %s: admitted %d, memory %d; the runs differ:\n got %s\nwant %s",
						w.src.Record()["name"], r.Algorithm, url, r.Admitted, m.Admitted, got, exp)
				}
			}
		}
	}
}

// TestBackendReplicas: 4 replicas that each keep their state in memory
// admit about 4x the limit; 4 replicas sharing one Redis admit about 1x
// (burst ratio within 5% of 1), and so do 4 sharing one SQLite file.
func TestBackendReplicas(t *testing.T) {
	node := startRedis(t)
	p := algorithms.Policy{Limit: 100, Window: time.Second, Burst: 1}
	cfg := bench.Config{Policy: p, Workload: &workload.Constant{Rate: 800, Duration: 5 * time.Second, Keys: 1, Cost: 1}}
	algos := []string{"sliding-log", "gcra", "token-bucket", "fixed-window", "sliding-counter"}
	one := simRuns(t, cfg, backendTargets(t, algos, p, 1, 1, "memory", backend.Options{}))
	four := simRuns(t, cfg, backendTargets(t, algos, p, 1, 4, "memory", backend.Options{}))
	shared := simRuns(t, cfg, backendTargets(t, algos, p, 1, 4, "redis://"+node.Addr(), backend.Options{}))
	file := simRuns(t, cfg, backendTargets(t, []string{"fixed-window"}, p, 1, 4, "sqlite://"+filepath.Join(t.TempDir(), "r.db"), backend.Options{}))
	for i, name := range algos {
		ratio := float64(four[i].Admitted) / float64(one[i].Admitted)
		if ratio < 3.9 || ratio > 4.1 || four[i].BurstRatio < 3.9 {
			t.Errorf("%s: memory x4 admitted %.2fx one replica, burst ratio %.2f; want about 4", name, ratio, four[i].BurstRatio)
		}
		r := shared[i]
		sratio := float64(r.Admitted) / float64(one[i].Admitted)
		if r.Errors != 0 || r.BurstRatio < 0.95 || r.BurstRatio > 1.05 || sratio < 0.95 || sratio > 1.05 {
			t.Errorf("%s: redis x4 admitted %.2fx one replica, burst ratio %.2f, %d errors; want about 1", name, sratio, r.BurstRatio, r.Errors)
		}
		t.Logf("%-15s memory x1 admitted %5d (burst ratio %.2f), memory x4 %5d (%.2f), redis x4 %5d (%.2f)",
			name, one[i].Admitted, one[i].BurstRatio, four[i].Admitted, four[i].BurstRatio, r.Admitted, r.BurstRatio)
	}
	if f := file[0]; f.Admitted != shared[3].Admitted || f.BurstRatio != shared[3].BurstRatio {
		t.Errorf("sqlite x4: admitted %d (burst ratio %.2f), redis x4 %d (%.2f); want the same", f.Admitted, f.BurstRatio, shared[3].Admitted, shared[3].BurstRatio)
	}
}
