//go:build !race

package backend_test

import (
	"context"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
	"github.com/ratebench/ratebench/algorithms/redis/redistest"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
	"github.com/ratebench/ratebench/bench/live"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/workload"
)

// faulty wraps a Redis limiter of a sim run: at arrival stopAt it kills
// the server; at pauseAt it restarts it, waits until the limiter answers
// again and freezes it (calls then time out); at resumeAt it thaws it and
// waits until the limiter answers again. The waits give go-redis the real
// time it takes to find the server back (its pool probes once a second
// after failed dials); they probe another key, which the run never sees.
// It counts what the limiter itself said.
type faulty struct {
	l                         algorithms.Limiter
	srv                       *redistest.Server
	n                         *atomic.Int64
	stopAt, pauseAt, resumeAt int64
	admitted, errs, errsAfter *atomic.Int64
	t                         *testing.T
}

// TestBackendFault: killing redis-server in the middle of a run does not
// stop the run; errors are counted by kind ("backend" while it is down,
// "timeout" while it hangs), the failure policy decides those requests,
// and when the server is back (restarted on the same port, then thawed)
// the limiter decides again without being rebuilt; the same through a
// Batcher (Workers above one), each failed decision counted once.
func TestBackendFault(t *testing.T) {
	srv := startRedis(t)
	redis.SetClientLog(io.Discard) // "failed to dial", by design here
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	cfg := bench.Config{Policy: p, Workload: &workload.Constant{Rate: 400, Duration: 10 * time.Second, Keys: 1, Cost: 1}}
	for _, tc := range []struct{ failOpen, batched bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		failOpen := tc.failOpen
		t.Run("fail-open="+strconv.FormatBool(failOpen)+"/batched="+strconv.FormatBool(tc.batched), func(t *testing.T) {
			opts := backend.Options{FailOpen: failOpen, Timeout: 50 * time.Millisecond}
			if tc.batched {
				opts.Workers = 8 // a Batcher; the sim engine asks one decision at a time
			}
			targets := backendTargets(t, []string{"gcra"}, p, 1, 1, "redis://"+srv.Addr(), opts)
			var n, admitted, errs, errsAfter atomic.Int64
			inner := targets[0].New
			targets[0].New = func() (algorithms.Limiter, error) {
				l, err := inner()
				return &faulty{l: l, srv: srv, n: &n, stopAt: 1000, pauseAt: 2000, resumeAt: 2010,
					admitted: &admitted, errs: &errs, errsAfter: &errsAfter, t: t}, err
			}
			r := simRuns(t, cfg, targets)[0]
			if r.Offered != 4000 {
				t.Fatalf("offered %d, want the whole run of 4000", r.Offered)
			}
			if r.Errors != errs.Load() || r.Errors != 1010 || r.ErrorKinds["backend"] != 1000 || r.ErrorKinds["timeout"] != 10 {
				t.Fatalf("errors %d by kind %v (the limiter said %d); want 1000 backend while down, then 10 timeouts while frozen", r.Errors, r.ErrorKinds, errs.Load())
			}
			want := admitted.Load()
			if failOpen {
				want += r.Errors
			}
			if r.Admitted != want {
				t.Fatalf("admitted %d, want %d (%d by the limiter, fail-open %v)", r.Admitted, want, admitted.Load(), failOpen)
			}
			if errsAfter.Load() != 0 {
				t.Fatalf("%d errors after the server came back", errsAfter.Load())
			}
			// After the restart (state lost) the limiter admits its rate
			// again: the last 5 seconds hold about 5*L admits.
			var tail int64
			for _, a := range r.Series.Admitted[len(r.Series.Admitted)/2:] {
				tail += a
			}
			if tail < 4*p.Limit || tail > 7*p.Limit {
				t.Fatalf("admitted %d in the last 5s, want about %d", tail, 5*p.Limit)
			}
			t.Logf("fail-open=%v: %d errors %v, admitted %d of %d", failOpen, r.Errors, r.ErrorKinds, r.Admitted, r.Offered)
		})
	}
}

// outageLog records, in wall time, the errors and successes of a limiter.
type outageLog struct {
	l         algorithms.Limiter
	errs      atomic.Int64 // errors the limiter returned
	lastErr   atomic.Int64 // ns since start
	okAfter   atomic.Int64 // successes after the restart
	restarted atomic.Bool
	start     time.Time
}

// TestBackendFaultLive: the same in real time with the live engine and 4
// workers: redis-server is killed 0.6s into a 3s run and started again on
// the same port at 1.2s. The run goes to its end, counts the errors, admits
// them (fail-open), and decides without errors again well before its end.
func TestBackendFaultLive(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3s real-time run")
	}
	r, log := liveOutage(t, outage{workers: 4, rate: 400, keys: 1, stopAt: 600 * time.Millisecond, downFor: 600 * time.Millisecond})
	kinds := r.ErrorKinds["backend"] + r.ErrorKinds["timeout"]
	if r.Errors != log.errs.Load() {
		t.Fatalf("%d errors counted, the limiter returned %d", r.Errors, log.errs.Load())
	}
	if r.Offered < 1100 || r.Errors < 100 || kinds != r.Errors {
		t.Fatalf("offered %d with %d errors %v; want the whole run (~1200) and the ~240 arrivals of the outage counted as backend or timeout errors", r.Offered, r.Errors, r.ErrorKinds)
	}
	// Outside the outage the limiter admits its rate (L/s for 1.8s and its
	// burst), a quarter of the offer; fail-open admits every error on top.
	if r.Admitted < r.Errors+150 || r.Admitted > r.Errors+400 {
		t.Fatalf("admitted %d with %d errors: want the errors (fail-open) plus about 280 decided by the limiter", r.Admitted, r.Errors)
	}
	if last := time.Duration(log.lastErr.Load()); last > 2500*time.Millisecond || log.okAfter.Load() < 100 {
		t.Fatalf("last error at %v, %d decisions after the restart; want none after 2.5s and hundreds of decisions", last, log.okAfter.Load())
	}
	t.Logf("offered %d, %d errors %v, admitted %d; last error %v into the run, %d decisions after the restart",
		r.Offered, r.Errors, r.ErrorKinds, r.Admitted, time.Duration(log.lastErr.Load()), log.okAfter.Load())
}

func (f *faulty) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	switch f.n.Add(1) {
	case f.stopAt:
		f.srv.Stop()
	case f.pauseAt:
		if err := f.srv.Restart(); err != nil {
			f.t.Error(err)
		}
		f.recover(now)
		if err := f.srv.Pause(); err != nil {
			f.t.Error(err)
		}
	case f.resumeAt:
		if err := f.srv.Resume(); err != nil {
			f.t.Error(err)
		}
		f.recover(now)
	}
	d, err := f.l.Allow(now, key, cost)
	switch {
	case err != nil:
		f.errs.Add(1)
		if f.n.Load() > f.resumeAt+5 {
			f.errsAfter.Add(1)
		}
	case d.Allowed:
		f.admitted.Add(1)
	}
	return d, err
}

// recover waits until the limiter decides without an error again.
func (f *faulty) recover(now time.Duration) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := f.l.Allow(now, "probe", 1)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Errorf("the limiter did not recover within 5s: %v", err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (o *outageLog) Allow(now time.Duration, key string, cost int64) (algorithms.Decision, error) {
	d, err := o.l.Allow(now, key, cost)
	if err != nil {
		o.errs.Add(1)
		o.lastErr.Store(int64(time.Since(o.start)))
	} else if o.restarted.Load() {
		o.okAfter.Add(1)
	}
	return d, err
}

// TestBackendFaultLiveBatched: a live outage (0.5s to 0.9s of a 3s run)
// with 32 workers at 3000/s over 8 keys, so that the Batcher's batches hold many decisions when the
// server dies: every failed decision is counted once (the run's errors are
// the errors the limiter returned), by kind, and the limiter decides again
// after the restart.
func TestBackendFaultLiveBatched(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3s real-time run")
	}
	r, log := liveOutage(t, outage{workers: 32, rate: 3000, keys: 8, stopAt: 500 * time.Millisecond, downFor: 400 * time.Millisecond})
	if r.Errors == 0 || r.Errors != log.errs.Load() || r.ErrorKinds["backend"]+r.ErrorKinds["timeout"] != r.Errors {
		t.Fatalf("%d errors %v counted, the limiter returned %d; want the outage's, each once, as backend or timeout", r.Errors, r.ErrorKinds, log.errs.Load())
	}
	if r.Admitted < r.Errors {
		t.Fatalf("admitted %d with %d errors: fail-open admits every error", r.Admitted, r.Errors)
	}
	if last := time.Duration(log.lastErr.Load()); last > 2500*time.Millisecond || log.okAfter.Load() < 100 {
		t.Fatalf("last error at %v, %d decisions after the restart; want none after 2.5s and hundreds of decisions", last, log.okAfter.Load())
	}
	t.Logf("offered %d, %d errors %v, admitted %d; last error %v into the run, %d decisions after the restart",
		r.Offered, r.Errors, r.ErrorKinds, r.Admitted, time.Duration(log.lastErr.Load()), log.okAfter.Load())
}

// outage is a live run of gcra (100/s, fail-open, 100ms timeout) on a
// redis-server that is stopped stopAt into the run and started again on
// the same port downFor later.
type outage struct {
	workers int
	rate    float64
	keys    int
	stopAt  time.Duration
	downFor time.Duration
}

// liveOutage runs o for 3s and returns the run and what the limiter
// returned during it.
func liveOutage(t *testing.T, o outage) (result.Run, *outageLog) {
	t.Helper()
	srv := startRedis(t)
	redis.SetClientLog(io.Discard)
	p := algorithms.Policy{Limit: 100, Window: time.Second}
	spec := &workload.Constant{Rate: o.rate, Duration: 3 * time.Second, Keys: o.keys, Cost: 1}
	cfg := live.Config{Config: bench.Config{Policy: p, Workload: spec}, Workers: o.workers, Calibration: -1}
	opts := backend.Options{Live: true, Workers: o.workers, FailOpen: true, Timeout: 100 * time.Millisecond}
	targets := backendTargets(t, []string{"gcra"}, p, o.keys, 1, "redis://"+srv.Addr(), opts)
	log := &outageLog{}
	inner := targets[0].New
	targets[0].New = func() (algorithms.Limiter, error) {
		l, err := inner()
		log.l = l
		return log, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(o.stopAt)
		srv.Stop()
		time.Sleep(o.downFor)
		if err := srv.Restart(); err != nil {
			t.Error(err)
		}
		log.restarted.Store(true)
	}()
	log.start = time.Now()
	runs, err := live.Run(context.Background(), cfg, targets)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return runs[0], log
}
