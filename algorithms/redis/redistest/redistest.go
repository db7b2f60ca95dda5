// Package redistest starts throw-away redis-server processes on free
// loopback ports for tests: one node, or a Cluster of several created with
// redis-cli --cluster create. Nothing is persisted; each server lives in
// its own folder and dies with the test process (on Linux even when that
// process is killed).
//
// When redis-server is not on PATH, Missing says why, and tests skip; with
// RATEBENCH_REQUIRE_REDIS=1 in the environment (as .ci/run sets it) they
// fail instead (Skip does both).
package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RequireEnv is the environment variable under which a missing
// redis-server fails the tests instead of skipping them.
const RequireEnv = "RATEBENCH_REQUIRE_REDIS"

// Missing returns why Redis tests cannot run ("" when redis-server and
// redis-cli are on PATH).
func Missing() string {
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not on PATH (install redis-server, e.g. apt-get install redis-server)"
		}
	}
	return ""
}

// Required reports whether RATEBENCH_REQUIRE_REDIS=1 is set.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Skip skips tb when Redis is missing, or fails it under RequireEnv.
func Skip(tb testing.TB) {
	tb.Helper()
	if why := Missing(); why != "" {
		if Required() {
			tb.Fatalf("%s=1 but %s", RequireEnv, why)
		}
		tb.Skip(why)
	}
}

// Server is one redis-server process on 127.0.0.1. Not safe for
// concurrent use.
type Server struct {
	Port int
	Dir  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
}

// Addr returns "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// Start starts a redis-server with no persistence in a new folder under
// dir, on a free port (whose port+10000, the Cluster bus, is free too), and
// waits until it answers PING. extra are more command-line options, e.g.
// "--cluster-enabled", "yes".
func Start(dir string, extra ...string) (*Server, error) {
	var lastErr error
	for range 10 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		d, err := os.MkdirTemp(dir, "redis-"+strconv.Itoa(port)+"-")
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s := &Server{Port: port, Dir: d}
		s.args = append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", d,
			"--save", "", "--appendonly", "no", "--daemonize", "no",
			"--protected-mode", "no", "--loglevel", "warning", "--logfile", "",
		}, extra...)
		if lastErr = s.Restart(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// freePort returns a loopback port that is free, and whose port+10000 is
// free too.
func freePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("redistest: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if port+10000 > 65535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		l.Close()
		if err != nil {
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, errors.New("redistest: no free port pair")
}

// Restart starts the server again, on the same port, after Stop (state is
// lost: nothing is persisted).
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("redistest: server is running")
	}
	cmd := exec.Command("redis-server", s.args...)
	cmd.Dir = s.Dir
	s.log = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	if err := s.waitReady(5 * time.Second); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// waitReady polls PING until it answers or the process exits.
func (s *Server) waitReady(limit time.Duration) error {
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redistest: redis-server on %s exited: %s", s.Addr(), strings.TrimSpace(s.log.String()))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s not ready after %v: %w", s.Addr(), limit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var errNotRunning = errors.New("redistest: server is not running")

// Stop kills the server and waits for it to exit. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Cluster is a Redis Cluster of primaries on loopback ports.
type Cluster struct {
	Nodes []*Server
}

// Addrs returns the nodes' addresses.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr()
	}
	return a
}

// StartCluster starts n (>= 3) cluster-enabled servers under dir, joins
// them with redis-cli --cluster create (no replicas) and waits until every
// node reports cluster_state:ok.
func StartCluster(dir string, n int) (*Cluster, error) {
	c := &Cluster{}
	for range n {
		s, err := Start(dir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %w: %s", err, out)
	}
	if err := c.waitOK(10 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// waitOK polls CLUSTER INFO on every node until all say cluster_state:ok.
func (c *Cluster) waitOK(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, s := range c.Nodes {
		cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), MaxRetries: -1})
		for {
			info, err := cl.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				cl.Close()
				return fmt.Errorf("redistest: cluster not ok after %v on %s: %v %s", limit, s.Addr(), err, info)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cl.Close()
	}
	return nil
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// TempDir returns a new folder for servers, under $TMPDIR; remove it with
// os.RemoveAll when done.
func TempDir() (string, error) {
	d, err := os.MkdirTemp("", "ratebench-redistest-")
	if err != nil {
		return "", fmt.Errorf("redistest: %w", err)
	}
	return filepath.Clean(d), nil
}
