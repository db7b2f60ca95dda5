package result_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
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

// TestMetaWarningsBothForms: a result.json whose warnings mix the old
// sentences and records reads every one, in order, into a reused value too.
func TestMetaWarningsBothForms(t *testing.T) {
	in := `{"version":"0.1.0","warnings":["the old way",{"kind":"unsent","run":"gcra","n":8,"of":18}]}`
	want := []result.Warning{
		{Kind: result.WarnText, Text: "the old way"},
		{Kind: result.WarnUnsent, Run: "gcra", N: 8, Of: 18},
	}
	m := result.Meta{Warnings: []result.Warning{{Kind: result.WarnLossy, N: 4, Text: "stale"}}}
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Warnings, want) {
		t.Errorf("warnings:\n got %+v\nwant %+v", m.Warnings, want)
	}
}

// TestMergeWarnings: what a merge cannot combine it says as records, each
// naming its run: different workloads, URLs, and latency without a
// histogram.
func TestMergeWarnings(t *testing.T) {
	a, b := resulttest.Fixture(), resulttest.Fixture()
	b.Workload = map[string]any{"name": "steady"}
	a.Runs[0].HTTP = &result.HTTPStats{URL: "http://a/"}
	b.Runs[0].HTTP = &result.HTTPStats{URL: "http://b/"}
	shaper := slices.IndexFunc(b.Runs, func(r result.Run) bool { return r.LatencyHDR != "" })
	b.Runs[shaper].LatencyHDR = ""
	m, err := result.Merge([]result.Input{{Name: "a", Result: a}, {Name: "b", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	want := []result.Warning{
		{Kind: result.WarnMergeWorkloads, Inputs: []string{"a", "b"}, Workloads: []string{a.WorkloadName(), "steady"}},
		{Kind: result.WarnMergeURLs, Run: a.Runs[0].Label(), URLs: []string{"http://a/", "http://b/"}},
		{Kind: result.WarnMergeLatency, Run: a.Runs[shaper].Label()},
		{Kind: result.WarnMaxLowerBound},
	}
	if !reflect.DeepEqual(m.Meta.Warnings, want) {
		t.Errorf("warnings:\n got %+v\nwant %+v", m.Meta.Warnings, want)
	}
	for _, w := range m.Meta.Warnings {
		if s := resulttest.Sentences(w); s != nil {
			t.Errorf("%s warning holds sentences %q: records hold numbers and names", w.Kind, s)
		}
	}
}

// TestReadCommittedResults: every result.json committed under results/
// reads, and so does one whose warnings are the sentences of older files.
func TestReadCommittedResults(t *testing.T) {
	var paths []string
	err := filepath.WalkDir("../../results", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "result.json" {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil || len(paths) == 0 {
		t.Fatalf("no result.json under results/ (%v)", err)
	}
	for _, p := range paths {
		if _, err := result.ReadFile(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["meta"].(map[string]any)["warnings"] = []string{"merge: an older sentence"}
	old := filepath.Join(t.TempDir(), "result.json")
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := result.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	if want := []result.Warning{{Kind: result.WarnText, Text: "merge: an older sentence"}}; !reflect.DeepEqual(r.Meta.Warnings, want) {
		t.Errorf("warnings %+v, want %+v", r.Meta.Warnings, want)
	}
}

// TestNoSentenceConstants: package result states warnings as records and
// keeps no sentence for report to say; its string constants are names.
func TestNoSentenceConstants(t *testing.T) {
	sentence := regexp.MustCompile(`(?m)^\t?(const )?\w+( \w+)? = "[^"\n]* [^"\n]* [^"\n]* [^"\n]*"`)
	for _, m := range resulttest.SourceMatches(t, sentence) {
		t.Errorf("holds a sentence constant: %s", m)
	}
}
