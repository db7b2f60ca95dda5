package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// shardArgs is the seeded keyed sim run the shard tests split.
var shardArgs = []string{"run", "-algos", "gcra,fixed-window", "-keys", "20", "-workload", "poisson", "-rate", "300",
	"-duration", "5s", "-trace", "-seed", "7", "-no-report"}

// runShard runs shardArgs plus extra into dir/name and returns its folder.
func runShard(t *testing.T, dir, name string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	args := append(slices.Clone(shardArgs), extra...)
	code, _, stderr := runCLI(t, dir, append(args, "-out", out)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", name, code, stderr)
	}
	return out
}

// TestShardsMergeToTheWholeRun checks that N sim shards of one seeded
// keyed schedule, merged, give exactly the one-process run's counts, per-key
// admitted and most admitted in any W; with replicas too, since a shard
// routes each arrival to the replica the one-process run does.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	dir := t.TempDir()
	wholes := map[string]*result.Result{}
	for _, tc := range []struct {
		name  string
		n     int
		extra []string // the same for the whole run and the shards
		whole []string // the whole run's only
	}{
		{name: "one shard", n: 1},
		{name: "two shards", n: 2},
		{name: "three shards", n: 3},
		{name: "seven shards", n: 7},
		// 15/s a key over 3 replicas of 4/s: which replica an arrival
		// reaches decides whether it is admitted.
		{name: "three shards of three replicas", n: 3, extra: []string{"-replicas", "3", "-limit", "4"}},
		// One key is split by arrival index, as replicas are: three shards
		// keeping local state are three replicas, admitting up to 3x. Each
		// shard's own exact log saw a third of the arrivals; the merge
		// recounts the disagreement over all of them.
		{name: "one key over three shards is three replicas", n: 3, extra: []string{"-keys", "1"}, whole: []string{"-replicas", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.Join(tc.extra, "")
			wid := id + strings.Join(tc.whole, "")
			want := wholes[wid]
			if want == nil {
				whole := runShard(t, dir, "whole"+wid, append(slices.Clone(tc.extra), tc.whole...)...)
				var err error
				if want, err = result.ReadFile(filepath.Join(whole, "result.json")); err != nil {
					t.Fatal(err)
				}
				wholes[wid] = want
			}
			var dirs []string
			var err error
			for i := range tc.n {
				d := runShard(t, dir, fmt.Sprintf("n%d%s-s%d", tc.n, id, i), append([]string{"-shard", fmt.Sprintf("%d/%d", i, tc.n)}, tc.extra...)...)
				dirs = append(dirs, d)
				r, err := result.ReadFile(filepath.Join(d, "result.json"))
				if err != nil {
					t.Fatal(err)
				}
				if sh := r.Meta.Shard; tc.n > 1 && (sh == nil || sh.Index != i || sh.Count != tc.n || sh.StartAtUnixNS != 0) {
					t.Errorf("shard %d/%d: meta shard %+v", i, tc.n, sh)
				}
			}
			var got *result.Result
			if tc.n == 1 {
				if got, err = result.ReadFile(filepath.Join(dirs[0], "result.json")); err != nil {
					t.Fatal(err)
				}
				if got.Meta.Shard != nil {
					t.Errorf("meta shard %+v, want none for 0/1 (the whole schedule)", got.Meta.Shard)
				}
			} else {
				out := filepath.Join(dir, fmt.Sprintf("merged-%d%s", tc.n, id))
				code, stdout, stderr := runCLI(t, dir, append(append([]string{"merge"}, dirs...), "-out", out)...)
				if code != 0 {
					t.Fatalf("merge: exit %d: %s", code, stderr)
				}
				if !strings.Contains(stdout, "exact") {
					t.Errorf("merge did not merge the traces exactly: %s", stdout)
				}
				if got, err = result.ReadFile(filepath.Join(out, "result.json")); err != nil {
					t.Fatal(err)
				}
				if got.Meta.Shard != nil {
					t.Errorf("merged meta keeps shard %+v", got.Meta.Shard)
				}
				if mi := got.Meta.Merge; mi == nil || mi.Shards != tc.n || !mi.Traced || mi.ClockErrorNS != 0 {
					t.Errorf("merged meta merge %+v, want %d shards, traced, on one clock", mi, tc.n)
				}
			}
			if len(got.Runs) != len(want.Runs) {
				t.Fatalf("%d runs, want %d", len(got.Runs), len(want.Runs))
			}
			for j, w := range want.Runs {
				g := got.Runs[j]
				if g.Offered != w.Offered || g.Admitted != w.Admitted || g.Rejected != w.Rejected {
					t.Errorf("%s: offered/admitted/rejected %d/%d/%d, want %d/%d/%d", w.Label(),
						g.Offered, g.Admitted, g.Rejected, w.Offered, w.Admitted, w.Rejected)
				}
				if g.MaxAdmittedInWindow != w.MaxAdmittedInWindow {
					t.Errorf("%s: most admitted in any W %d, want %d", w.Label(), g.MaxAdmittedInWindow, w.MaxAdmittedInWindow)
				}
				if g.FalseAdmits != w.FalseAdmits || g.FalseRejects != w.FalseRejects || g.DisagreementPct != w.DisagreementPct || w.DisagreementPct < 0 {
					t.Errorf("%s: false admits/rejects %d/%d (%v%%), want %d/%d (%v%%)", w.Label(),
						g.FalseAdmits, g.FalseRejects, g.DisagreementPct, w.FalseAdmits, w.FalseRejects, w.DisagreementPct)
				}
				if g.JainFairness != w.JainFairness {
					t.Errorf("%s: Jain's index %v, want %v", w.Label(), g.JainFairness, w.JainFairness)
				}
				var keyMax int64
				for _, k := range w.Keys {
					keyMax = max(keyMax, k.MaxInWindow)
				}
				if keyMax != w.MaxAdmittedInWindow || keyMax == 0 {
					t.Errorf("%s: the keys' most in any W %d, the run's %d", w.Label(), keyMax, w.MaxAdmittedInWindow)
				}
				if !slices.Equal(g.Keys, w.Keys) {
					t.Errorf("%s: per-key counts\n%v\nwant\n%v", w.Label(), g.Keys, w.Keys)
				}
			}
		})
	}
}

// TestMergeShardsMismatched checks that shards which do not belong
// together are refused with exit 2, one line, and nothing written.
func TestMergeShardsMismatched(t *testing.T) {
	dir := t.TempDir()
	s0 := runShard(t, dir, "s0", "-shard", "0/3")
	s1 := runShard(t, dir, "s1", "-shard", "1/3")
	s2 := runShard(t, dir, "s2", "-shard", "2/3")
	other := runShard(t, dir, "other-seed", "-shard", "2/3", "-seed", "8")
	whole := runShard(t, dir, "whole")
	for _, tc := range []struct {
		name   string
		inputs []string
		want   string
	}{
		{name: "different seed", inputs: []string{s0, s1, other}, want: "seed"},
		{name: "a shard twice", inputs: []string{s0, s1, s1, s2}, want: "both shard 1/3"},
		{name: "a missing shard", inputs: []string{s0, s1}, want: "shard 2/3 is missing"},
		{name: "a whole run among shards", inputs: []string{s0, s1, s2, whole}, want: "not a shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "merged")
			code, _, stderr := runCLI(t, dir, append(append([]string{"merge"}, tc.inputs...), "-out", out)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, stderr)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written: %v", out, err)
			}
		})
	}
}

// TestShardBadInput checks the usage errors of -shard and -start-at.
func TestShardBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "index past N", args: []string{"run", "-shard", "3/2"}, want: "-shard"},
		{name: "negative index", args: []string{"run", "-shard", "-1/2"}, want: "-shard"},
		{name: "not I/N", args: []string{"run", "-shard", "x"}, want: "-shard"},
		{name: "zero N", args: []string{"run", "-shard", "0/0"}, want: "-shard"},
		{name: "bad start", args: []string{"run", "-shard", "0/2", "-start-at", "soon"}, want: "-start-at"},
		{name: "with a scenario", args: []string{"run", "-scenario", "default", "-shard", "0/2"}, want: "-scenario"},
		{name: "live without start", args: []string{"run", "-mode", "live", "-shard", "0/2"}, want: "-start-at"},
		{name: "attack without start", args: []string{"attack", "-url", "http://127.0.0.1:1/", "-rate", "10", "-shard", "1/2"}, want: "-start-at"},
		{name: "attack bad shard", args: []string{"attack", "-url", "http://127.0.0.1:1/", "-rate", "10", "-shard", "2/2"}, want: "-shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runCLI(t, dir, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, stderr)
			}
			if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%s holds %d entries, want none", dir, len(entries))
			}
		})
	}
}

// TestShardSaysSo checks what a shard says on stderr: a split that one
// shard carries most of, and a live shard that starts after -start-at
// plus -max-start-lag.
func TestShardSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "uneven split", args: []string{"run", "-algos", "gcra", "-workload", "zipf", "-keys", "20", "-rate", "100",
			"-duration", "1s", "-no-report", "-shard", "0/7"}, want: "cannot be split evenly"},
		{name: "late start", args: []string{"run", "-mode", "live", "-algos", "gcra", "-rate", "100", "-duration", "300ms",
			"-no-report", "-shard", "1/2", "-start-at", strconv.FormatInt(time.Now().Add(-20*time.Millisecond).UnixNano(), 10),
			"-max-start-lag", "1ms"}, want: "began"},
		// Months late: the whole pass is overdue, so it starts now
		// rather than send its schedule at once.
		{name: "start long past", args: []string{"run", "-mode", "live", "-algos", "gcra", "-rate", "100", "-duration", "100ms",
			"-no-report", "-shard", "1/2", "-start-at", "2026-01-01T00:00:00Z"}, want: "began"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runCLI(t, dir, append(tc.args, "-out", filepath.Join(dir, "out"))...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want %q", stderr, tc.want)
			}
		})
	}
}
