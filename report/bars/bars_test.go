package bars

import (
	"bytes"
	"io"
	"os"
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
	p := NewLines(&buf, 2, 5*time.Second, clock)
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
	q := NewLines(&short, 14, 5*time.Second, clock)
	for range 14 { // passes of a millisecond: a sim run
		d := q.Pass("gcra", int64(10*time.Second))
		now = now.Add(time.Millisecond)
		d.Update(int64(10*time.Second), 1500, 1000)
		d.Done(false)
	}
	if short.Len() != 0 {
		t.Errorf("a run of 14ms wrote progress:\n%s", short.String())
	}
}

// TestNewModes: lines writes lines even to a terminal (one that a
// background serve also writes to), off writes nothing, and auto nothing
// to a writer that is not a file; the helpers take a silent display.
func TestNewModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		w         io.Writer
		mode      string
		wantLines bool // plain lines; else nil
	}{
		{name: "lines to a buffer", w: &bytes.Buffer{}, mode: "lines", wantLines: true},
		{name: "lines to a file", w: os.Stderr, mode: "lines", wantLines: true},
		{name: "off", w: os.Stderr, mode: "off"},
		{name: "auto to a buffer", w: &bytes.Buffer{}, mode: "auto"},
	} {
		d := New(tc.w, 1, tc.mode)
		if _, lines := d.(*plainProgress); lines != tc.wantLines || !lines && d != nil {
			t.Errorf("%s: display %T, want lines %v (else nil)", tc.name, d, tc.wantLines)
		}
	}
	if Progress(nil) != nil {
		t.Error("Progress(nil) is not nil: the engines would report to it")
	}
	Wait(nil) // must not panic
}
