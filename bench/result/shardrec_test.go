package result

import (
	"testing"
	"time"
)

func TestShardOf(t *testing.T) {
	at := time.Unix(0, 1_700_000_000_000_000_000)
	tests := []struct {
		name          string
		i, n          int
		at            time.Time
		clockErr      time.Duration
		wantNil       bool
		wantCount     int
		wantStartAtNS int64
	}{
		{name: "whole run, no start", i: 0, n: 1, wantNil: true},
		{name: "whole run, a start", i: 0, n: 1, at: at, wantCount: 1, wantStartAtNS: at.UnixNano()},
		{name: "shard without a start (sim)", i: 1, n: 3, clockErr: time.Millisecond, wantCount: 3},
		{name: "shard with a start", i: 2, n: 3, at: at, wantCount: 3, wantStartAtNS: at.UnixNano()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ShardOf(tc.i, tc.n, tc.at, tc.clockErr)
			if tc.wantNil {
				if s != nil {
					t.Fatalf("ShardOf = %+v, want nil", s)
				}
				return
			}
			if s == nil || s.Index != tc.i || s.Count != tc.wantCount || s.StartAtUnixNS != tc.wantStartAtNS || s.ClockErrorNS != int64(tc.clockErr) {
				t.Fatalf("ShardOf = %+v, want index %d count %d start %d clock error %v", s, tc.i, tc.wantCount, tc.wantStartAtNS, tc.clockErr)
			}
		})
	}
}

func TestStartLagWarnings(t *testing.T) {
	at := time.Unix(0, 1_700_000_000_000_000_000)
	runs := []Run{
		{Algorithm: "gcra"}, // a sim pass: no lag
		{Algorithm: "fixed-window", Live: &LiveStats{StartLagNS: int64(50 * time.Millisecond)}},
		{Algorithm: "sliding-log", Live: &LiveStats{StartLagNS: int64(150 * time.Millisecond)}},
	}
	tests := []struct {
		name   string
		maxLag time.Duration
		want   []string // the runs warned about
	}{
		{name: "none late", maxLag: time.Second},
		{name: "one late", maxLag: 100 * time.Millisecond, want: []string{"sliding-log"}},
		{name: "two late", maxLag: 10 * time.Millisecond, want: []string{"fixed-window", "sliding-log"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := StartLagWarnings(runs, 1, 2, at, tc.maxLag)
			if len(ws) != len(tc.want) {
				t.Fatalf("%d warnings, want %d: %+v", len(ws), len(tc.want), ws)
			}
			for i, w := range ws {
				if w.Kind != WarnStartLag || w.Run != tc.want[i] || w.Shard == nil || w.Shard.Index != 1 || w.Shard.Count != 2 ||
					w.Shard.StartAtUnixNS != at.UnixNano() || w.MaxStartLagNS != int64(tc.maxLag) {
					t.Errorf("warning %d: %+v, want start-lag of %s, shard 1/2", i, w, tc.want[i])
				}
			}
		})
	}
}
