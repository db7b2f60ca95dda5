//go:build linux

package bars

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: its master, which reads what is
// written to the slave, and the slave, a terminal to write to.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open the slave of a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	// A terminal of no size draws no bar.
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 160}); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestProgressInTerminal: on a terminal, progress is mpb's bars, each
// labelled with its pass's place in the run.
func TestProgressInTerminal(t *testing.T) {
	master, slave := openPTY(t)
	read := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			buf.Write(b[:n])
			if err != nil {
				read <- buf.Bytes()
				return
			}
		}
	}()
	if _, ok := New(slave, 2, "auto").(*mpbProgress); !ok {
		t.Fatal("progress on a terminal is not mpb's bars")
	}
	// Drawn when told to, not on mpb's clock: each pass once, mid-way.
	refresh := make(chan any)
	ui := NewBars(slave, 2, mpb.WithManualRefresh(refresh))
	for _, name := range []string{"gcra", "fixed-window"} {
		b := ui.Pass(name, int64(time.Second))
		b.Update(int64(time.Second/2), 10, 5)
		refresh <- time.Now()
		b.Done(false)
	}
	ui.Wait()
	slave.Close() // the master reads what is left, then an error
	select {
	case out := <-read:
		for _, want := range []string{"gcra (1 of 2)", "fixed-window (2 of 2)", "500ms/1s"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("the terminal shows no %q:\n%q", want, out)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing on the terminal within 10s")
	}
}
