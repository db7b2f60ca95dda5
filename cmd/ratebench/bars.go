package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/ratebench/ratebench/bench"
)

// mpbProgress shows one mpb bar per pass: how far in (virtual or wall)
// time out of the total, arrivals per second of wall time (for a live run,
// the achieved rate), admitted so far and the ETA. Safe for concurrent use.
type mpbProgress struct{ p *mpb.Progress }

// newBars returns bars on w when it is a terminal, else nil: silent. The
// caller calls wait on it when the engine is done.
func newBars(w io.Writer) *mpbProgress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &mpbProgress{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150*time.Millisecond))}
}

// progress returns m as a bench.Progress, nil (silent) when m is nil.
func (m *mpbProgress) progress() bench.Progress {
	if m == nil {
		return nil
	}
	return m
}

// wait lets the bars draw their last state.
func (m *mpbProgress) wait() {
	if m != nil {
		m.p.Wait()
	}
}

func (m *mpbProgress) Pass(name string, total int64) bench.Bar {
	b := &mpbBar{start: time.Now()}
	b.bar = m.p.AddBar(max(total, 1),
		mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-16s", name)),
			decor.Any(func(s decor.Statistics) string { return progressText(s.Current, total) }, decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.Any(func(decor.Statistics) string { return b.stats() }, decor.WCSyncSpace),
			decor.OnComplete(decor.Any(func(s decor.Statistics) string { return etaText(time.Since(b.start), s.Current, s.Total) }, decor.WCSyncSpace), "done"),
		),
		mpb.BarRemoveOnComplete(),
	)
	return b
}

// mpbBar is one pass's bar.
type mpbBar struct {
	bar               *mpb.Bar
	start             time.Time
	offered, admitted atomic.Int64
}

func (b *mpbBar) Update(at, offered, admitted int64) {
	b.offered.Store(offered)
	b.admitted.Store(admitted)
	b.bar.SetCurrent(at)
}

func (b *mpbBar) stats() string {
	return statsText(b.offered.Load(), b.admitted.Load(), time.Since(b.start))
}

// progressText is "elapsed/total" in time units: "3.2s/10s".
func progressText(current, total int64) string {
	if total <= 0 {
		return time.Duration(current).Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("%v/%v", time.Duration(current).Round(100*time.Millisecond), time.Duration(total))
}

// etaText is the wall time left when a pass has come current of total
// (ns of its virtual or wall clock) in wall time elapsed, at the pace so
// far: "ETA 12s"; "ETA ?" before it has come anywhere. mpb's own ETA
// decorators measure increments, which bars set by position never make.
func etaText(elapsed time.Duration, current, total int64) string {
	if current <= 0 || total <= 0 {
		return "ETA ?"
	}
	left := time.Duration(float64(elapsed) * float64(max(total-current, 0)) / float64(current))
	return "ETA " + left.Round(time.Second).String()
}

// statsText is the rate of arrivals over wall time and the admitted count:
// "19.9k arrivals/s  admitted 1099".
func statsText(offered, admitted int64, wall time.Duration) string {
	rate := float64(offered) / max(wall.Seconds(), 1e-9)
	var r string
	switch {
	case rate >= 1e6:
		r = fmt.Sprintf("%.2fM", rate/1e6)
	case rate >= 1e3:
		r = fmt.Sprintf("%.1fk", rate/1e3)
	default:
		r = fmt.Sprintf("%.0f", rate)
	}
	return fmt.Sprintf("%s arrivals/s  admitted %d", r, admitted)
}

func (b *mpbBar) Done(aborted bool) {
	if aborted {
		b.bar.Abort(true)
		return
	}
	b.bar.SetTotal(-1, true)
}
