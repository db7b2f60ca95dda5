package main

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/httplimit"
)

// tableFullLimiter admits keys that start with "old-" and refuses every
// other as a full key table would, with a minute until a slot frees.
type tableFullLimiter struct{}

func (tableFullLimiter) Allow(_ time.Duration, key string, _ int64) (algorithms.Decision, error) {
	if strings.HasPrefix(key, "old-") {
		return algorithms.Decision{Allowed: true, Remaining: 1}, nil
	}
	return algorithms.Decision{TableFull: true, RetryAfter: time.Minute, ResetAfter: time.Minute}, nil
}

// TestServeCountsTableFull: refusals by a full key table show as
// table_full in the per-second line and in the totals, within rejected.
func TestServeCountsTableFull(t *testing.T) {
	var f serveFlags
	f.register(flag.NewFlagSet("serve", flag.ContinueOnError))
	mw, err := httplimit.New(httplimit.Config{Policy: algorithms.Policy{Limit: 2, Window: time.Minute},
		Limiter: tableFullLimiter{}, Key: httplimit.KeyHeader("X-API-Key")})
	if err != nil {
		t.Fatal(err)
	}
	d := runDirect(t, &f, mw)
	url := "http://" + d.ln.Addr().String() + "/"
	for _, c := range []struct {
		key    string
		status int
	}{
		{"old-1", 200}, // held: decided on its quota
		{"new-1", 429}, // refused: the table is full
		{"new-2", 429}, // another
	} {
		resp, body := get(t, url, "X-API-Key: "+c.key)
		if resp.StatusCode != c.status {
			t.Errorf("key %s: status %d, want %d (%s)", c.key, resp.StatusCode, c.status, body)
		}
		if c.status == 429 && (resp.Header.Get("Retry-After") != "60" || !strings.Contains(body, "key table is full")) {
			t.Errorf("key %s: Retry-After %q, body %s; want 60 and the table named", c.key, resp.Header.Get("Retry-After"), body)
		}
	}
	d.stderr.waitFor(t, "admitted 1 rejected 2 errors 0 bad_keys 0 table_full 2\n", 3*time.Second)
	if _, err := d.stop(t, 5*time.Second); err != nil {
		t.Errorf("serve returned %v", err)
	}
	if out := d.stdout.String(); !strings.Contains(out, "totals: admitted 1 rejected 2 errors 0 bad_keys 0 table_full 2 in ") {
		t.Errorf("totals %q: want admitted 1, rejected 2 of which table_full 2", out)
	}
}
