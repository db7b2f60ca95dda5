//go:build !race

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestServeFullKeyTable: a client that makes up far more keys than
// -max-keys cannot flush an exhausted key out of the table and so reset
// its quota: with -on-full reject the made-up keys are refused instead
// (429, table_full), and the exhausted key stays exhausted. With
// evict-lossy it does not, and the totals count the lossy evictions.
func TestServeFullKeyTable(t *testing.T) {
	const maxKeys, flood = 64, 5000
	for _, tc := range []struct {
		name          string
		onFull        string // "" for the default
		victimAfter   int    // the exhausted key's status after the flood
		wantTotals    string // regexp of the totals line
		minLossyEvict int64  // lossy_evictions at least this; -1: absent from the totals
	}{
		{name: "reject is the default", victimAfter: 429,
			// 5 + 63 admitted; the victim's 6th and 7th and the 4,937 keys
			// past a full table rejected.
			wantTotals: `totals: admitted 68 rejected 4939 errors 0 bad_keys 0 table_full 4937 in `, minLossyEvict: -1},
		{name: "reject", onFull: "reject", victimAfter: 429,
			wantTotals: `totals: admitted 68 rejected 4939 errors 0 bad_keys 0 table_full 4937 in `, minLossyEvict: -1},
		{name: "evict-lossy forgets the victim's spent quota", onFull: "evict-lossy", victimAfter: 200,
			// Every made-up key past the 63rd evicted a key whose window
			// was still running.
			wantTotals: `totals: admitted 5006 rejected 1 errors 0 bad_keys 0 table_full 0 lossy_evictions (\d+) in `, minLossyEvict: flood - (maxKeys - 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-algo", "sliding-log", "-key", "header:X-API-Key", "-limit", "5", "-window", "10m", "-max-keys", strconv.Itoa(maxKeys)}
			if tc.onFull != "" {
				args = append(args, "-on-full", tc.onFull)
			}
			s := startServe(t, args...)
			for i := 1; i <= 6; i++ {
				resp, body := get(t, s.url, "X-API-Key: victim")
				want := 200
				if i == 6 {
					want = 429
				}
				if resp.StatusCode != want {
					t.Fatalf("victim's request %d: status %d, want %d (%s)", i, resp.StatusCode, want, body)
				}
				if i == 6 && resp.Header.Get("Retry-After") != "600" {
					t.Fatalf("victim's 6th request: Retry-After %q, want 600", resp.Header.Get("Retry-After"))
				}
			}
			for i := range flood {
				resp, body := get(t, s.url, fmt.Sprintf("X-API-Key: made-up-%d", i))
				if resp.StatusCode != 200 && !(resp.StatusCode == 429 && strings.Contains(body, "key table is full")) {
					t.Fatalf("made-up key %d: status %d (%s), want 200 or a full table's 429", i, resp.StatusCode, body)
				}
			}
			resp, body := get(t, s.url, "X-API-Key: victim")
			if resp.StatusCode != tc.victimAfter {
				t.Fatalf("victim after %d made-up keys: status %d, want %d (%s)", flood, resp.StatusCode, tc.victimAfter, body)
			}
			if tc.victimAfter == 429 && !strings.Contains(body, "quota-exceeded") {
				t.Errorf("victim after the flood: %s, want its own quota exceeded", body)
			}
			code, out := s.stop(t)
			if code != 0 {
				t.Errorf("serve exited %d", code)
			}
			m := regexp.MustCompile(tc.wantTotals).FindStringSubmatch(out)
			switch {
			case m == nil:
				t.Errorf("totals %q, want %s", out, tc.wantTotals)
			case tc.minLossyEvict < 0 && strings.Contains(out, "lossy_evictions"):
				t.Errorf("totals %q: lossy_evictions without evict-lossy", out)
			case tc.minLossyEvict >= 0:
				if n, _ := strconv.ParseInt(m[1], 10, 64); n < tc.minLossyEvict {
					t.Errorf("lossy_evictions %d, want at least %d", n, tc.minLossyEvict)
				}
			}
			onFull := tc.onFull
			if onFull == "" {
				onFull = "reject"
			}
			if want := fmt.Sprintf("at most %d keys, %s when full", maxKeys, onFull); !strings.Contains(s.stderr.String(), want) {
				t.Errorf("log %q does not say %q", s.stderr.String(), want)
			}
		})
	}
}
