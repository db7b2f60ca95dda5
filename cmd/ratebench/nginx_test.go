//go:build !race && linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// The tests here probe and attack a real nginx limiting with limit_req, a
// private one per test: its own prefix folder, configuration, logs and
// loopback port, started and stopped by the test. Linux only: the kernel
// stops nginx when the test process dies (Pdeathsig), so that a killed
// test leaves no server behind.
//
// The policy is limit_req_zone rate=50r/s and limit_req burst=20 nodelay:
// 50 per second with a capacity of 21 (nginx's burst counts the requests
// on top of the first), in ratebench's terms nginx-limit-req of 50 per 1s
// with a burst of 21, a bucket.

// nginxRequireEnv is the environment variable under which a missing nginx
// fails the tests instead of skipping them (.ci/run sets it).
const nginxRequireEnv = "RATEBENCH_REQUIRE_NGINX"

// nginxRate and nginxCapacity are the policy of nginxConf.
const (
	nginxRate     = 50
	nginxCapacity = 21
)

// nginxBinary returns nginx's path (on PATH, or Debian's /usr/sbin/nginx,
// which a user's PATH may lack), or skips the test; under
// RATEBENCH_REQUIRE_NGINX=1 it fails it.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"nginx", "/usr/sbin/nginx"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	why := "nginx is not on PATH nor at /usr/sbin/nginx (apt-get install nginx-light; .ci/run installs it)"
	if os.Getenv(nginxRequireEnv) == "1" {
		t.Fatalf("%s=1 but %s", nginxRequireEnv, why)
	}
	t.Skip(why)
	return ""
}

// nginxConf is a configuration whose every file is under dir: the master
// in the foreground, one worker (one process's millisecond clock decides
// every request), and GET /file served from dir/www through limit_req.
// rejectStatus is limit_req_status, 0 for nginx's default (503). The
// limit is in a location that serves a file, for `return` would answer
// before limit_req runs. The access log is not buffered (no buffer=), so
// that it holds every request once nginx has answered it; rejections are
// logged at info, below the error log's level, to keep it for errors.
func nginxConf(dir string, port, rejectStatus int) string {
	status := ""
	if rejectStatus != 0 {
		status = fmt.Sprintf("limit_req_status %d;", rejectStatus)
	}
	return fmt.Sprintf(`daemon off;
master_process on;
user root;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log error;
events {
	worker_connections 1024;
}
http {
	log_format counts '$status $msec $request';
	access_log %[1]s/access.log counts;
	client_body_temp_path %[1]s/client_body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	limit_req_zone $binary_remote_addr zone=one:1m rate=%[3]dr/s;
	server {
		listen 127.0.0.1:%[2]d;
		root %[1]s/www;
		default_type text/plain;
		location = /file {
			limit_req zone=one burst=%[4]d nodelay;
			limit_req_log_level info;
			%[5]s
		}
	}
}
`, dir, port, nginxRate, nginxCapacity-1, status)
}

// nginxServer is one nginx started by a test.
type nginxServer struct {
	url, dir string
	cmd      *exec.Cmd
	stderr   *syncBuffer
	done     chan struct{} // closed when the master has exited
	waitErr  error         // the master's exit, once done is closed
	once     sync.Once
	stopErr  error
}

// startNginx starts nginx with nginxConf on a free loopback port and waits
// until the port accepts connections; the test's cleanup stops it. A port
// taken between finding it free and nginx binding it is retried.
func startNginx(t *testing.T, rejectStatus int) *nginxServer {
	t.Helper()
	bin := nginxBinary(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "www"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "www", "file"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		s, err := launchNginx(bin, dir, freeLoopbackPort(t), rejectStatus)
		if err == nil {
			t.Cleanup(func() {
				if err := s.stop(); err != nil {
					t.Errorf("nginx: %v", err)
				}
			})
			return s
		}
		if try == 4 || !strings.Contains(err.Error(), "Address already in use") {
			t.Fatal(err)
		}
	}
}

// freeLoopbackPort returns a port that was free on 127.0.0.1 a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// launchNginx writes the configuration, starts nginx and polls its port
// for at most five seconds; a failed start is stopped and returned as an
// error with nginx's own words.
func launchNginx(bin, dir string, port, rejectStatus int) (*nginxServer, error) {
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, port, rejectStatus)), 0o644); err != nil {
		return nil, err
	}
	// -e: the error log before the configuration is read, which a build
	// may otherwise put under /var/log.
	cmd := exec.Command(bin, "-p", dir+"/", "-c", conf, "-e", filepath.Join(dir, "error.log"))
	s := &nginxServer{url: fmt.Sprintf("http://127.0.0.1:%d/file", port), dir: dir, cmd: cmd,
		stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	// Its own process group, so that a master that does not stop can be
	// killed with its worker; SIGTERM (nginx's fast shutdown, which stops
	// the worker too) when the test process dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	go func() { s.waitErr = cmd.Wait(); close(s.done) }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("nginx exited before listening on %s (%v): %s%s", addr, s.waitErr, s.stderr, s.errorLog())
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("nginx does not accept on %s after 5s: %s%s", addr, s.stderr, s.errorLog())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// errorLog returns nginx's error log, or "" when there is none.
func (s *nginxServer) errorLog() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
	return string(b)
}

// stop asks nginx for a graceful shutdown (SIGQUIT: the worker finishes
// what it has in hand, writes its logs and exits, then the master) and
// waits for the master to exit; after ten seconds it kills the process
// group. It returns an error when nginx had to be killed or exited other
// than cleanly; only the first call stops.
func (s *nginxServer) stop() error {
	s.once.Do(func() {
		select {
		case <-s.done:
			s.stopErr = fmt.Errorf("exited on its own (%v): %s", s.waitErr, s.errorLog())
			return
		default:
		}
		if err := s.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
			s.stopErr = err
		}
		select {
		case <-s.done:
			if s.waitErr != nil {
				s.stopErr = fmt.Errorf("exit after SIGQUIT: %v: %s", s.waitErr, s.errorLog())
			}
		case <-time.After(10 * time.Second):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
			s.stopErr = fmt.Errorf("did not stop within 10s of SIGQUIT; killed: %s", s.errorLog())
		}
	})
	return s.stopErr
}

// statuses counts the access log's lines by status; call it after stop.
func (s *nginxServer) statuses(t *testing.T) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(s.dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		status, _, _ := strings.Cut(sc.Text(), " ")
		n[status]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// buckets are the algorithms that admit the same requests for the same
// rate and capacity (`ratebench list`), nginx's among them: a fit of any
// of them is right, for the timing noise of a few requests may not tell
// nginx's millisecond clock from a GCRA's nanoseconds.
var buckets = []string{"gcra", "token-bucket", "leaky-bucket", "x-rate", "nginx-limit-req"}

// TestNginxProbe: probed, nginx's limit_req (rate=50r/s burst=20 nodelay)
// is found to be a bucket of 50 per second within 1% with a capacity of 21
// within 1, denied requests not counted, with at least 99% of the scored
// requests predicted and at most 5% too close to call, within a minute
// and 10,000 requests; its rejections are found to be answered with its
// limit_req_status, 429, or without one with nginx's default, 503.
func TestNginxProbe(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rejectStatus int // limit_req_status; 0: none, nginx's default
		want         int // the reject status the probe should find
	}{
		{name: "limit_req_status 429", rejectStatus: 429, want: 429},
		{name: "default status 503", want: 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startNginx(t, tc.rejectStatus)
			dir := t.TempDir()
			out := filepath.Join(dir, "probe")
			start := time.Now()
			code, stdout, stderr := runCLI(t, dir, "probe", "-url", s.url, "-no-report", "-out", out)
			took := time.Since(start)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			p := res.Probe
			if p == nil {
				t.Fatal("result.json has no probe")
			}
			b := p.Best
			t.Logf("in %v, %d requests, timing uncertainty %v, rejections %v: %s", took.Round(time.Millisecond), p.Requests,
				time.Duration(p.UncertaintyNS).Round(time.Microsecond), p.RejectStatuses, p.Sentence)
			for _, f := range p.Fits[:min(3, len(p.Fits))] {
				t.Logf("fit %s: %.2f%% of %d scored predicted, %.2f%% too close to call", f, f.AgreementPct, f.Scored, f.AmbiguousPct)
			}
			if !slices.Equal(p.RejectStatuses, []int{tc.want}) || !p.RejectFound {
				t.Errorf("reject statuses %v (found by the probe: %v), want [%d] found", p.RejectStatuses, p.RejectFound, tc.want)
			}
			if want := fmt.Sprintf("rejections are answered with %d", tc.want); !strings.Contains(stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, stdout)
			}
			// Every experiment, the first included (run before the reject
			// status was known), counts the denials as rejections.
			for _, run := range res.Runs {
				if run.Rejected == 0 || run.Errors != 0 || !slices.Equal(run.HTTP.RejectStatuses, []int{tc.want}) {
					t.Errorf("%s: %d rejected, %d errors %v, reject statuses %v", run.Algorithm, run.Rejected, run.Errors, run.ErrorKinds, run.HTTP.RejectStatuses)
				}
			}
			rate := float64(b.Limit) / time.Duration(b.WindowNS).Seconds()
			if !slices.Contains(buckets, b.Algorithm) || rate < 0.99*nginxRate || rate > 1.01*nginxRate ||
				b.Burst < nginxCapacity-1 || b.Burst > nginxCapacity+1 || b.Denied() {
				t.Errorf("best %s (denied counted: %v), want a bucket (%s) of %d per 1s with a burst of %d",
					b, b.Denied(), strings.Join(buckets, ", "), nginxRate, nginxCapacity)
			}
			if b.AgreementPct < 99 || b.AmbiguousPct > 5 {
				t.Errorf("best %s: %.2f%% predicted, %.2f%% too close to call; want >= 99%% and <= 5%%", b, b.AgreementPct, b.AmbiguousPct)
			}
			if p.Requests > 10000 || took > time.Minute {
				t.Errorf("%d requests in %v: want at most 10,000 within a minute", p.Requests, took)
			}
			if !strings.Contains(stdout, "The service behaves like "+b.Algorithm) {
				t.Errorf("stdout:\n%s", stdout)
			}
		})
	}
}

// TestNginxAttackMatchesAccessLog: an attack at three times nginx's rate
// for 3 s counts as admitted exactly the requests nginx logged with 200,
// as rejected those it logged with 429, and offered every line of the
// log, with no errors; and nginx admitted no more than its capacity plus
// its rate over the attack (21 + 50/s x 3s), nor much less.
func TestNginxAttackMatchesAccessLog(t *testing.T) {
	const (
		rate     = 3 * nginxRate
		duration = 3 * time.Second
	)
	for _, tc := range []struct {
		name     string
		workload string
	}{
		{name: "constant", workload: "constant"},
		{name: "poisson", workload: "poisson"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startNginx(t, 429)
			out := filepath.Join(t.TempDir(), "atk")
			start := time.Now()
			code, _, stderr := attackCLI(t, context.Background(), "-url", s.url, "-workload", tc.workload,
				"-rate", strconv.Itoa(rate), "-duration", duration.String(), "-no-report", "-out", out)
			took := time.Since(start)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// Stopped, nginx has written every line.
			if err := s.stop(); err != nil {
				t.Fatalf("nginx: %v", err)
			}
			logged := s.statuses(t)
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			run := res.Runs[0]
			var lines int64
			for _, n := range logged {
				lines += n
			}
			t.Logf("in %v: offered %d, admitted %d, rejected %d, errors %d; access log %v", took.Round(time.Millisecond),
				run.Offered, run.Admitted, run.Rejected, run.Errors, logged)
			if run.Admitted != logged["200"] || run.StatusCodes["200"] != logged["200"] {
				t.Errorf("attack: %d admitted (%d 200s); nginx logged %d 200s", run.Admitted, run.StatusCodes["200"], logged["200"])
			}
			if run.Rejected != logged["429"] || run.Rejected == 0 {
				t.Errorf("attack: %d rejected; nginx logged %d 429s (want some)", run.Rejected, logged["429"])
			}
			if run.Offered != lines || run.Errors != 0 {
				t.Errorf("attack: offered %d with %d errors; nginx logged %d requests", run.Offered, run.Errors, lines)
			}
			most := int64(nginxCapacity + nginxRate*duration.Seconds())
			if run.Admitted > most || run.Admitted < most*9/10 {
				t.Errorf("admitted %d, want at most %d (capacity + rate x duration) and at least 90%% of it", run.Admitted, most)
			}
		})
	}
}
