//go:build !race

package pace

import (
	"testing"
	"time"
)

// TestUntil: each way of waiting returns at or after the instant, never
// before it, through both the timer and the fine wait.
func TestUntil(t *testing.T) {
	for _, tc := range []struct {
		name string
		fine Fine
	}{{"yield", Yield}, {"sleep", Sleep}} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(time.Now(), tc.fine)
			defer p.Stop()
			for _, at := range []time.Duration{0, 100 * time.Microsecond, TimerAbove + 500*time.Microsecond} {
				at += p.Now()
				got, ok := p.Until(nil, at)
				if !ok || got < at || p.Now() < at {
					t.Fatalf("Until(%v) = %v, %v; want >= the instant, true", at, got, ok)
				}
			}
		})
	}
}

// TestUntilDone: a closed done channel ends a wait for a far instant at
// once, with false and a clock before the instant.
func TestUntilDone(t *testing.T) {
	p := New(time.Now(), Sleep)
	defer p.Stop()
	done := make(chan struct{})
	close(done)
	at := p.Now() + time.Hour
	if got, ok := p.Until(done, at); ok || got >= at {
		t.Fatalf("Until with done closed = %v, %v; want early, false", got, ok)
	}
}
