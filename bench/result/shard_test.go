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
