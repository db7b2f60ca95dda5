//go:build !race && linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/probe/corpus"
	"github.com/ratebench/ratebench/bench/result"
)

// The tests here probe and attack a real nginx limiting with limit_req, a
// private one per test (corpus.StartNginx): its own prefix folder,
// configuration, logs and loopback port, started and stopped by the test.
// Linux only: the kernel stops nginx when the test process dies
// (Pdeathsig), so that a killed test leaves no server behind.
//
// The policy is limit_req_zone rate=50r/s and limit_req burst=20 nodelay:
// 50 per second with a capacity of 21 (nginx's burst counts the requests
// on top of the first), in ratebench's terms nginx-limit-req of 50 per 1s
// with a burst of 21, a bucket.

// nginxRate and nginxCapacity are the policy of nginxConfig.
const (
	nginxRate     = 50
	nginxCapacity = 21
)

// nginxConfig is the tests' limit_req policy with rejectStatus as its
// limit_req_status (0: nginx's default, 503).
func nginxConfig(rejectStatus int) corpus.NginxConfig {
	return corpus.NginxConfig{Rate: nginxRate, Per: time.Second, Burst: nginxCapacity - 1, RejectStatus: rejectStatus}
}

// startNginx starts nginx with nginxConfig on a free loopback port in a
// folder of the test's; the test's cleanup stops it. A missing nginx
// skips the test, or fails it under RATEBENCH_REQUIRE_NGINX=1.
func startNginx(t *testing.T, rejectStatus int) *corpus.Nginx {
	t.Helper()
	s, err := corpus.StartNginx(context.Background(), t.TempDir(), nginxConfig(rejectStatus))
	switch {
	case errors.Is(err, corpus.ErrMissing) && os.Getenv(corpus.NginxRequireEnv) == "1":
		t.Fatalf("%s=1 but %v", corpus.NginxRequireEnv, err)
	case errors.Is(err, corpus.ErrMissing):
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("nginx: %v", err)
		}
	})
	return s
}

// nginxStatuses counts the access log's lines by status; call it after
// the nginx has stopped.
func nginxStatuses(t *testing.T, s *corpus.Nginx) map[string]int64 {
	t.Helper()
	n, err := s.Statuses()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// buckets are the algorithms that admit the same requests for the same
// rate and capacity, nginx's among them (see corpus.Buckets).
var buckets = corpus.Buckets()

// TestNginxProbe: probed, nginx's limit_req (rate=50r/s burst=20 nodelay)
// is found to be a bucket of 50 per second within 1% with a capacity of 21
// within 1, denied requests not counted, with at least 99% of the scored
// requests predicted and at most 5% too close to call, within a minute
// and 10,000 requests; without a limit_req_status its rejections are
// found to be answered with nginx's default, 503. (With
// limit_req_status 429, the same nginx is TestCorpus's nginx-r-s.)
func TestNginxProbe(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rejectStatus int // limit_req_status; 0: none, nginx's default
		want         int // the reject status the probe should find
	}{
		{name: "default status 503", want: 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startNginx(t, tc.rejectStatus)
			dir := t.TempDir()
			out := filepath.Join(dir, "probe")
			start := time.Now()
			code, stdout, stderr := runCLI(t, dir, "probe", "-url", s.URL, "-no-report", "-out", out)
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
			code, _, stderr := attackCLI(t, context.Background(), "-url", s.URL, "-workload", tc.workload,
				"-rate", strconv.Itoa(rate), "-duration", duration.String(), "-no-report", "-out", out)
			took := time.Since(start)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// Stopped, nginx has written every line.
			if err := s.Stop(); err != nil {
				t.Fatalf("nginx: %v", err)
			}
			logged := nginxStatuses(t, s)
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
