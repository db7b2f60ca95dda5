//go:build !race && linux

package main

import (
	"strconv"
	"testing"

	"github.com/ratebench/ratebench/bench/probe/corpus"
)

// TestHeadersCorpus: express-rate-limit and ulule/limiter, whose counts
// are exact, answering bursts over 64 connections from three client
// addresses, are never contradicted, in five attacks each; nor paced at
// half their limit over one connection, where every answer comes before
// the next request is sent, so that remaining counts are put to the test
// on any host, however slow its answers. A target
// whose program is missing is skipped (failed under its
// corpus.RequireEnv).
func TestHeadersCorpus(t *testing.T) {
	for _, name := range []string{corpus.Express, corpus.Ulule} {
		t.Run(name, func(t *testing.T) {
			tg := startCorpus(t, name)
			// Three bursts 0.7 window apart: of 3L, L per address, which
			// spend each window at once, or (every other run) of 1.5L,
			// under the limit, which leave some for the next burst.
			every := tg.Truth.Window * 7 / 10
			rate := float64(tg.Truth.Limit) / tg.Truth.Window.Seconds() / 2
			paced := attackHeaders(t, tg.URL, "-workload", "constant", "-rate", strconv.FormatFloat(rate, 'g', -1, 64),
				"-duration", (2 * tg.Truth.Window).String(), "-connections", "1")
			t.Logf("paced: %d contradictions; remaining %d checked, %d untested", contradictions(paced), paced.RemainingChecked, paced.RemainingUntested)
			if n := contradictions(paced); n != 0 {
				t.Errorf("paced: %d contradictions of %s, whose counts are exact: %+v", n, name, *paced)
			}
			if paced.RemainingChecked == 0 {
				t.Errorf("paced at %g/s over one connection, no remaining count was tested: %+v", rate, *paced)
			}
			for i := range 5 {
				size := 3 * tg.Truth.Limit
				if i%2 == 1 {
					size /= 2
				}
				h := attackHeaders(t, tg.URL, "-workload", "burst", "-burst-size", strconv.FormatInt(size, 10), "-burst-every", every.String(),
					"-duration", (3 * every).String(), "-connections", "64", "-source-addrs", "127.0.0.2-127.0.0.4", "-seed", strconv.Itoa(i+1))
				t.Logf("run %d: %d contradictions; remaining %d checked, %d untested; Retry-After %d checked, %d untested, %d absent; reset %d checked, %d untested",
					i+1, contradictions(h), h.RemainingChecked, h.RemainingUntested, h.RetryAfterChecked, h.RetryAfterUntested, h.RejectedNoRetryAfter, h.ResetChecked, h.ResetUntested)
				if n := contradictions(h); n != 0 {
					t.Errorf("run %d: %d contradictions of %s, whose counts are exact: %+v", i+1, n, name, *h)
				}
			}
		})
	}
}
