//go:build linux && !race

package httpload

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ratebench/ratebench/workload"
)

// TestEpollLoops: one loop or more than the connections allow, open and
// closed, the connections are shared out and capped, every arrival is
// answered, and the loops' records reach the collector in order (the
// floor protocol holds across loops).
func TestEpollLoops(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	defer func(n int) { loopsOverride = n }(loopsOverride)
	for _, loops := range []int{1, 3, 8} {
		loopsOverride = loops
		res, err := Attack(context.Background(), Config{URL: srv.URL, Engine: EngineEpoll, Connections: 4,
			Workload: workload.Spec{Name: "poisson", Rate: 3000, Duration: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		run := res.Run
		if run.Admitted != run.Offered || run.Errors != 0 || run.Live.Workers > 4 || run.HTTP.Connections > 4 || run.Live.Dropped != 0 ||
			run.Live.Reordered != 0 {
			t.Errorf("%d loops, open: admitted %d of %d, errors %v, %d workers, %d connections, %d reordered", loops,
				run.Admitted, run.Offered, run.ErrorKinds, run.Live.Workers, run.HTTP.Connections, run.Live.Reordered)
		}
		res, err = Attack(context.Background(), Config{URL: srv.URL, Engine: EngineEpoll, Connections: 4, Closed: true,
			Workload: workload.Spec{Name: "constant", Duration: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if run := res.Run; run.Admitted == 0 || run.Errors != 0 || run.Live.Workers != 4 || run.HTTP.Connections != 4 ||
			run.Live.Reordered != 0 {
			t.Errorf("%d loops, closed: admitted %d, errors %v, %d workers, %d connections, %d reordered", loops,
				run.Admitted, run.ErrorKinds, run.Live.Workers, run.HTTP.Connections, run.Live.Reordered)
		}
	}
}

// TestEpollGrowth: arrivals taken in one round open a connection each,
// up to minWorkers at once, then one per spawnEvery while they wait, as
// the goroutine engine's pool grows.
func TestEpollGrowth(t *testing.T) {
	l, err := newEvLoop(&epollEngine{p: &pass{cfg: Config{Connections: 64}}}, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer l.closeFDs()
	for _, step := range []struct {
		arrivals  int
		now       int64
		wantConns int
	}{
		{arrivals: 10, now: 0, wantConns: 10},                            // fewer than minWorkers: at once
		{arrivals: 20, now: 0, wantConns: minWorkers},                    // then minWorkers at most
		{arrivals: 0, now: int64(spawnEvery) - 1, wantConns: minWorkers}, // not before spawnEvery
		{arrivals: 0, now: int64(spawnEvery), wantConns: minWorkers + 1},
	} {
		for i := range step.arrivals {
			l.push(job{key: strconv.Itoa(i)})
		}
		l.takeQueue(step.now)
		l.grow(step.now)
		if len(l.conns) != step.wantConns || len(l.idle) != step.wantConns {
			t.Fatalf("after %d more arrivals at %dns: %d connections, %d idle; want %d", step.arrivals, step.now,
				len(l.conns), len(l.idle), step.wantConns)
		}
	}
}

// TestEpollEarlyAnswer: a response that comes before its request was
// written whole (a 429 after the headers of a large POST) closes the
// connection, since a next request written behind the rest of the body
// would be read as that body; one written whole stays open.
func TestEpollEarlyAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		unsent   string
		wantOpen bool
	}{
		{name: "written whole", unsent: "", wantOpen: true},
		{name: "body still to write", unsent: "the rest of the body", wantOpen: false},
	} {
		l, err := newEvLoop(&epollEngine{p: &pass{cfg: Config{Connections: 1}}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := l.newConn()
		c.fd, c.busy, l.busy = fds[0], true, 1
		c.out = append(c.out, tc.unsent...)
		c.parser.keepAlive = true
		l.answered(c)
		if open := c.fd >= 0; open != tc.wantOpen || len(l.idle) != 1 {
			t.Errorf("%s: connection open %v (want %v), %d idle", tc.name, open, tc.wantOpen, len(l.idle))
		}
		l.closeConn(c)
		_ = syscall.Close(fds[1])
		l.closeFDs()
	}
}

// TestEpollPicksAddress: a host name with several addresses connects to
// the first that accepts a connection, whatever the resolver's order; when
// none does, the requests fail as refused and are counted.
func TestEpollPicksAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func(f func(context.Context, string) ([]net.IPAddr, error)) { lookupIP = f }(lookupIP)
	ips := func(s ...string) []net.IPAddr {
		var out []net.IPAddr
		for _, a := range s {
			out = append(out, net.IPAddr{IP: net.ParseIP(a)})
		}
		return out
	}
	// Nothing listens on 127.0.0.2 and 127.0.0.3 at the server's port:
	// the server is bound to 127.0.0.1 only.
	for _, tc := range []struct {
		name    string
		addrs   []net.IPAddr
		working bool
	}{
		{"dead first", ips("127.0.0.2", "127.0.0.1"), true},
		{"live first", ips("127.0.0.1", "127.0.0.2"), true},
		{"one address", ips("127.0.0.1"), true},
		{"none live", ips("127.0.0.2", "127.0.0.3"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookupIP = func(_ context.Context, host string) ([]net.IPAddr, error) {
				if host != "multi.test" {
					return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
				}
				return tc.addrs, nil
			}
			res, err := Attack(context.Background(), Config{URL: "http://multi.test:" + port + "/", Engine: EngineEpoll,
				Workload: workload.Spec{Name: "constant", Rate: 200, Duration: 100 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			run := res.Run
			if run.HTTP.Engine != EngineEpoll || run.Offered != 20 {
				t.Fatalf("engine %q, offered %d; want epoll, 20", run.HTTP.Engine, run.Offered)
			}
			if tc.working && (run.Admitted != 20 || run.Errors != 0) {
				t.Errorf("admitted %d of 20, errors %v; want all admitted", run.Admitted, run.ErrorKinds)
			}
			if !tc.working && (run.Admitted != 0 || run.ErrorKinds[KindRefused] != 20) {
				t.Errorf("admitted %d, errors %v; want 20 refused", run.Admitted, run.ErrorKinds)
			}
		})
	}
}
