package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/measure"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// Config is what an engine needs besides its targets.
type Config struct {
	Policy algorithms.Policy
	// Workload is where the arrivals come from: a generator's Source,
	// which a workload.Spec's Source method makes, or workload.Arrivals
	// held in memory.
	Workload workload.Source
	// Reference, when set, builds the exact limiter (sliding-log, keyed
	// like the targets) whose decisions on the same arrivals the targets
	// are compared with.
	Reference func() (algorithms.Limiter, error)
	// Span is the workload's length in virtual time: 0 means
	// Workload.Span(); a whole trace (Duration 0) gives its last instant
	// plus 1ns (workload.Info.Span). A live pass stops sending at its span.
	Span time.Duration
	// Bin is the width of a series bin; 0 picks W/10, widened so that a
	// run has at most 4000 bins, or for the boundary workload the span of
	// each half of an attack, so that a zoom on an edge can show it.
	Bin      time.Duration
	Progress call.Progress
	// Trace, when set, receives every request of the run, in send order
	// (requests.csv). Nil costs nothing on the hot path.
	Trace call.Tracer
	// Shard, when not the whole schedule, plays only that shard's part of
	// the workload (Workload.Open): the same seeded schedule, filtered.
	Shard workload.Shard
}

// Length returns Span, or Workload.Span() when Span is 0 (0 without a
// workload).
func (c Config) Length() time.Duration {
	if c.Span > 0 || c.Workload == nil {
		return c.Span
	}
	return c.Workload.Span()
}

// Open opens the stream of the workload's arrivals in the shard the config plays.
func (c Config) Open() (workload.Stream, error) {
	if c.Workload == nil {
		return nil, errors.New("bench: the config has no workload")
	}
	st, err := c.Workload.Open(c.Shard)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return st, nil
}

// checkInterval is how many arrivals pass between two looks at the context
// and the progress bar.
const checkInterval = 1 << 14

// bin returns the series bin width for a run.
func (c Config) bin() int64 {
	if c.Bin > 0 {
		return int64(c.Bin)
	}
	return SeriesBin(c.Policy.Window, c.Length(), c.Workload)
}

// maxEdgeBins bounds the bins of a boundary run's series, which are as
// fine as its attacks.
const maxEdgeBins = 20000

// SeriesBin is the series bin (ns) of a run of w over span: BinWidth, but
// for the boundary workload the span of each half of an attack (at most
// maxEdgeBins of them).
func SeriesBin(window, span time.Duration, w workload.Source) int64 {
	if b, ok := w.(*workload.Boundary); ok && b.Edge > 0 && span/b.Edge <= maxEdgeBins {
		return int64(b.Edge)
	}
	return BinWidth(window, span)
}

// BinWidth is the series bin (ns) for a window over a span: W/10, widened so
// that a run has at most 4000 bins.
func BinWidth(window, span time.Duration) int64 {
	b := max(int64(window)/10, 1)
	if d := int64(span); d/b > 4000 {
		b = (d + 3999) / 4000
	}
	return b
}

// Simulate runs every target over the workload in virtual time, one pass
// per target on one goroutine, and returns their runs in order. The same
// config gives the same runs, byte for byte. When ctx is cancelled it stops
// within checkInterval arrivals and returns the runs measured so far (the
// current one cut short) with ctx's error.
func Simulate(ctx context.Context, cfg Config, targets []call.Target) ([]result.Run, error) {
	p, err := cfg.Policy.Validate()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	cfg.Policy = p
	var ref *bitset
	if cfg.Reference != nil {
		if ref, err = referencePass(ctx, cfg); err != nil {
			return nil, err
		}
	}
	runs := make([]result.Run, 0, len(targets))
	for _, t := range targets {
		run, err := simPass(ctx, cfg, t, ref)
		if run != nil {
			runs = append(runs, *run)
		}
		if err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// simPass drives one target over the whole workload.
func simPass(ctx context.Context, cfg Config, t call.Target, ref *bitset) (*result.Run, error) {
	lims, err := t.Instances()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	stream, err := cfg.Open()
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	sum := measure.New(measure.For(t, cfg.Policy, cfg.bin(), false))
	bar := call.StartBar(cfg.Progress, t.Name, int64(cfg.Length()))
	var falseAdmits, falseRejects int64
	var firstErr error
	var i int64
	row := call.Row{Algorithm: t.Name, Attempts: 1}
	route := workload.NewRouter(stream, len(lims))
	for {
		a, ok := stream.Next()
		if !ok {
			break
		}
		d, err := lims[route.Next()].Allow(a.At, a.Key, a.Cost)
		if err == nil {
			done := a.At
			if d.Allowed {
				done += d.Delay
			}
			row.Ruled(a.At, done, a.Key, a.Cost, &d)
		} else {
			row.Decided(a.At, a.At, a.Key, a.Cost, d, err)
		}
		sum.Add(&row)
		if cfg.Trace != nil {
			row.Traced(i, a.At, d, err)
			cfg.Trace.Row(row)
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ref != nil {
			allowed := d.Allowed && err == nil || err != nil && t.FailOpen
			if want := ref.get(i); allowed != want {
				if allowed {
					falseAdmits++
				} else {
					falseRejects++
				}
			}
		}
		i++
		if i%checkInterval == 0 {
			offered, admitted := sum.Counts()
			bar.Update(int64(a.At), offered, admitted)
			if ctx.Err() != nil {
				break
			}
		}
	}
	if ref != nil {
		sum.Disagree(falseAdmits, falseRejects)
	}
	run, _ := sum.Finish(int64(cfg.Length())) // no Reference in the counting: no error
	measure.Name(&run, t, firstErr)
	run.LossyEvictions = keyed.LossyEvictions(lims)
	if err := stream.Err(); err != nil {
		bar.Done(true)
		return &run, fmt.Errorf("bench: %w", err)
	}
	bar.Done(ctx.Err() != nil)
	return &run, ctx.Err()
}

// referencePass records which arrivals the exact reference admits.
func referencePass(ctx context.Context, cfg Config) (*bitset, error) {
	l, err := cfg.Reference()
	if err != nil {
		return nil, fmt.Errorf("bench: reference: %w", err)
	}
	stream, err := cfg.Open()
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	var bits bitset
	for i := int64(0); ; i++ {
		a, ok := stream.Next()
		if !ok {
			break
		}
		d, err := l.Allow(a.At, a.Key, a.Cost)
		if err != nil {
			return nil, fmt.Errorf("bench: reference: %w", err)
		}
		bits.set(i, d.Allowed)
		if i%checkInterval == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := stream.Err(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &bits, nil
}

// bitset is a growable set of arrival indexes, one bit each.
type bitset struct{ words []uint64 }

func (b *bitset) set(i int64, v bool) {
	w := i >> 6
	for int64(len(b.words)) <= w {
		b.words = append(b.words, 0)
	}
	if v {
		b.words[w] |= 1 << (i & 63)
	}
}

func (b *bitset) get(i int64) bool {
	w := i >> 6
	return w < int64(len(b.words)) && b.words[w]&(1<<(i&63)) != 0
}
