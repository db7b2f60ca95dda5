//go:build !linux

package pace

import "time"

// shortSleep sleeps about d (less than TimerAbove); Go's timers may wake
// up to a millisecond late when the process is idle.
func shortSleep(d time.Duration) { time.Sleep(d) }
