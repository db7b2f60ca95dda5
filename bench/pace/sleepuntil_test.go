package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/pace"
)

// TestSleepUntil: a zero or past instant returns at once; an instant an
// hour away returns false as soon as the context is done.
func TestSleepUntil(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if !pace.SleepUntil(ctx, time.Time{}) || !pace.SleepUntil(ctx, time.Now().Add(-time.Second)) {
		t.Error("a zero or past instant: false, want true at once")
	}
	cancel()
	if pace.SleepUntil(ctx, time.Now().Add(time.Hour)) {
		t.Error("an hour away with the context done: true, want false at once")
	}
	if pace.SleepUntil(ctx, time.Time{}) {
		t.Error("a zero instant with the context done: true, want false")
	}
}
