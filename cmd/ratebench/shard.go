package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/ratebench/ratebench/bench/pace"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// defaultMaxStartLag is how late a shard may start after -start-at
// before it says so.
const defaultMaxStartLag = 100 * time.Millisecond

// shardFlags are the flags that make a run one shard of a schedule split
// over several processes: -shard, -start-at and -max-start-lag.
type shardFlags struct {
	shard, startAt   string
	maxLag, clockErr time.Duration
}

func (f *shardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "0/1", "play part I of N of the schedule (keys split over N processes, balancing expected arrivals; one key: arrival i goes to i mod N); merge the N results with ratebench merge")
	fs.StringVar(&f.startAt, "start-at", "", "instant every shard starts at, RFC 3339 or Unix ns (required for live shards with N > 1; sim: recorded, the start is the virtual zero)")
	durationVar(fs, &f.maxLag, "max-start-lag", defaultMaxStartLag, "say so when a shard starts more than this after -start-at")
	durationVar(fs, &f.clockErr, "clock-error", 0, "how far this host's clock may be from true time (e.g. chronyc tracking: |System time| + Root dispersion); merge adds the two largest of the shards' to the timing uncertainty (0: unknown; shards on one host share a clock)")
}

// shardRun is a checked -shard, -start-at and -max-start-lag.
type shardRun struct {
	sh               workload.Shard
	at               time.Time // zero: not given
	maxLag, clockErr time.Duration
}

// resolve checks the flags; live runs (live mode, attack) need -start-at
// when N > 1.
func (f *shardFlags) resolve(live bool) (shardRun, error) {
	sh, err := workload.ParseShard(f.shard)
	if err != nil {
		return shardRun{}, usagef("-shard %v", err)
	}
	r := shardRun{sh: sh, maxLag: f.maxLag, clockErr: f.clockErr}
	if f.maxLag < 0 {
		return r, usagef("-max-start-lag %v must be >= 0", f.maxLag)
	}
	if f.clockErr < 0 {
		return r, usagef("-clock-error %v must be >= 0", f.clockErr)
	}
	if f.startAt != "" {
		if r.at, err = parseInstant(f.startAt); err != nil {
			return r, usagef("-start-at %q: want RFC 3339 (2026-12-01T10:00:00Z) or Unix nanoseconds", f.startAt)
		}
	}
	if live && sh.N > 1 && r.at.IsZero() {
		return r, usagef("-shard %s: live shards need -start-at, the same instant for every shard, so that they share one clock", sh)
	}
	return r, nil
}

// parseInstant parses RFC 3339 or Unix nanoseconds.
func parseInstant(s string) (time.Time, error) {
	if ns, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(0, ns).UTC(), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// meta is the shard as result.json records it; nil for a whole run
// without -start-at.
func (r shardRun) meta() *result.Shard { return result.ShardOf(r.sh.I, r.sh.N, r.at, r.clockErr) }

// balance says when one shard expects much more than 1/N of src's
// arrivals (more than 1.5/N): that host carries more of the load.
func (r shardRun) balance(src workload.Source) []string {
	if r.sh.Whole() {
		return nil
	}
	p := workload.PlanShards(src, r.sh.N)
	n := float64(r.sh.N)
	if m := p.MaxShare(); m > 1.5/n {
		return []string{fmt.Sprintf("-shard %s: the keys cannot be split evenly: one shard expects %.3g%% of the arrivals, not %.3g%% (this one %.3g%%)",
			r.sh, 100*m, 100/n, 100*p.Share[r.sh.I])}
	}
	return nil
}

// wait waits for -start-at, when given; false when ctx is done first, so
// that an interrupt before the start leaves nothing behind.
func (r shardRun) wait(ctx context.Context) bool {
	return r.at.IsZero() || pace.SleepUntil(ctx, r.at)
}

// lagWarnings say which passes began more than -max-start-lag after the
// start -start-at planned for them.
func (r shardRun) lagWarnings(runs []result.Run) []result.Warning {
	return result.StartLagWarnings(runs, r.sh.I, r.sh.N, r.at, r.maxLag)
}
