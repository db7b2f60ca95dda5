// Package bars shows a run's progress on standard error: mpb bars on a
// terminal, a plain line every few seconds in a log. Its displays are
// call.Progress values for the engines.
package bars

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/ratebench/ratebench/bench/call"
)

// Every is how often progress lines are written when standard error is
// not a terminal (a pipe, a file, a CI log): one line, not a redraw.
const Every = 5 * time.Second

// Display is a run's progress display: a call.Progress for the engines,
// and Wait, called when they are done, which returns once it has drawn
// its last state. A display is safe for concurrent use.
type Display interface {
	call.Progress
	Wait()
}

// Modes are the ways New can show progress: auto (bars on a terminal,
// else lines), bars, lines, off.
var Modes = []string{"auto", "bars", "lines", "off"}

// New returns the display of a run of passes passes (0: not known in
// advance) on w, as mode (one of Modes) says: under auto, mpb bars when
// w is a terminal, a plain line every Every when it is another file,
// nothing (nil) for any other writer (a test's buffer); under off, nil.
func New(w io.Writer, passes int, mode string) Display {
	f, isFile := w.(*os.File)
	switch {
	case mode == "off", mode == "auto" && !isFile:
		return nil
	case mode == "bars", mode == "auto" && term.IsTerminal(int(f.Fd())):
		return NewBars(w, passes)
	}
	return NewLines(w, passes, Every, time.Now)
}

// Progress is d as the engines take it (bench.Config.Progress): nil,
// silent, when d is.
func Progress(d Display) call.Progress {
	if d == nil {
		return nil
	}
	return d
}

// Wait lets d draw its last state; nothing when d is nil.
func Wait(d Display) {
	if d != nil {
		d.Wait()
	}
}

// wholeRun follows the passes of one run, for "gcra (3 of 14)" and the
// whole run's ETA: the passes done, and how far the current one has come
// (0 to 1). Safe for concurrent use.
type wholeRun struct {
	mu      sync.Mutex
	passes  int // 0: not known
	started int // passes begun
	frac    float64
	start   time.Time
}

// begin starts the next pass and returns its label: "gcra (3 of 14)",
// or "gcra" when the count of passes is not known.
func (w *wholeRun) begin(name string, now time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.start.IsZero() {
		w.start = now
	}
	w.started++
	w.frac = 0
	if w.passes <= 0 {
		return name
	}
	return fmt.Sprintf("%s (%d of %d)", name, w.started, max(w.passes, w.started))
}

// update records how far the current pass has come.
func (w *wholeRun) update(current, total int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if total > 0 {
		w.frac = min(float64(current)/float64(total), 1)
	}
}

// eta is the whole run's wall time left at its pace so far, "" when
// the count of passes is not known or nothing has run yet.
func (w *wholeRun) eta(now time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.passes <= 0 || w.started == 0 {
		return ""
	}
	done := (float64(w.started-1) + w.frac) / float64(max(w.passes, w.started))
	if done <= 0 {
		return "whole run ETA ?"
	}
	left := time.Duration(float64(now.Sub(w.start)) * (1 - done) / done)
	return "whole run ETA " + left.Round(time.Second).String()
}

// mpbProgress shows one mpb bar per pass, labelled with its place in the
// run: how far in (virtual or wall) time out of the total, arrivals per
// second of wall time (for a live run, the achieved rate), admitted so
// far, the pass's ETA and the whole run's. Safe for concurrent use.
type mpbProgress struct {
	p   *mpb.Progress
	run wholeRun
}

// NewBars returns one mpb bar per pass on w, a terminal, for a run of
// passes passes (0: not known); opts are mpb's, after ours (a test's
// manual refresh).
func NewBars(w io.Writer, passes int, opts ...mpb.ContainerOption) Display {
	opts = append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(150 * time.Millisecond)}, opts...)
	return &mpbProgress{p: mpb.New(opts...), run: wholeRun{passes: passes}}
}

// Wait implements Display.
func (m *mpbProgress) Wait() { m.p.Wait() }

// Pass implements call.Progress.

func (m *mpbProgress) Pass(name string, total int64) call.Bar {
	b := &mpbBar{start: time.Now(), run: &m.run, total: total}
	label := m.run.begin(name, b.start)
	b.bar = m.p.AddBar(max(total, 1),
		mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-22s", label)),
			decor.Any(func(s decor.Statistics) string { return progressText(s.Current, total) }, decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.Any(func(decor.Statistics) string { return b.stats() }, decor.WCSyncSpace),
			decor.OnComplete(decor.Any(func(s decor.Statistics) string {
				return joinNonEmpty(etaText(time.Since(b.start), s.Current, s.Total), m.run.eta(time.Now()))
			}, decor.WCSyncSpace), "done"),
		),
		mpb.BarRemoveOnComplete(),
	)
	return b
}

// mpbBar is one pass's bar.
type mpbBar struct {
	bar               *mpb.Bar
	run               *wholeRun
	start             time.Time
	total             int64
	offered, admitted atomic.Int64
}

// Update implements call.Bar.
func (b *mpbBar) Update(at, offered, admitted int64) {
	b.offered.Store(offered)
	b.admitted.Store(admitted)
	b.run.update(at, b.total)
	b.bar.SetCurrent(at)
}

func (b *mpbBar) stats() string {
	return statsText(b.offered.Load(), b.admitted.Load(), time.Since(b.start))
}

// Done implements call.Bar.
func (b *mpbBar) Done(aborted bool) {
	if aborted {
		b.bar.Abort(true)
		return
	}
	b.bar.SetTotal(-1, true)
}

// plainProgress writes a line of progress at most every interval, the
// first an interval in, and one when a pass of an interval or more ends:
// for a log, where redrawn bars would be a line each, and a run of a
// second writes nothing. Safe for concurrent use.
type plainProgress struct {
	mu    sync.Mutex
	w     io.Writer
	every time.Duration
	now   func() time.Time
	last  time.Time // of the last line
	run   wholeRun
}

// NewLines returns plain lines of progress on w, at most one every
// every of the clock now, for a run of passes passes (0: not known).
func NewLines(w io.Writer, passes int, every time.Duration, now func() time.Time) Display {
	return &plainProgress{w: w, every: every, now: now, run: wholeRun{passes: passes}}
}

// Wait implements Display.
func (p *plainProgress) Wait() {}

// Pass implements call.Progress.

func (p *plainProgress) Pass(name string, total int64) call.Bar {
	start := p.now()
	p.mu.Lock()
	if p.last.IsZero() { // the first line comes an interval in: a short run writes none
		p.last = start
	}
	p.mu.Unlock()
	return &plainBar{p: p, label: p.run.begin(name, start), start: start, total: total}
}

// line writes one line of progress, at most one an interval unless
// force.
func (p *plainProgress) line(force bool, text func(now time.Time) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !force && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "progress: %s\n", text(now))
}

// plainBar is one pass as plain lines.
type plainBar struct {
	p     *plainProgress
	label string
	start time.Time
	total int64
}

// Update implements call.Bar.
func (b *plainBar) Update(at, offered, admitted int64) {
	b.p.run.update(at, b.total)
	b.p.line(false, func(now time.Time) string {
		return joinNonEmpty(b.label, progressText(at, b.total), statsText(offered, admitted, now.Sub(b.start)),
			etaText(now.Sub(b.start), at, b.total), b.p.run.eta(now))
	})
}

// Done says the pass ended when it took an interval or more; a shorter
// one only within the pace of lines.
func (b *plainBar) Done(aborted bool) {
	b.p.line(b.p.now().Sub(b.start) >= b.p.every, func(now time.Time) string {
		what := "done"
		if aborted {
			what = "stopped"
		}
		return joinNonEmpty(b.label, what+" in "+now.Sub(b.start).Round(100*time.Millisecond).String(), b.p.run.eta(now))
	})
}

// joinNonEmpty joins the non-empty parts with two spaces.
func joinNonEmpty(parts ...string) string {
	out := ""
	for _, s := range parts {
		if s == "" {
			continue
		}
		if out != "" {
			out += "  "
		}
		out += s
	}
	return out
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
