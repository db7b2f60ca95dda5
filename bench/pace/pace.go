// Package pace waits for the instants of an open-loop schedule: the live
// engine's scheduler sends each arrival when the clock reaches its
// intended instant, never earlier.
package pace

import (
	"context"
	"runtime"
	"time"
)

// A Pacer sleeps on a timer while the next instant is more than TimerAbove
// away, waking TimerEarly before it: Go timers below a millisecond wake up
// to a millisecond late once the process is otherwise idle, which would
// make most arrivals of a fast schedule late. The last stretch is its Fine
// wait.
const (
	TimerAbove = 2 * time.Millisecond
	TimerEarly = time.Millisecond
)

// Fine is how a Pacer waits the last stretch (under TimerAbove) before an
// instant.
type Fine int

const (
	// Yield calls runtime.Gosched until the instant: sends within a few
	// microseconds of it, and keeps a core busy meanwhile. For in-process
	// limiters, which need no other process's CPU.
	Yield Fine = iota
	// Sleep sleeps in one nanosleep on Linux (it wakes within about 60 µs,
	// the kernel's timer slack), time.Sleep elsewhere, then checks again:
	// leaves the core to the rest of the machine, such as a server under
	// load on the same host.
	Sleep
)

// Pacer waits for instants measured from its start. Not safe for
// concurrent use: one scheduler owns it.
type Pacer struct {
	start time.Time
	timer *time.Timer
	fine  Fine
}

// New returns a Pacer whose clock is the time elapsed since start. Stop
// it when done.
func New(start time.Time, fine Fine) *Pacer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Pacer{start: start, timer: t, fine: fine}
}

// Stop releases the Pacer's timer.
func (p *Pacer) Stop() { p.timer.Stop() }

// Now is the Pacer's clock: the time elapsed since its start.
func (p *Pacer) Now() time.Duration { return time.Since(p.start) }

// Until returns when the clock reaches at, with the clock (>= at), or
// early with the clock and false when done is closed (checked at least
// every TimerEarly).
func (p *Pacer) Until(done <-chan struct{}, at time.Duration) (time.Duration, bool) {
	for {
		now := p.Now()
		ahead := at - now
		if ahead <= 0 {
			return now, true
		}
		if ahead > TimerAbove {
			p.timer.Reset(ahead - TimerEarly)
			select {
			case <-done:
				p.timer.Stop()
				return now, false
			case <-p.timer.C:
			}
			continue
		}
		select {
		case <-done:
			return now, false
		default:
		}
		if p.fine == Yield {
			runtime.Gosched()
		} else {
			shortSleep(ahead)
		}
	}
}

// SleepUntil waits on a timer for the wall-clock instant at: a pass's or
// a shard's start, where a millisecond's timer slack does not matter. It
// returns at once when at is zero or past, and false when ctx is done
// first.
func SleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if at.IsZero() || d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
