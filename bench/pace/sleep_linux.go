package pace

import (
	"syscall"
	"time"
)

// shortSleep sleeps about d (less than TimerAbove) in one nanosleep.
func shortSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: the caller reads the clock again
}
