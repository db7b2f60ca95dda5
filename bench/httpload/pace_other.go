//go:build !linux

package httpload

import "time"

// shortSleep sleeps about d (less than timerAbove); Go's timers may wake
// up to a millisecond late when the process is idle.
func shortSleep(d time.Duration) { time.Sleep(d) }
