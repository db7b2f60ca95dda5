package corpus

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// NginxConfig is an nginx limit_req policy: limit_req_zone
// $binary_remote_addr rate=Rate r/s or r/m, limit_req burst=Burst nodelay,
// limit_req_status RejectStatus.
type NginxConfig struct {
	Rate int64         // requests per Per, >= 1
	Per  time.Duration // time.Second (r/s) or time.Minute (r/m)
	// Burst is limit_req's burst=: the requests admitted on top of the
	// first, so that the capacity is Burst+1.
	Burst int64
	// RejectStatus is limit_req_status; 0 for nginx's default, 503.
	RejectStatus int
}

// Truth is what nginx does with the policy: a bucket of Rate per Per
// with a capacity of Burst+1, per client address, denied requests not
// counted (limit_req counts in thousandths of a request on 1ms ticks and
// rejects without taking any).
func (c NginxConfig) Truth() Truth {
	status := c.RejectStatus
	if status == 0 {
		status = 503
	}
	return Truth{Algorithms: Buckets(), Limit: c.Rate, Window: c.Per, Burst: c.Burst + 1, Scope: result.ScopeSource,
		CountsDenied: ptr(false), RejectStatus: status, RateOnly: true}
}

func (c NginxConfig) check() error {
	switch {
	case c.Rate < 1:
		return fmt.Errorf("nginx: rate %d: want >= 1", c.Rate)
	case c.Per != time.Second && c.Per != time.Minute:
		return fmt.Errorf("nginx: rate per %v: want 1s (r/s) or 1m (r/m)", c.Per)
	case c.Burst < 0:
		return fmt.Errorf("nginx: burst %d: want >= 0", c.Burst)
	case c.RejectStatus != 0 && (c.RejectStatus < 400 || c.RejectStatus > 599):
		return fmt.Errorf("nginx: limit_req_status %d: nginx takes 400 to 599", c.RejectStatus)
	}
	return nil
}

// conf is a configuration whose every file is under dir: the master in
// the foreground, one worker (one process's millisecond clock decides
// every request), and GET /file served from dir/www through limit_req.
// The limit is in a location that serves a file, for `return` would
// answer before limit_req runs. The access log is not buffered (no
// buffer=), so that it holds every request once nginx has answered it;
// rejections are logged at info, below the error log's level, to keep it
// for errors.
func (c NginxConfig) conf(dir string, port int) string {
	status := ""
	if c.RejectStatus != 0 {
		status = fmt.Sprintf("limit_req_status %d;", c.RejectStatus)
	}
	unit := "r/s"
	if c.Per == time.Minute {
		unit = "r/m"
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
	limit_req_zone $binary_remote_addr zone=one:1m rate=%[3]d%[4]s;
	server {
		listen 127.0.0.1:%[2]d;
		root %[1]s/www;
		default_type text/plain;
		location = /file {
			limit_req zone=one burst=%[5]d nodelay;
			limit_req_log_level info;
			%[6]s
		}
	}
}
`, dir, port, c.Rate, unit, c.Burst, status)
}

// Nginx is an nginx started by StartNginx.
type Nginx struct {
	URL string // http://127.0.0.1:PORT/file
	Dir string // its prefix: configuration, logs, www
	p   *proc
}

// NginxRequireEnv is the environment variable under which a missing
// nginx should fail a test rather than skip it.
const NginxRequireEnv = "RATEBENCH_REQUIRE_NGINX"

// StartNginx starts nginx with cfg on a free loopback port, its prefix
// (configuration, logs, the file it serves) in dir, and returns once the
// port accepts connections, within ctx and at most 5 s; a port taken
// between finding it free and nginx binding it is retried. The caller
// stops it with Stop. An error wraps ErrMissing when nginx is not
// installed.
func StartNginx(ctx context.Context, dir string, cfg NginxConfig) (*Nginx, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	bin, err := lookPath("apt-get install nginx-light; .ci/run installs it", "nginx", "/usr/sbin/nginx")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "www"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "www", "file"), []byte("ok\n"), 0o644); err != nil {
		return nil, err
	}
	return withFreePort(func(port int) (*Nginx, error) {
		conf := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(conf, []byte(cfg.conf(dir, port)), 0o644); err != nil {
			return nil, err
		}
		// -e: the error log before the configuration is read, which a
		// build may otherwise put under /var/log.
		errorLog := filepath.Join(dir, "error.log")
		_ = os.Remove(errorLog) // a failed try's words are not this one's
		cmd := exec.Command(bin, "-p", dir+"/", "-c", conf, "-e", errorLog)
		p, err := launch("nginx", cmd, func() string { b, _ := os.ReadFile(errorLog); return string(b) })
		if err != nil {
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if err := p.awaitDial(ctx, addr, 5*time.Second); err != nil {
			return nil, portTaken(err)
		}
		return &Nginx{URL: "http://" + addr + "/file", Dir: dir, p: p}, nil
	})
}

// Stop asks nginx for a graceful shutdown (SIGQUIT: the worker finishes
// what it has in hand, writes its logs and exits, then the master) and
// waits for the master to exit; after ten seconds it kills the process
// group. It returns an error when nginx had to be killed or exited other
// than cleanly; only the first call stops.
func (n *Nginx) Stop() error { return n.p.stop(syscall.SIGQUIT, 10*time.Second) }

// Statuses counts the access log's lines by status ("200", "429"); call
// it after Stop, when nginx has written every line.
func (n *Nginx) Statuses() (map[string]int64, error) {
	f, err := os.Open(filepath.Join(n.Dir, "access.log"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	count := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		status, _, _ := strings.Cut(sc.Text(), " ")
		count[status]++
	}
	return count, sc.Err()
}
