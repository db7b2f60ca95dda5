package result

import (
	"os"
	"time"
)

// ShardOf is the Shard record of part i of n of a schedule started at at
// (zero: not given), on this host, whose clock may be clockErr off; nil
// for a whole run (n <= 1) without a start.
func ShardOf(i, n int, at time.Time, clockErr time.Duration) *Shard {
	if n <= 1 && at.IsZero() {
		return nil
	}
	s := &Shard{Index: i, Count: max(n, 1), ClockErrorNS: int64(clockErr)}
	if !at.IsZero() {
		s.StartAtUnixNS = at.UnixNano()
	}
	s.Host, _ = os.Hostname()
	return s
}

// StartLagWarnings are the WarnStartLag warnings of the runs whose live
// pass began more than maxLag after the start planned for it
// (Live.StartLagNS); each names part i of n started at at.
func StartLagWarnings(runs []Run, i, n int, at time.Time, maxLag time.Duration) []Warning {
	var out []Warning
	for _, run := range runs {
		if l := run.Live; l != nil && time.Duration(l.StartLagNS) > maxLag {
			sh := &Shard{Index: i, Count: max(n, 1), StartAtUnixNS: at.UnixNano()}
			out = append(out, Warning{Kind: WarnStartLag, Run: run.Label(), Shard: sh,
				StartLagNS: l.StartLagNS, MaxStartLagNS: int64(maxLag)})
		}
	}
	return out
}
