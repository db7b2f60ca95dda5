package live

import (
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/call"
)

// BenchmarkLiveDecision is one worker's hot path for one arrival: two clock
// reads around Allow, the decision's record, three histogram records and
// the counters; no scheduler, no handoff. algo=no-op is what the
// calibration pass calls the harness overhead (less its third clock read).
func BenchmarkLiveDecision(b *testing.B) {
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	for _, tc := range []struct {
		name string
		t    call.Target
	}{
		{"no-op", noopTarget()},
		{"gcra", call.Target{Name: "gcra", New: func() (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }}},
	} {
		b.Run("algo="+tc.name, func(b *testing.B) {
			lims, err := tc.t.Instances()
			if err != nil {
				b.Fatal(err)
			}
			cfg, err := Config{Config: bench.Config{Policy: p}, Workers: 1}.resolve()
			if err != nil {
				b.Fatal(err)
			}
			pass := newLivePass(cfg, tc.t, lims, nil, nil, false)
			w := pass.workers[0]
			stop := make(chan struct{})
			defer close(stop)
			go func() { // the collector's part: take the chunks back
				for {
					select {
					case ch := <-pass.chunks:
						select {
						case pass.free <- ch.recs[:0]:
						default:
						}
					case <-stop:
						return
					}
				}
			}()
			w.clk = clock{start: time.Now()}
			b.ReportAllocs()
			for b.Loop() {
				now := w.clk.now()
				w.do(liveJob{at: now - time.Microsecond, sent: now, key: "k", cost: 1})
			}
		})
	}
}

// TestCollectorOrder: decisions handed over in chunks by several workers,
// each in order, reach the summary in instant order, and none is held
// back past the floors.
func TestCollectorOrder(t *testing.T) {
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	cfg, err := Config{Config: bench.Config{Policy: p}, Workers: 3}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bin = time.Millisecond
	// The collector needs no pass: only the gauges and channels it is
	// handed.
	gauges := newGauges(cfg.Workers) // each floor at idleFloor
	chunks := make(chan liveChunk, 8)
	c := newLiveCollector(collectorIn{cfg: cfg, target: noopTarget(), gauges: gauges,
		chunks: chunks, free: make(chan []liveRec, 8), board: &policyBoard{}})
	c.begin(p, "")
	send := func(worker int, ats ...int64) {
		recs := make([]liveRec, len(ats))
		for i, at := range ats {
			recs[i] = liveRec{at: at, key: "k", cost: 1, allowed: true}
		}
		chunks <- liveChunk{worker: worker, recs: recs}
	}
	send(0, 10, 20, 30)
	send(1, 15, 25)
	gauges[2].floor.Store(22) // worker 2 holds a decision at 22 or later
	c.receive(nil)
	c.emit(22)
	if got, _ := c.sum.Counts(); got != 3 {
		t.Fatalf("fed %d decisions below the floor 22, want 3 (10, 15, 20)", got)
	}
	send(2, 22, 40)
	c.receive(nil)
	c.emit(1 << 62)
	if got, _ := c.sum.Counts(); got != 7 || c.reordered != 0 || c.last != 40 {
		t.Fatalf("fed %d, reordered %d, last %d; want 7, 0, 40", got, c.reordered, c.last)
	}
}
