//go:build !race

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/report"
)

// The attacks here run against `ratebench serve` on loopback, through the
// same command-line code as a user's, for a second or less.

// attackCLI runs `ratebench attack args...` with its output folder in dir.
func attackCLI(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	argv := append([]string{"attack"}, args...)
	e := &env{stdout: &out, stderr: &errb, args: append([]string{"ratebench"}, argv...)}
	code := e.main(ctx, argv)
	return code, out.String(), errb.String()
}

// TestAttackCountsMatchServer: the client's 200s and 429s are the
// server's admitted and rejected, and result.json says what an HTTP run
// is: status codes, the policy read from RateLimit-Policy, Retry-After.
func TestAttackCountsMatchServer(t *testing.T) {
	for _, tc := range []struct {
		name        string
		serve, atk  []string
		keys, limit int64
	}{
		{"one client", []string{"-algo", "gcra", "-limit", "50", "-window", "1s"}, []string{"-rate", "300"}, 1, 50},
		{"keys in a header", []string{"-algo", "sliding-log", "-limit", "20", "-window", "1s", "-key", "header:X-Key"},
			[]string{"-rate", "300", "-workload", "poisson", "-keys", "3", "-key-header", "X-Key"}, 3, 20},
	} {
		eachClient(t, func(t *testing.T, client string) {
			t.Run(tc.name, func(t *testing.T) {
				s := startServe(t, tc.serve...)
				out := filepath.Join(t.TempDir(), "atk")
				args := append([]string{"-url", s.url + "/api", "-duration", "600ms", "-no-report", "-out", out, "-client", client}, tc.atk...)
				code, stdout, stderr := attackCLI(t, context.Background(), args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if !strings.HasPrefix(stdout, "The service rejected ") || !strings.Contains(stdout, " against a limit of ") {
					t.Errorf("stdout does not open with the finding:\n%s", stdout)
				}
				_, totalsLine := s.stop(t)
				admitted, rejected := totals(t, totalsLine)
				res, err := result.ReadFile(filepath.Join(out, "result.json"))
				if err != nil {
					t.Fatal(err)
				}
				run := res.Runs[0]
				if got := run.StatusCodes["200"]; got != admitted || run.Admitted != admitted {
					t.Errorf("client: %d 200s (admitted %d); server admitted %d", got, run.Admitted, admitted)
				}
				if got := run.StatusCodes["429"]; got != rejected || run.Rejected != rejected || rejected == 0 {
					t.Errorf("client: %d 429s (rejected %d); server rejected %d (want some)", got, run.Rejected, rejected)
				}
				if run.Offered != admitted+rejected || run.Errors != 0 || len(run.StatusCodes) != 2 {
					t.Errorf("offered %d, errors %d, statuses %v", run.Offered, run.Errors, run.StatusCodes)
				}
				host := strings.TrimPrefix(s.url, "http://")
				if run.Algorithm != "http" || run.Backend != host || res.Meta.Mode != "http" || run.Live == nil || run.HTTP == nil {
					t.Fatalf("run %s@%s in mode %s, live %v, http %v", run.Algorithm, run.Backend, res.Meta.Mode, run.Live, run.HTTP)
				}
				if res.Policy.Limit != tc.limit || res.Policy.WindowNS != int64(time.Second) || run.HTTP.PolicySource != "RateLimit-Policy" {
					t.Errorf("policy %+v from %q, want %d per 1s from the header", res.Policy, run.HTTP.PolicySource, tc.limit)
				}
				if int64(run.KeyCount) != tc.keys || run.Latency == nil || run.Latency.Count != run.Offered || run.LatencyHDR == "" {
					t.Errorf("keys %d, latency %+v", run.KeyCount, run.Latency)
				}
				if n := run.HTTP.RetryAfterS["1"]; n != rejected {
					t.Errorf("Retry-After values %v: want 1s for each of the %d 429s", run.HTTP.RetryAfterS, rejected)
				}
				if want := 100 * float64(rejected) / float64(admitted+rejected); run.HTTP.TooManyPct != want {
					t.Errorf("429 ratio %.3f%%, want %.3f%%", run.HTTP.TooManyPct, want)
				}
				if !strings.Contains(stdout, "status: 200: ") || !strings.Contains(stdout, "http@"+host) {
					t.Errorf("stdout lacks the table or the status line:\n%s", stdout)
				}
				// The trace: a row per request, its 200s the server's
				// admitted, each with the quota the server said was left.
				rows := traceRows(t, out)
				var ok200 int64
				for _, r := range rows {
					if r["status"] == "200" {
						ok200++
						if r["outcome"] != "admitted" || r["ratelimit_remaining"] == "-1" {
							t.Errorf("row %v", r)
						}
					}
				}
				if int64(len(rows)) != run.Offered || ok200 != admitted {
					t.Errorf("trace: %d rows, %d of them 200s; want %d and %d", len(rows), ok200, run.Offered, admitted)
				}
			})
		})
	}
}

// TestAttackHonorRetryAfter: a key told to come back later is held back,
// not sent: the server sees no request of it until then. Arrivals are
// 20ms apart, so that the first 429 is back before the next is due (at
// 5ms apart, a busy host's slower answer let 18 more go out first).
func TestAttackHonorRetryAfter(t *testing.T) {
	eachClient(t, func(t *testing.T, client string) {
		s := startServe(t, "-limit", "5", "-window", "1m")
		out := filepath.Join(t.TempDir(), "atk")
		code, stdout, stderr := attackCLI(t, context.Background(), "-url", s.url, "-rate", "50", "-duration", "1600ms",
			"-honor-retry-after", "-no-report", "-out", out, "-client", client)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		_, totalsLine := s.stop(t)
		admitted, rejected := totals(t, totalsLine)
		res, err := result.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		run := res.Runs[0]
		// 5 admitted, one 429 saying "12s", then everything held back.
		if admitted != 5 || rejected != 1 || run.Admitted != 5 || run.Rejected != 1 || run.HTTP.RetryAfterS["12"] != 1 {
			t.Errorf("server %d/%d, client %d/%d, Retry-After %v; want 5 admitted, 1 rejected with 12s",
				admitted, rejected, run.Admitted, run.Rejected, run.HTTP.RetryAfterS)
		}
		if held := run.HTTP.HeldBack; held < 60 || held+run.Offered != run.Live.Scheduled {
			t.Errorf("held back %d of %d scheduled (offered %d)", held, run.Live.Scheduled, run.Offered)
		}
		if !strings.Contains(stdout, "held back") {
			t.Errorf("stdout does not say how many were held back:\n%s", stdout)
		}
	})
}

// eachClient runs f once with each HTTP client attack can use, each in
// a subtest of its own.
func eachClient(t *testing.T, f func(t *testing.T, client string)) {
	for _, c := range []string{httpexec.ClientFast, httpexec.ClientStd} {
		t.Run(strings.ReplaceAll(c, "/", "-"), func(t *testing.T) { f(t, c) })
	}
}

// freePort returns a loopback address nobody listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestAttackBadInput: one clear line, exit 2, no output folder.
func TestAttackBadInput(t *testing.T) {
	s := startServe(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unreachable", []string{"-url", "http://" + freePort(t) + "/"}, "connection refused"},
		{"no URL", []string{}, "-url is required"},
		{"not http", []string{"-url", "ftp://127.0.0.1/"}, "ftp://"},
		{"malformed header", []string{"-url", s.url, "-header", "X-Token"}, "Name: value"},
		{"header name with a space", []string{"-url", s.url, "-header", "X Token: 1"}, "not a token"},
		{"negative rate", []string{"-url", s.url, "-rate", "-5"}, "-rate -5"},
		{"NaN rate", []string{"-url", s.url, "-rate", "NaN"}, "-rate NaN"},
		{"closed loop without connections", []string{"-url", s.url, "-rate", "0"}, "-connections"},
		{"keys without a header", []string{"-url", s.url, "-keys", "3"}, "-key-header"},
		{"unknown workload", []string{"-url", s.url, "-workload", "tides"}, "tides"},
		{"missing body", []string{"-url", s.url, "-body", "missing.json"}, "missing.json"},
		{"zero duration", []string{"-url", s.url, "-duration", "0s"}, "-duration"},
		{"unknown algorithm", []string{"-url", s.url, "-algo", "nope"}, "nope"},
		{"no connections", []string{"-url", s.url, "-connections", "0"}, "-connections 0"},
		{"negative limit", []string{"-url", s.url, "-limit", "-1"}, "-limit"},
		{"unknown client", []string{"-url", s.url, "-client", "curl"}, "curl"},
		{"negative cpus", []string{"-url", s.url, "-cpus", "-1"}, "-cpus -1"},
		{"boundary without the policy", []string{"-url", s.url, "-workload", "boundary"}, "limit and window"},
		{"closed loop holding back", []string{"-url", s.url, "-rate", "0", "-connections", "2", "-honor-retry-after"}, "hold"},
		{"stray argument", []string{"-url", s.url, "extra"}, "extra"},
		// The phase flags are for the boundary workload, within a window.
		{"edge offset off boundary", []string{"-url", s.url, "-edge-offset", "5ms"}, "-edge-offset"},
		{"edge offset of a window", []string{"-url", s.url, "-workload", "boundary", "-limit", "5", "-window", "1s", "-edge-offset", "1s"}, "-edge-offset 1s must be less than window 1s"},
		{"unknown align", []string{"-url", s.url, "-workload", "boundary", "-limit", "5", "-window", "1s", "-align", "noon"}, `-align "noon" is not epoch or first-request`},
		// A reject status must be an HTTP status, and not a success.
		{"reject status not a number", []string{"-url", s.url, "-reject-status", "429,slow"}, `"slow" is not an HTTP status`},
		{"reject status out of range", []string{"-url", s.url, "-reject-status", "999"}, "not an HTTP status"},
		{"reject status a success", []string{"-url", s.url, "-reject-status", "429,200"}, "200 is a success"},
		// Source addresses: the flag's syntax, then what Check finds.
		{"source addrs not addresses", []string{"-url", s.url, "-source-addrs", "127.0.0.2,here"}, `-source-addrs: "here" is not an IP address`},
		{"source addrs reversed", []string{"-url", s.url, "-source-addrs", "127.0.0.9-127.0.0.2"}, "range 127.0.0.9-127.0.0.2 ends before it starts"},
		{"source addrs too many", []string{"-url", s.url, "-source-addrs", "10.0.0.0-10.1.0.0"}, "holds more than 65536 addresses"},
		{"source addrs mixed families", []string{"-url", s.url, "-source-addrs", "127.0.0.2-::1"}, "mixes IPv4 and IPv6"},
		{"source addrs twice", []string{"-url", s.url, "-source-addrs", "127.0.0.2-4,127.0.0.3"}, "127.0.0.3 is given twice"},
		{"source addrs fewer keys", []string{"-url", s.url, "-source-addrs", "127.0.0.2-4", "-keys", "2", "-key-header", "X-Key"}, "-keys 2 would send from only 2 of the 3"},
		{"source addrs not of this host", []string{"-url", s.url, "-source-addrs", "127.0.0.1,192.0.2.1"}, "from source address 192.0.2.1: bind: cannot assign requested address"},
		{"source addrs wrong family", []string{"-url", s.url, "-source-addrs", "::1"}, "an IPv6 source cannot reach 127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			args := append([]string{"-duration", "100ms", "-out", filepath.Join(dir, "out")}, tc.args...)
			code, _, stderr := attackCLI(t, context.Background(), args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("bad input created %v", entries)
			}
		})
	}
	if _, out := s.stop(t); !strings.Contains(out, "totals: admitted 0 rejected 0") {
		t.Errorf("bad input sent requests: %q", out)
	}
}

// TestAttackServerStops: a server that goes away mid-attack gives errors
// (connections refused or closed), and the report is still written.
func TestAttackServerStops(t *testing.T) {
	eachClient(t, func(t *testing.T, client string) {
		s := startServe(t, "-limit", "1000", "-window", "1s")
		time.AfterFunc(200*time.Millisecond, func() { s.cancel() })
		out := filepath.Join(t.TempDir(), "atk")
		code, stdout, stderr := attackCLI(t, context.Background(), "-url", s.url, "-rate", "250", "-duration", "400ms", "-timeout", "500ms", "-out", out, "-client", client)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		res, err := result.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		run := res.Runs[0]
		refused := run.ErrorKinds["connection_refused"]
		if run.Admitted < 20 || refused < 20 || run.Errors != run.Offered-run.Admitted {
			t.Errorf("admitted %d, errors %d %v of %d: want 200s, then refused connections", run.Admitted, run.Errors, run.ErrorKinds, run.Offered)
		}
		for _, f := range []string{"report.html", "latency.png", "admitted_rate.png"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("no %s after the server stopped: %v", f, err)
			}
		}
		if !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, "connection_refused") {
			t.Errorf("stderr does not warn about the errors: %q", stderr)
		}
		if !strings.Contains(stdout, "errors: ") {
			t.Errorf("stdout does not count the errors:\n%s", stdout)
		}
	})
}

// TestAttackInterrupt: a cancelled context (Ctrl-C) stops an hour-long
// attack within a second, writes what ran and exits 130.
func TestAttackInterrupt(t *testing.T) {
	eachClient(t, func(t *testing.T, client string) {
		s := startServe(t, "-limit", "100", "-window", "1s")
		out := filepath.Join(t.TempDir(), "cut")
		ctx, cancel := context.WithCancel(context.Background())
		const after = 400 * time.Millisecond
		time.AfterFunc(after, cancel)
		start := time.Now()
		code, _, stderr := attackCLI(t, ctx, "-url", s.url, "-rate", "500", "-duration", "1h", "-no-report", "-out", out, "-client", client)
		if code != 130 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if took := time.Since(start) - after; took > time.Second {
			t.Errorf("returned %v after the interrupt, want within 1s", took)
		}
		res, err := result.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		run := res.Runs[0]
		if !res.Meta.Interrupted || run.Offered < 100 || run.Live.SpanNS > int64(time.Second) {
			t.Errorf("interrupted %v, offered %d over %v", res.Meta.Interrupted, run.Offered, time.Duration(run.Live.SpanNS))
		}
		if !strings.Contains(stderr, "interrupted") {
			t.Errorf("stderr %q: want the interrupt said", stderr)
		}
		// Each request sent has its row: nothing lost to the interrupt.
		if rows := traceRows(t, out); int64(len(rows)) != run.Offered {
			t.Errorf("trace: %d rows for %d requests", len(rows), run.Offered)
		}
	})
}

// traceRows reads the requests.csv of the folder dir, each row by column.
func traceRows(t *testing.T, dir string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, tracefile.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("requests.csv: %v", err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		r := map[string]string{}
		for i, name := range recs[0] {
			r[name] = rec[i]
		}
		rows = append(rows, r)
	}
	return rows
}

// TestAttackClosedLoop: -rate 0 runs a closed loop over -connections.
func TestAttackClosedLoop(t *testing.T) {
	eachClient(t, func(t *testing.T, client string) {
		s := startServe(t, "-limit", "1000000", "-window", "1s")
		atk := filepath.Join(t.TempDir(), "atk")
		code, stdout, stderr := attackCLI(t, context.Background(), "-url", s.url, "-rate", "0", "-connections", "4", "-duration", "300ms",
			"-no-report", "-no-trace", "-out", atk, "-client", client)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		res, err := result.ReadFile(filepath.Join(atk, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		run := res.Runs[0]
		if !run.HTTP.Closed || run.Admitted < 100 || run.Admitted != run.Offered || run.HTTP.Connections != 4 || run.Live.Late != 0 {
			t.Errorf("closed loop: admitted %d of %d over %d connections, %d late", run.Admitted, run.Offered, run.HTTP.Connections, run.Live.Late)
		}
		if !strings.Contains(stdout, "closed loop over 4 connections") {
			t.Errorf("stdout:\n%s", stdout)
		}
		if _, err := os.Stat(filepath.Join(atk, tracefile.Name)); err == nil {
			t.Error("-no-trace wrote requests.csv")
		}
		_, totalsLine := s.stop(t)
		if admitted, _ := totals(t, totalsLine); admitted != run.Admitted {
			t.Errorf("server admitted %d, client counted %d 200s", admitted, run.Admitted)
		}
	})
}

// TestAttackCompare: an HTTP run and an in-process run side by side (the
// page without its charts, which TestCompareCommand renders).
func TestAttackCompare(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "50", "-window", "1s")
	dir := t.TempDir()
	atk, sim := filepath.Join(dir, "atk"), filepath.Join(dir, "sim")
	if code, _, stderr := attackCLI(t, context.Background(), "-url", s.url, "-rate", "150", "-duration", "300ms", "-algo", "gcra",
		"-no-report", "-out", atk); code != 0 {
		t.Fatalf("attack: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, dir, "run", "-algos", "gcra", "-limit", "50", "-rate", "150", "-duration", "1s", "-no-report", "-out", sim); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	a, err := result.ReadFile(filepath.Join(sim, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.ReadFile(filepath.Join(atk, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if th := b.Runs[0].TheoryMaxInWindow; th != 100 {
		t.Errorf("-algo gcra: theory %d, want B+L = 100", th)
	}
	cmp := filepath.Join(dir, "cmp")
	if err := report.Compare(cmp, a, b, report.CompareOptions{NameA: "sim", NameB: "atk"}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(cmp, report.CompareFile))
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(s.url, "http://")
	for _, want := range []string{`<td class="l">gcra</td>`, `<td class="l">http@` + host + `</td>`, "mode http"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
}

// TestAttackStopsAtItsEnd: an attack at a rate the machine cannot send
// stops at its duration, counting what it did not send, instead of
// sending the backlog late for as long as that takes.
func TestAttackStopsAtItsEnd(t *testing.T) {
	s := startServe(t, "-limit", "1000000", "-window", "1s")
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	code, _, stderr := attackCLI(t, context.Background(), "-url", s.url, "-rate", "2e6", "-duration", "1s", "-max-inflight", "64", "-no-report", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("a 1s attack took %v", took)
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if l := r.Live; l.Scheduled < 1_900_000 || l.Unsent+l.Dropped == 0 {
		t.Errorf("scheduled %d, unsent %d, dropped %d, offered %d: want the 2e6 due counted, most not sent", l.Scheduled, l.Unsent, l.Dropped, r.Offered)
	}
}

// TestAttackSourceAddrs: against a server that limits each client IP,
// an attack from three source addresses is three clients: it gets three
// times what one address gets, each key always from its own address.
// The window is longer than the attack, so that each address gets
// exactly its limit.
func TestAttackSourceAddrs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.2 and up are loopback addresses on Linux only, unless configured")
	}
	eachClient(t, func(t *testing.T, client string) {
		// attackServe attacks a new `ratebench serve`, limiting by client
		// IP, and returns what the client counted and the server's totals.
		attackServe := func(t *testing.T, args ...string) (run result.Run, out, stdout string, admitted int64) {
			t.Helper()
			s := startServe(t, "-algo", "sliding-log", "-limit", "20", "-window", "1m")
			out = filepath.Join(t.TempDir(), "atk")
			argv := append([]string{"-url", s.url, "-rate", "300", "-duration", "400ms", "-no-report", "-out", out, "-client", client}, args...)
			code, stdout, stderr := attackCLI(t, context.Background(), argv...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			_, totalsLine := s.stop(t)
			admitted, rejected := totals(t, totalsLine)
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			run = res.Runs[0]
			if run.Admitted != admitted || run.Rejected != rejected || run.Errors != 0 || rejected == 0 {
				t.Errorf("client admitted %d, rejected %d, errors %v; server %d and %d", run.Admitted, run.Rejected, run.ErrorKinds, admitted, rejected)
			}
			return run, out, stdout, admitted
		}
		one, _, _, oneAdmitted := attackServe(t)
		if oneAdmitted != 20 || one.HTTP.SourceAddrs != nil {
			t.Errorf("from one address: admitted %d, sources %v; want 20 and none recorded", oneAdmitted, one.HTTP.SourceAddrs)
		}
		run, out, stdout, admitted := attackServe(t, "-source-addrs", "127.0.0.2-127.0.0.4")
		if admitted != 3*oneAdmitted {
			t.Errorf("from three addresses: admitted %d, want 3 x %d", admitted, oneAdmitted)
		}
		if !strings.Contains(stdout, "from 3 source addresses") {
			t.Errorf("stdout does not say where the requests left from:\n%s", stdout)
		}
		srcs := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
		if strings.Join(run.HTTP.SourceAddrs, ",") != strings.Join(srcs, ",") || run.KeyCount != 3 {
			t.Errorf("source_addrs %v, %d keys; want %v and a key for each", run.HTTP.SourceAddrs, run.KeyCount, srcs)
		}
		// The trace: key kN always from address N, 20 admitted from each.
		from := map[string]map[string]bool{}
		okFrom := map[string]int64{}
		for _, r := range traceRows(t, out) {
			if from[r["key"]] == nil {
				from[r["key"]] = map[string]bool{}
			}
			from[r["key"]][r["source"]] = true
			if r["status"] == "200" {
				okFrom[r["source"]]++
			}
		}
		for i, src := range srcs {
			key := "k" + strconv.Itoa(i)
			if len(from[key]) != 1 || !from[key][src] || okFrom[src] != 20 {
				t.Errorf("%s came from %v; %d admitted from %s, want 20", key, from[key], okFrom[src], src)
			}
		}
	})
}

// TestAttackCheck: attack evaluates -check on its one run, named http:
// a 300/s attack on a limit of 50/s is mostly rejected, so a condition
// that wants at least 20% rejected passes (exit 0) and one that wants 99%
// fails (exit 1, its line on the terminal and in result.json). The run
// is labelled as on the table: http@HOST.
func TestAttackCheck(t *testing.T) {
	s := startServe(t, "-algo", "gcra", "-limit", "50", "-window", "1s")
	for _, tc := range []struct {
		name, check string
		code        int
		line        string
	}{
		{name: "passes", check: "rejected_pct>=20", code: 0, line: "check PASS http@%s.rejected_pct>=20.00"},
		{name: "fails", check: "HTTP.rejected_pct>=99", code: 1, line: "check FAIL http@%s.rejected_pct>=99.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "atk")
			code, stdout, stderr := attackCLI(t, context.Background(), "-url", s.url+"/api", "-rate", "300", "-duration", "500ms",
				"-no-report", "-out", out, "-check", tc.check)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			host := strings.TrimPrefix(s.url, "http://")
			if line := fmt.Sprintf(tc.line, host); !strings.Contains(stdout, line) {
				t.Errorf("stdout lacks %q:\n%s", line, stdout)
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Checks) != 1 || res.Checks[0].Run != "http@"+host || res.Checks[0].Pass != (tc.code == 0) {
				t.Errorf("checks %+v, want one on http, pass %v", res.Checks, tc.code == 0)
			}
		})
	}
}
