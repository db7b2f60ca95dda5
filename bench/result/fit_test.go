package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFitString(t *testing.T) {
	ns := func(d time.Duration) *int64 { v := int64(d); return &v }
	sec := int64(time.Second)
	for _, tc := range []struct {
		name string
		fit  Fit
		want string
	}{
		{name: "bucket", fit: Fit{Algorithm: "gcra", Limit: 50, WindowNS: sec, Burst: 21, Scope: ScopeSource},
			want: "gcra of 50 per 1s with a burst of 21, per client address"},
		{name: "window on the Unix clock", fit: Fit{Algorithm: "fixed-window", Limit: 1000, WindowNS: sec, Burst: 1000, PhaseNS: 123e6, UnixPhaseNS: ns(999600 * time.Microsecond), Scope: ScopeGlobal},
			want: "fixed-window of 1,000 per 1s, windows on multiples of 1s of the Unix clock, for all clients together"},
		{name: "window off the Unix clock", fit: Fit{Algorithm: "fixed-window", Limit: 40, WindowNS: sec, Burst: 40, PhaseNS: 5e6, UnixPhaseNS: ns(250400 * time.Microsecond), Scope: ScopeKey},
			want: "fixed-window of 40 per 1s, windows starting 250ms after each multiple of 1s of the Unix clock, per key"},
		{name: "start unknown", fit: Fit{Algorithm: "sliding-counter", Limit: 40, WindowNS: sec, Burst: 40, PhaseNS: 7e6},
			want: "sliding-counter of 40 per 1s, windows starting 7ms into the run"},
	} {
		if got := tc.fit.String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadFileNoPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		source string
		ok     bool
	}{
		{name: "no limit known", source: "none", ok: true},
		{name: "limit 0 from flags is broken", source: "config", ok: false},
	} {
		path := filepath.Join(t.TempDir(), "result.json")
		r := &Result{Policy: PolicyJSON{WindowNS: int64(time.Second)}, Runs: []Run{{Algorithm: "http", HTTP: &HTTPStats{PolicySource: tc.source}}}}
		b, _ := json.Marshal(r)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
