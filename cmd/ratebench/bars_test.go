package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBarsText(t *testing.T) {
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

// TestPlainProgress: when standard error is not a terminal, progress is
// plain lines, the first an interval in and at most one per interval,
// and one at the end of each pass that lasted an interval, each naming
// the pass's place in the run and the whole run's ETA. A short run
// writes none.
func TestPlainProgress(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	p := newPlain(&buf, 2, 5*time.Second, clock)
	b := p.Pass("gcra", int64(10*time.Second))
	for i := 1; i <= 10; i++ { // a second of wall time per second of the pass
		now = now.Add(time.Second)
		b.Update(int64(i)*int64(time.Second), int64(i)*150, int64(i)*100)
	}
	b.Done(false)
	now = now.Add(time.Second)
	c := p.Pass("fixed-window", int64(10*time.Second))
	now = now.Add(6 * time.Second)
	c.Update(int64(6*time.Second), 900, 600)
	c.Done(true)
	want := []string{
		"progress: gcra (1 of 2)  5s/10s  150 arrivals/s  admitted 500  ETA 5s  whole run ETA 15s",
		"progress: gcra (1 of 2)  10s/10s  150 arrivals/s  admitted 1000  ETA 0s  whole run ETA 10s",
		"progress: gcra (1 of 2)  done in 10s  whole run ETA 10s",
		"progress: fixed-window (2 of 2)  6s/10s  150 arrivals/s  admitted 600  ETA 4s  whole run ETA 4s",
		"progress: fixed-window (2 of 2)  stopped in 6s  whole run ETA 4s",
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var short bytes.Buffer
	q := newPlain(&short, 14, 5*time.Second, clock)
	for range 14 { // passes of a millisecond: a sim run
		d := q.Pass("gcra", int64(10*time.Second))
		now = now.Add(time.Millisecond)
		d.Update(int64(10*time.Second), 1500, 1000)
		d.Done(false)
	}
	if short.Len() != 0 {
		t.Errorf("a run of 14ms wrote progress:\n%s", short.String())
	}
	if newProgress(&bytes.Buffer{}, 1, "auto") != nil {
		t.Error("progress on a writer that is not a file")
	}
}

// TestProgressFlag: -progress lines writes lines even to a terminal (one
// that a background serve also writes to), off writes nothing, and an
// unknown mode is refused.
func TestProgressFlag(t *testing.T) {
	if _, ok := newProgress(&bytes.Buffer{}, 1, "lines").(*plainProgress); !ok {
		t.Error("-progress lines: not plain lines")
	}
	if newProgress(os.Stderr, 1, "off") != nil {
		t.Error("-progress off: a display")
	}
	dir := t.TempDir()
	code, _, stderr := runCLI(t, dir, "run", "-progress", "fancy", "-no-report", "-out", filepath.Join(dir, "out"))
	if code != 2 || !strings.Contains(stderr, `-progress "fancy": want auto, bars, lines, off`) {
		t.Errorf("-progress fancy: exit %d, %q", code, stderr)
	}
}
