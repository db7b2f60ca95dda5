//go:build !race

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
)

// attackHeaders runs `ratebench attack` with args against url, writing
// requests.csv, and returns what it made of the rate-limit fields; it
// checks that a recount of requests.csv (as merge does) says the same.
func attackHeaders(t *testing.T, url string, args ...string) *result.HeaderStats {
	t.Helper()
	out := filepath.Join(t.TempDir(), "atk")
	code, stdout, stderr := attackCLI(t, context.Background(), append([]string{"-url", url, "-no-report", "-out", out}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := res.Runs[0].HTTP.Headers
	if h == nil {
		t.Fatalf("no headers in result.json: %s", stdout)
	}
	if !strings.Contains(stdout, "headers: ") {
		t.Errorf("the summary does not say what the fields were worth:\n%s", stdout)
	}
	tr, err := tracefile.Open(filepath.Join(out, "requests.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	again := httpexec.NewHeaderCheck()
	for {
		row, err := tr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		again.Row(row.Row)
	}
	if got := again.Result(); *got != *h {
		t.Errorf("requests.csv recounted says %+v,\nthe run %+v", *got, *h)
	}
	return h
}

// contradictions is every verdict against a field.
func contradictions(h *result.HeaderStats) int64 {
	return h.RemainingContradicted + h.RetryAfterEarly + h.RetryAfterOverstated + h.ResetContradicted
}

// TestHeadersServeBursts: `ratebench serve`, whose fields are exact,
// answering bursts over 64 connections out of order, is never
// contradicted, in five attacks.
func TestHeadersServeBursts(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "50", "-window", "1s", "-key", "header:X-Key", "-legacy-headers")
	var total result.HeaderStats
	for i := range 5 {
		h := attackHeaders(t, s.url+"/", "-workload", "burst", "-burst-size", "150", "-burst-every", "600ms", "-duration", "1800ms",
			"-connections", "64", "-keys", "3", "-key-header", "X-Key", "-seed", strconv.Itoa(i+1))
		t.Logf("run %d: %d contradictions; remaining %d checked, %d untested; Retry-After %d checked, %d untested; reset %d checked, %d untested",
			i+1, contradictions(h), h.RemainingChecked, h.RemainingUntested, h.RetryAfterChecked, h.RetryAfterUntested, h.ResetChecked, h.ResetUntested)
		if n := contradictions(h); n != 0 {
			t.Errorf("run %d: %d contradictions of an exact server: %+v", i+1, n, *h)
		}
		total.Add(h)
	}
	if total.RemainingChecked == 0 {
		t.Errorf("no remaining count was ever tested: %+v", total)
	}
}

// lyingServer limits each key (X-Key) to 20 per second in fixed windows
// of the wall clock, exactly, and answers X-RateLimit-Limit, -Remaining
// (the count left plus lie) and -Reset (the window's end, an epoch
// second). It listens on 127.0.0.1 until the test ends.
func lyingServer(t *testing.T, lie int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	type window struct{ start, n int64 }
	keys := map[string]*window{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().Unix()
		mu.Lock()
		k := keys[r.Header.Get("X-Key")]
		if k == nil || k.start != now {
			k = &window{start: now}
			keys[r.Header.Get("X-Key")] = k
		}
		admitted := k.n < 20
		if admitted {
			k.n++
		}
		left := 20 - k.n
		mu.Unlock()
		w.Header().Set("X-RateLimit-Limit", "20")
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(left+lie, 10))
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(now+1, 10))
		if !admitted {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return fmt.Sprintf("http://%s/", ln.Addr())
}

// TestHeadersLyingRemaining: a server whose X-RateLimit-Remaining is 3
// too high is caught; the same server telling the truth is not.
func TestHeadersLyingRemaining(t *testing.T) {
	for _, tc := range []struct {
		name string
		lie  int64
	}{{"honest", 0}, {"3 too high", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			h := attackHeaders(t, lyingServer(t, tc.lie), "-rate", "200", "-duration", "1s", "-keys", "2", "-key-header", "X-Key",
				"-connections", "4", "-window", "1s")
			t.Logf("remaining contradicted %d of %d checked, %d untested", h.RemainingContradicted, h.RemainingChecked, h.RemainingUntested)
			switch {
			case tc.lie == 0 && contradictions(h) != 0:
				t.Errorf("an honest server contradicted: %+v", *h)
			case tc.lie > 0 && h.RemainingContradicted == 0:
				t.Errorf("the lie was not caught: %+v", *h)
			case h.RemainingChecked == 0:
				t.Errorf("nothing tested: %+v", *h)
			}
		})
	}
}
