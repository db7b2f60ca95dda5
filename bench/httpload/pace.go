package httpload

import (
	"time"
)

// The scheduler sleeps on a timer while the next arrival is more than
// timerAbove away, waking timerEarly before it; closer, it sleeps with
// shortSleep, which on Linux is a nanosleep (it wakes within about 60µs,
// the kernel's timer slack) where a Go timer would wake up to a
// millisecond late once the process is idle. It never spins: on a machine
// shared with the server, a spinning sender takes a core from it.
const (
	timerAbove = 2 * time.Millisecond
	timerEarly = time.Millisecond
)

// waitUntil returns when the time elapsed since start reaches at, with
// that elapsed time, or early with false when done is closed (checked at
// least every timerEarly). timer is the caller's, stopped.
func waitUntil(done <-chan struct{}, timer *time.Timer, start time.Time, at time.Duration) (time.Duration, bool) {
	for {
		now := time.Since(start)
		ahead := at - now
		if ahead <= 0 {
			return now, true
		}
		if ahead > timerAbove {
			timer.Reset(ahead - timerEarly)
			select {
			case <-done:
				timer.Stop()
				return now, false
			case <-timer.C:
			}
			continue
		}
		select {
		case <-done:
			return now, false
		default:
		}
		shortSleep(ahead)
	}
}
