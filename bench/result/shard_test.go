package result

import (
	"errors"
	"strings"
	"testing"
)

// shardInput is a result of no runs that is shard i of n, seed seed.
func shardInput(name string, i, n int, seed uint64, start int64) Input {
	r := &Result{Meta: Meta{Seed: seed, Mode: "sim", Shard: &Shard{Index: i, Count: n, StartAtUnixNS: start}},
		Workload: map[string]any{"name": "poisson", "keys": 20}}
	return Input{Name: name, Result: r}
}

func TestMergeChecksShards(t *testing.T) {
	whole := Input{Name: "whole", Result: &Result{Meta: Meta{Seed: 1, Mode: "sim"}}}
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   string // "" for a merge that goes through
	}{
		{name: "all shards", inputs: []Input{shardInput("a", 1, 2, 1, 0), shardInput("b", 0, 2, 1, 0)}},
		{name: "a shard twice", inputs: []Input{shardInput("a", 0, 2, 1, 0), shardInput("b", 0, 2, 1, 0)}, want: "both shard 0/2"},
		{name: "a missing shard", inputs: []Input{shardInput("a", 0, 3, 1, 0), shardInput("b", 1, 3, 1, 0)}, want: "shard 2/3 is missing"},
		{name: "different seeds", inputs: []Input{shardInput("a", 0, 2, 1, 0), shardInput("b", 1, 2, 2, 0)}, want: "seed"},
		{name: "different starts", inputs: []Input{shardInput("a", 0, 2, 1, 0), shardInput("b", 1, 2, 1, 5)}, want: "starts at"},
		{name: "different counts", inputs: []Input{shardInput("a", 0, 2, 1, 0), shardInput("b", 1, 3, 1, 0)}, want: "shard of 3"},
		{name: "a whole run", inputs: []Input{whole, shardInput("b", 0, 1, 1, 0)}, want: "not a shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.inputs)
			if tc.want == "" {
				if err != nil || m.Meta.Shard != nil {
					t.Fatalf("Merge: %v, shard %+v; want a merge without a shard", err, m.Meta.Shard)
				}
				return
			}
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Merge: %v; want one line of ErrMismatch with %q", err, tc.want)
			}
		})
	}
}

// TestMergeShardClocks: shards on one host, or simulated, share a clock;
// on several hosts the two largest -clock-error are added to each run's
// timing uncertainty, and without them the merge says the offsets are
// unknown.
func TestMergeShardClocks(t *testing.T) {
	// An attack's instants are uncertain by its p99 of answer - send; a
	// live run's limiters in the process decide at its own instants.
	attack := func(i int, host string, clockErr int64) Input {
		in := shardInput(host, i, 3, 1, 1e18)
		in.Result.Meta.Mode = "http"
		in.Result.Meta.Shard.Host, in.Result.Meta.Shard.ClockErrorNS = host, clockErr
		in.Result.Runs = []Run{{Algorithm: "http", Offered: 10, TimingUncertaintyNS: 1000}}
		return in
	}
	live := func(i int, host string, clockErr int64) Input {
		in := attack(i, host, clockErr)
		in.Result.Meta.Mode = "live"
		in.Result.Runs = []Run{{Algorithm: "gcra", Offered: 10}}
		return in
	}
	sim := func(i int) Input {
		in := shardInput("s", i, 3, 1, 0)
		in.Result.Runs = []Run{{Algorithm: "gcra", Offered: 10}}
		return in
	}
	for _, tc := range []struct {
		name        string
		inputs      []Input
		clock       int64 // MergeInfo.ClockErrorNS
		uncertainty int64
	}{
		{name: "simulated", inputs: []Input{sim(0), sim(1), sim(2)}, clock: 0, uncertainty: 0},
		{name: "one host", inputs: []Input{attack(0, "a", 0), attack(1, "a", 0), attack(2, "a", 0)}, clock: 0, uncertainty: 1000},
		{name: "three hosts with clock errors", inputs: []Input{attack(0, "a", 300), attack(1, "b", 500), attack(2, "c", 200)}, clock: 800, uncertainty: 1800},
		{name: "live on three hosts with clock errors", inputs: []Input{live(0, "a", 300), live(1, "b", 500), live(2, "c", 200)}, clock: 800, uncertainty: 800},
		{name: "three hosts, one error unknown", inputs: []Input{attack(0, "a", 300), attack(1, "b", 0), attack(2, "c", 200)}, clock: -1, uncertainty: 1000},
		{name: "hosts not said", inputs: []Input{live(0, "", 0), live(1, "", 0), live(2, "", 0)}, clock: -1, uncertainty: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			info := m.Meta.Merge
			if info == nil || info.Shards != 3 || info.Inputs != 3 || info.ClockErrorNS != tc.clock {
				t.Fatalf("meta merge %+v, want 3 shards with clock error %d", info, tc.clock)
			}
			if got := m.Runs[0].TimingUncertaintyNS; got != tc.uncertainty {
				t.Errorf("timing uncertainty %d ns, want %d", got, tc.uncertainty)
			}
			if warned := m.Meta.Warned(WarnClockUnknown); warned != (tc.clock < 0) {
				t.Errorf("warnings %+v: clock unknown said %v, want %v", m.Meta.Warnings, warned, tc.clock < 0)
			}
		})
	}
}
