//go:build !race

package live_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// Every test here runs in real time, by nature: each is a short run (at
// most about 2s) and only TestLiveStall sleeps on purpose.

// runLive runs targets through live.Run and checks what must hold on any
// run: counts add up and every histogram counts each offered request once.
func runLive(t *testing.T, cfg live.Config, targets []call.Target) []result.Run {
	t.Helper()
	runs, err := live.Run(context.Background(), cfg, targets)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		checkLiveRun(t, r)
	}
	return runs
}

func checkLiveRun(t *testing.T, r result.Run) {
	t.Helper()
	l := r.Live
	if l == nil || r.Latency == nil || l.Service == nil || l.Lateness == nil {
		t.Fatalf("%s: missing live measures: %+v", r.Algorithm, r)
	}
	if r.Offered != r.Admitted+r.Rejected {
		t.Errorf("%s: offered %d != admitted %d + rejected %d", r.Algorithm, r.Offered, r.Admitted, r.Rejected)
	}
	if l.Scheduled != r.Offered+l.Dropped {
		t.Errorf("%s: scheduled %d != offered %d + dropped %d", r.Algorithm, l.Scheduled, r.Offered, l.Dropped)
	}
	for name, p := range map[string]*result.Percentiles{"latency": r.Latency, "service": l.Service, "lateness": l.Lateness} {
		if p.Count != r.Offered {
			t.Errorf("%s: %s histogram holds %d values, offered %d: the merge dropped some", r.Algorithm, name, p.Count, r.Offered)
		}
	}
	for name, hdr := range map[string]string{"latency": r.LatencyHDR, "service": l.ServiceHDR, "lateness": l.LatenessHDR} {
		h, err := result.DecodeHistogram(hdr)
		if err != nil || h.TotalCount() != r.Offered {
			t.Errorf("%s: %s HDR: %v, %d values; want %d", r.Algorithm, name, err, h.TotalCount(), r.Offered)
		}
	}
	var sum int64
	for _, a := range r.Series.Admitted {
		sum += a
	}
	if sum != r.AdmittedCost {
		t.Errorf("%s: series sums to %d, admitted cost %d", r.Algorithm, sum, r.AdmittedCost)
	}
	if l.Reordered != 0 {
		t.Errorf("%s: %d decisions reached the summary out of order", r.Algorithm, l.Reordered)
	}
	if r.Latency.P50 < l.Service.P50 || r.Latency.Max < l.Lateness.Max {
		t.Errorf("%s: latency %+v must be at least service %+v and lateness %+v", r.Algorithm, *r.Latency, *l.Service, *l.Lateness)
	}
}

func liveConfig(p algorithms.Policy, s workload.Source) live.Config {
	return live.Config{Config: bench.Config{Policy: p, Workload: s}, Calibration: -1}
}

// stallOnce wraps a limiter: the first call at or after at holds the
// limiter for d, as a GC pause or a lock holder descheduled would, so
// every other call waits too.
type stallOnce struct {
	mu      sync.Mutex
	l       algorithms.Limiter
	at, d   time.Duration
	stalled bool
}

func (s *stallOnce) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stalled && now >= s.at {
		s.stalled = true
		time.Sleep(s.d)
	}
	return s.l.Allow(now, key, cost)
}

// TestLiveStall guards the coordinated-omission fix: with one 1s stall at
// 1,000 arrivals/s, the arrivals due during the stall wait for it, so the
// latency p99 (done - intended) shows hundreds of ms, while the service
// time (done - actual start) of all but the few calls caught inside the
// stall stays short. A closed-loop harness would report only the latter.
func TestLiveStall(t *testing.T) {
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	cfg := liveConfig(p, &workload.Constant{Rate: 1000, Duration: 2 * time.Second, Keys: 1, Cost: 1})
	target := call.Target{Name: "stalled-gcra", Theory: 2 * p.Limit, New: func() (algorithms.Limiter, error) {
		g, err := algorithms.NewGCRA(p)
		return &stallOnce{l: g, at: 300 * time.Millisecond, d: time.Second}, err
	}}
	r := runLive(t, cfg, []call.Target{target})[0]
	lat, svc := r.Latency, r.Live.Service
	t.Logf("latency p50 %v p99 %v max %v; service p50 %v p99 %v max %v; late %.1f%%",
		time.Duration(lat.P50), time.Duration(lat.P99), time.Duration(lat.Max),
		time.Duration(svc.P50), time.Duration(svc.P99), time.Duration(svc.Max), r.Live.LatePct)
	if lat.P99 < int64(500*time.Millisecond) || lat.Max < int64(900*time.Millisecond) {
		t.Errorf("latency p99 %v, max %v: the stall is hidden", time.Duration(lat.P99), time.Duration(lat.Max))
	}
	if svc.P99 > int64(50*time.Millisecond) {
		t.Errorf("service p99 %v: want well under the stall (only the calls caught inside it wait)", time.Duration(svc.P99))
	}
	if svc.Max < int64(900*time.Millisecond) {
		t.Errorf("service max %v: the stalled call itself took the stall", time.Duration(svc.Max))
	}
	if r.Live.LatePct < 30 {
		t.Errorf("late %.1f%%: the arrivals due during the stall started late", r.Live.LatePct)
	}
	if w := result.Warnings([]result.Run{r}); len(w) != 1 || w[0].Kind != result.WarnLate {
		t.Errorf("warnings %+v: want the late sender", w)
	}
}

// TestLiveCounts: on every kind of algorithm (meters, window counters, a
// shaper, a pacer that never rejects), with keys and replicas, the counts
// add up and the histograms merged from the workers hold every request.
func TestLiveCounts(t *testing.T) {
	p := algorithms.Policy{Limit: 20, Window: 100 * time.Millisecond} // 200/s per key per replica
	cfg := liveConfig(p, &workload.Poisson{Rate: 4000, Duration: 300 * time.Millisecond, Keys: 5, Seed: 3, Cost: 1})
	cfg.Reference = backend.Reference(p, 5)
	cfg.Workers = 3
	targets, err := backend.MemoryTargets([]string{"gcra", "fixed-window", "leaky-queue", "uber"}, p, backend.Keys{N: 5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runLive(t, cfg, targets) {
		t.Logf("%s: offered %d admitted %d rejected %d, latency p99 %v, disagreement %.2f%%, unserved %d",
			r.Algorithm, r.Offered, r.Admitted, r.Rejected, time.Duration(r.Latency.P99), r.DisagreementPct, r.Live.Unserved)
		if r.Offered < 500 || r.Live.Workers != 3 || r.KeyCount != 5 || r.DisagreementPct < 0 || r.Rejected == 0 && r.Algorithm != "uber" {
			t.Errorf("%s: offered %d, workers %d, keys %d, disagreement %v", r.Algorithm, r.Offered, r.Live.Workers, r.KeyCount, r.DisagreementPct)
		}
	}
}

// TestLiveGCRATheory: gcra at 20x its limit admits B + L*D/W within 2%,
// counted on the real instants of its decisions.
func TestLiveGCRATheory(t *testing.T) {
	p := algorithms.Policy{Limit: 250, Window: time.Second}.WithDefaults()
	d := 2 * time.Second
	cfg := liveConfig(p, &workload.Poisson{Rate: 20 * p.Rate(), Duration: d, Seed: 1, Keys: 1, Cost: 1})
	targets, _ := backend.MemoryTargets([]string{"gcra"}, p, backend.Keys{N: 1}, 1)
	r := runLive(t, cfg, targets)[0]
	theory := float64(p.Burst) + float64(p.Limit)*d.Seconds()/p.Window.Seconds()
	got := float64(r.Admitted)
	t.Logf("admitted %d of %d, theory %.0f (%.2f%% off); achieved %.0f/s of %.0f/s offered; latency p99 %v",
		r.Admitted, r.Offered, theory, 100*(got-theory)/theory, r.Live.AchievedRatePerS, r.Live.OfferedRatePerS, time.Duration(r.Latency.P99))
	if got < 0.98*theory || got > 1.02*theory {
		t.Errorf("admitted %d, want within 2%% of B + L*D/W = %.0f", r.Admitted, theory)
	}
	if r.MaxAdmittedInWindow > r.TheoryMaxInWindow {
		t.Errorf("max admitted in W %d above the theory %d", r.MaxAdmittedInWindow, r.TheoryMaxInWindow)
	}
}

// TestLiveShaperWaits: a leaky queue really delays what it admits, and the
// delay is in the latency and the service time.
func TestLiveShaperWaits(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second, Burst: 20} // T = 10ms, delays up to 200ms
	cfg := liveConfig(p, &workload.Constant{Rate: 300, Duration: 500 * time.Millisecond, Keys: 1, Cost: 1})
	targets, _ := backend.MemoryTargets([]string{"leaky-queue"}, p, backend.Keys{N: 1}, 1)
	start := time.Now()
	r := runLive(t, cfg, targets)[0]
	q := r.Live.QueueDelay
	if q == nil || q.Max < int64(150*time.Millisecond) {
		t.Fatalf("queue delay %+v: want delays up to about 200ms", q)
	}
	if r.Latency.Max < q.Max || r.Live.Service.Max < q.Max {
		t.Errorf("latency max %v, service max %v: want both at least the longest delay %v",
			time.Duration(r.Latency.Max), time.Duration(r.Live.Service.Max), time.Duration(q.Max))
	}
	if el := time.Since(start); el < 600*time.Millisecond {
		t.Errorf("the pass took %v: the last admitted requests (due about 200ms after the last arrival at 497ms) were not awaited", el)
	}
	if r.Live.Unserved != 0 {
		t.Errorf("%d unserved: the drain should await delays this short", r.Live.Unserved)
	}
}

// TestLiveDropsAtCap: while the limiter is stuck, arrivals beyond
// MaxInFlight are dropped and counted, not sent late.
func TestLiveDropsAtCap(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := liveConfig(p, &workload.Constant{Rate: 2000, Duration: 400 * time.Millisecond, Keys: 1, Cost: 1})
	cfg.MaxInFlight = 10
	target := call.Target{Name: "stuck", New: func() (algorithms.Limiter, error) {
		g, err := algorithms.NewGCRA(p)
		return &stallOnce{l: g, at: 0, d: 100 * time.Millisecond}, err
	}}
	r := runLive(t, cfg, []call.Target{target})[0]
	t.Logf("dropped %d of %d; latency p50 %v p99 %v; late %.1f%%; series %v", r.Live.Dropped, r.Live.Scheduled, time.Duration(r.Latency.P50), time.Duration(r.Latency.P99), r.Live.LatePct, r.Series.Admitted)
	if r.Live.Dropped < 100 || r.Live.Dropped > 400 {
		t.Errorf("dropped %d: want about the 200 arrivals due in the 100ms stall", r.Live.Dropped)
	}
	if w := result.Warnings([]result.Run{r}); !slices.ContainsFunc(w, func(w result.Warning) bool { return w.Kind == result.WarnDropped && w.MaxInFlight == 10 }) {
		t.Errorf("warnings %+v: want the drops at the cap of 10", w)
	}
}

// TestLiveCancel: a cancelled run stops within a second, keeps the pass it
// cut short and skips the rest; shaper waits are cut too.
func TestLiveCancel(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := live.Config{Config: bench.Config{Policy: p, Workload: &workload.Constant{Rate: 1000, Duration: time.Hour, Keys: 1, Cost: 1}}}
	targets, _ := backend.MemoryTargets([]string{"uber", "gcra"}, p, backend.Keys{N: 1}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	runs, err := live.Run(ctx, cfg, targets)
	if el := time.Since(start); el > 300*time.Millisecond+time.Second {
		t.Errorf("stopped %v after the cancel, want within 1s", el-300*time.Millisecond)
	}
	if !errors.Is(err, context.Canceled) || len(runs) != 1 {
		t.Fatalf("err %v, %d runs; want context.Canceled and the first run", err, len(runs))
	}
	r := runs[0]
	checkLiveRun(t, r)
	if r.Offered < 100 || r.Live.Unserved == 0 || r.Live.SpanNS > int64(time.Second) || r.Live.Calibration != nil {
		t.Errorf("offered %d, unserved %d, span %v, calibration %v: want the first 300ms with uber's waits cut and no calibration",
			r.Offered, r.Live.Unserved, time.Duration(r.Live.SpanNS), r.Live.Calibration)
	}
}

// stuck is a limiter whose calls from the nth on hang until release is
// closed: a backend that stopped answering.
type stuck struct {
	n       atomic.Int64
	from    int64
	release chan struct{}
}

func (s *stuck) Allow(time.Duration, string, int64) (algorithms.Decision, error) {
	if s.n.Add(1) >= s.from {
		<-s.release
	}
	return algorithms.Decision{Allowed: true}, nil
}

// TestLiveCancelStuck: when calls hang, a cancel still ends the run
// within a second: the workers stuck inside Allow are abandoned.
func TestLiveCancelStuck(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := liveConfig(p, &workload.Constant{Rate: 1000, Duration: 200 * time.Millisecond, Keys: 1, Cost: 1})
	lim := &stuck{from: 100, release: make(chan struct{})}
	defer close(lim.release)
	target := call.Target{Name: "stuck", New: func() (algorithms.Limiter, error) { return lim, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(400*time.Millisecond, cancel) // after the schedule, while the workers hang
	start := time.Now()
	runs, err := live.Run(ctx, cfg, []call.Target{target})
	if el := time.Since(start); el > 400*time.Millisecond+time.Second {
		t.Errorf("returned %v after the cancel, want within 1s", el-400*time.Millisecond)
	}
	if !errors.Is(err, context.Canceled) || len(runs) != 1 {
		t.Fatalf("err %v, %d runs: want context.Canceled and the run so far", err, len(runs))
	}
	if r := runs[0]; r.Live.Abandoned == 0 || r.Offered != r.Admitted+r.Rejected {
		t.Errorf("abandoned %d workers, offered %d: want the stuck workers counted, and the counts of the others",
			r.Live.Abandoned, r.Offered)
	}
}

// TestLiveCalibration: the no-op pass measures the harness and its figures
// go in every run.
func TestLiveCalibration(t *testing.T) {
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := liveConfig(p, &workload.Poisson{Rate: 2000, Duration: 300 * time.Millisecond, Seed: 2, Keys: 1, Cost: 1})
	cfg.Calibration = 0
	targets, _ := backend.MemoryTargets([]string{"gcra", "token-bucket"}, p, backend.Keys{N: 1}, 1)
	runs := runLive(t, cfg, targets)
	c := runs[0].Live.Calibration
	if c == nil || c.OverheadNS <= 0 || c.OverheadMeanNS <= 0 || c.Overhead == nil || c.OverheadNS < float64(c.Overhead.P50) ||
		c.Latency == nil || c.DurationNS != int64(300*time.Millisecond) ||
		c.ClockReadNS <= 0 || c.ClockReadNS > c.OverheadNS {
		t.Fatalf("calibration %+v", c)
	}
	if runs[1].Live.Calibration != c || runs[0].Live.HarnessOverheadNS != c.OverheadNS {
		t.Errorf("every run must carry the one calibration")
	}
	t.Logf("harness overhead: median %.0fns, mean %.0fns, p99 %dns, clock read %.0fns; no-op latency p50 %v p99 %v",
		c.OverheadNS, c.OverheadMeanNS, c.Overhead.P99, c.ClockReadNS, time.Duration(c.Latency.P50), time.Duration(c.Latency.P99))
}

// ExampleRun runs GCRA in real time, well under its limit: every arrival
// is admitted, and the counts do not depend on the machine.
func ExampleRun() {
	p := algorithms.Policy{Limit: 1000, Window: time.Second}
	cfg := live.Config{
		Config:      bench.Config{Policy: p, Workload: &workload.Constant{Rate: 100, Duration: 500 * time.Millisecond, Keys: 1, Cost: 1}},
		Workers:     2,
		Calibration: -1, // no no-op pass
	}
	targets, err := backend.MemoryTargets([]string{"gcra"}, p, backend.Keys{N: 1}, 1)
	if err != nil {
		panic(err)
	}
	runs, err := live.Run(context.Background(), cfg, targets)
	if err != nil {
		panic(err)
	}
	r := runs[0]
	fmt.Printf("%s: offered %d, admitted %d, dropped %d, latency measured for %d\n",
		r.Algorithm, r.Offered, r.Admitted, r.Live.Dropped, r.Latency.Count)
	// Output: gcra: offered 50, admitted 50, dropped 0, latency measured for 50
}

// TestLiveTrace: a live run's trace holds each pass's requests in send
// order over several workers, a shaper's rows done when served, and no
// row of the calibration.
func TestLiveTrace(t *testing.T) {
	p := algorithms.Policy{Limit: 50, Window: time.Second}
	cfg := liveConfig(p, &workload.Constant{Rate: 2000, Duration: 500 * time.Millisecond, Keys: 3, Cost: 1})
	cfg.Calibration, cfg.Workers = 0, 4
	var tr rowsTracer
	cfg.Trace = &tr
	var targets []call.Target
	for _, name := range []string{"gcra", "leaky-queue"} {
		e, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, call.Target{Name: name, Shaper: e.Shaper, New: func() (algorithms.Limiter, error) { return e.New(p) }})
	}
	runs := runLive(t, cfg, targets)
	i := 0
	for _, run := range runs {
		var admitted, served int64
		for seq := range run.Offered {
			r := tr.rows[i]
			i++
			if r.Seq != seq || r.Algorithm != run.Algorithm || r.Sent < r.Intended || r.Done < r.Sent {
				t.Fatalf("%s row %d: %+v", run.Algorithm, seq, r)
			}
			if r.Outcome == call.Admitted {
				admitted++
				if r.Done-r.Sent >= 10*time.Millisecond {
					served++
				}
			}
		}
		if admitted != run.Admitted {
			t.Errorf("%s: %d admitted rows, run admitted %d", run.Algorithm, admitted, run.Admitted)
		}
		if run.Algorithm == "leaky-queue" && served == 0 {
			t.Error("leaky-queue: no admitted row served later than sent")
		}
	}
	if i != len(tr.rows) {
		t.Errorf("%d rows, the runs offered %d: the calibration's are in the trace", len(tr.rows), i)
	}
}

// TestLiveStartAtPlansEveryPass: with StartAt, the first pass's clock
// starts there and the next one PassSlot later, so that processes running
// the same targets start each pass together; a start already past still
// anchors the clock, and the pass says how late it began.
func TestLiveStartAtPlansEveryPass(t *testing.T) {
	p := algorithms.Policy{Limit: 50, Window: 100 * time.Millisecond}
	cfg := liveConfig(p, &workload.Constant{Rate: 500, Duration: 200 * time.Millisecond, Keys: 1, Cost: 1})
	cfg.Calibration = -1
	targets, err := backend.MemoryTargets([]string{"gcra", "leaky-queue"}, p, backend.Keys{N: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		start  time.Duration // from now
		minLag time.Duration // of the first pass
	}{
		{name: "ahead", start: 150 * time.Millisecond},
		{name: "already past", start: -80 * time.Millisecond, minLag: 80 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.StartAt = time.Now().Add(tc.start)
			runs := runLive(t, c, targets)
			if len(runs) != 2 {
				t.Fatalf("%d runs, want 2", len(runs))
			}
			want := []time.Time{c.StartAt, c.StartAt.Add(live.PassSlot(c, targets[0]))}
			for i, r := range runs {
				if got := time.Unix(0, r.StartUnixNS); !got.Equal(want[i]) {
					t.Errorf("pass %d (%s) starts at %v, want %v", i, r.Algorithm, got, want[i])
				}
				var minLag time.Duration // a later pass has its slot's slack
				if i == 0 {
					minLag = tc.minLag
				}
				if lag := time.Duration(r.Live.StartLagNS); lag < minLag || lag > minLag+200*time.Millisecond {
					t.Errorf("pass %d began %v after its planned start; want at least %v and not 200ms more", i, lag, minLag)
				}
			}
			if late := runs[0].Live.Lateness.Max; tc.minLag > 0 && late < int64(tc.minLag) {
				t.Errorf("first pass lateness max %v: its first arrivals were due before it began, %v late", time.Duration(late), tc.minLag)
			}
		})
	}
	if s, q := live.PassSlot(cfg, targets[0]), live.PassSlot(cfg, targets[1]); s != 200*time.Millisecond+time.Second || q <= s {
		t.Errorf("slots: gcra %v (want the span and a second), leaky-queue %v (want more: its drain)", s, q)
	}
}
