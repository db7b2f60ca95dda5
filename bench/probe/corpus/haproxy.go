package corpus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// HAProxyRequireEnv is the environment variable under which a missing
// haproxy should fail a test rather than skip it.
const HAProxyRequireEnv = "RATEBENCH_REQUIRE_HAPROXY"

// haproxyTruth is what haproxyConf's frontend does. Its stick table keeps
// per source address an http_req_rate(2s), a freq_ctr: the requests of
// the current 2 s period and of the one before. track-sc0 counts each
// request in it before the deny rule reads it, so that every request
// counts, denied too, the current one included, and the rule denies when
// curr + floor(prev x remaining / 2000) > 25, in milliseconds of the
// current period. Periods follow each other from a client's first request
// and start again at a request that comes two periods or more after the
// current one began (at an even millisecond: HAProxy keeps a lock in the
// lowest bit of the period's start).
var haproxyTruth = Truth{Algorithms: []string{"haproxy-req-rate"}, Limit: 25, Window: 2 * time.Second,
	Scope: result.ScopeSource, CountsDenied: ptr(true), RejectStatus: 429}

// haproxyConf is a configuration that listens on 127.0.0.1:port and
// answers every request itself, 200 or 429: one thread (one clock, as
// nginx's single worker), a stick table of client addresses with their
// http_req_rate over 2 s, deny with 429 above 25, and `http-request
// return` in place of a backend server.
func haproxyConf(port int) string {
	return fmt.Sprintf(`global
	nbthread 1
	maxconn 1024
defaults
	mode http
	timeout connect 5s
	timeout client 30s
	timeout server 30s
	timeout http-request 10s
frontend corpus
	bind 127.0.0.1:%d
	stick-table type ip size 100k expire 30s store http_req_rate(2s)
	http-request track-sc0 src
	http-request deny deny_status 429 if { sc_http_req_rate(0) gt 25 }
	http-request return status 200 content-type text/plain string "ok\n"
`, port)
}

// startHAProxy starts haproxy in the foreground (-db) with haproxyConf
// written into dir, on a free loopback port.
func startHAProxy(ctx context.Context, dir string) (*Target, error) {
	bin, err := lookPath("apt-get install haproxy; .ci/run installs it", "haproxy", "/usr/sbin/haproxy")
	if err != nil {
		return nil, err
	}
	return withFreePort(func(port int) (*Target, error) {
		conf := filepath.Join(dir, "haproxy.cfg")
		if err := os.WriteFile(conf, []byte(haproxyConf(port)), 0o644); err != nil {
			return nil, err
		}
		p, err := launch("haproxy", exec.Command(bin, "-db", "-f", conf), nil)
		if err != nil {
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if err := p.awaitDial(ctx, addr, 5*time.Second); err != nil {
			return nil, portTaken(err)
		}
		return &Target{Name: HAProxy, URL: "http://" + addr + "/", Truth: haproxyTruth,
			Stop: func() error { return p.stop(haproxySoftStop, 10*time.Second) }}, nil
	})
}
