package result_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// TestWarningJSON: a warning is written as an object of stable names, its
// durations in ns and its unused fields left out, and read back the same;
// the sentences of older files are read as WarnText warnings.
func TestWarningJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want result.Warning
		// write is false for the old form, which is read but not written.
		write bool
	}{
		{name: "late", json: `{"kind":"late","run":"gcra","late_pct":7.5,"late_after_ns":1000000,"lateness_p99_ns":3000000}`,
			want:  result.Warning{Kind: result.WarnLate, Run: "gcra", LatePct: 7.5, LateAfterNS: 1e6, LatenessP99NS: 3e6},
			write: true},
		{name: "dropped by an attack", json: `{"kind":"dropped","run":"http","http":true,"n":5,"of":100,"max_inflight":7}`,
			want:  result.Warning{Kind: result.WarnDropped, Run: "http", HTTP: true, N: 5, Of: 100, MaxInFlight: 7},
			write: true},
		{name: "failed", json: `{"kind":"failed","run":"http","http":true,"n":3,"of":10,"error_kinds":{"timeout":3}}`,
			want:  result.Warning{Kind: result.WarnFailed, Run: "http", HTTP: true, N: 3, Of: 10, ErrorKinds: map[string]int64{"timeout": 3}},
			write: true},
		{name: "start lag", json: `{"kind":"start-lag","run":"gcra","shard":{"index":1,"count":2,"start_at_unix_ns":5},"start_lag_ns":300,"max_start_lag_ns":100}`,
			want:  result.Warning{Kind: result.WarnStartLag, Run: "gcra", Shard: &result.Shard{Index: 1, Count: 2, StartAtUnixNS: 5}, StartLagNS: 300, MaxStartLagNS: 100},
			write: true},
		{name: "merged workloads", json: `{"kind":"merge-workloads","inputs":["a","b"],"workloads":["boundary","steady"]}`,
			want:  result.Warning{Kind: result.WarnMergeWorkloads, Inputs: []string{"a", "b"}, Workloads: []string{"boundary", "steady"}},
			write: true},
		{name: "no fields", json: `{"kind":"max-lower-bound"}`, want: result.Warning{Kind: result.WarnMaxLowerBound}, write: true},
		{name: "old sentence", json: `"gcra: 5 of 100 arrivals (5.00%) dropped at -max-inflight 7"`,
			want: result.Warning{Kind: result.WarnText, Text: "gcra: 5 of 100 arrivals (5.00%) dropped at -max-inflight 7"}},
		{name: "old sentence, spaced", json: ` "merge: x" `, want: result.Warning{Kind: result.WarnText, Text: "merge: x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got result.Warning
			if err := json.Unmarshal([]byte(tc.json), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("read %s:\n got %+v\nwant %+v", tc.json, got, tc.want)
			}
			if !tc.write {
				return
			}
			b, err := json.Marshal(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.json {
				t.Errorf("wrote %s, want %s", b, tc.json)
			}
		})
	}
}
