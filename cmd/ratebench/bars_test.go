package main

import (
	"bytes"
	"testing"
	"time"
)

func TestBarsText(t *testing.T) {
	if newBars(&bytes.Buffer{}) != nil {
		t.Error("bars on a writer that is not a terminal")
	}
	for _, tc := range []struct {
		got, want string
	}{
		{progressText(int64(3240*time.Millisecond), int64(10*time.Second)), "3.2s/10s"},
		{progressText(int64(1500*time.Millisecond), 0), "1.5s"},
		{statsText(19960, 1099, time.Second), "20.0k arrivals/s  admitted 1099"},
		{statsText(150, 100, time.Second), "150 arrivals/s  admitted 100"},
		{statsText(24e6, 7, 2*time.Second), "12.00M arrivals/s  admitted 7"},
		// A live pass: 10s of 30s in 10s of wall time.
		{etaText(10*time.Second, int64(10*time.Second), int64(30*time.Second)), "ETA 20s"},
		// A simulation: 5s of virtual time of 20s in half a second.
		{etaText(500*time.Millisecond, int64(5*time.Second), int64(20*time.Second)), "ETA 2s"},
		{etaText(time.Second, 0, int64(30*time.Second)), "ETA ?"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
