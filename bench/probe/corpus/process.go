package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for one writer and concurrent
// readers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a child process serving a target: in a process group of its
// own (so that one that does not stop is killed with its workers), its
// output kept for errors. Safe for concurrent use.
type proc struct {
	what    string // the program, for errors: "nginx"
	cmd     *exec.Cmd
	out     *SyncBuffer   // its stdout and stderr
	logs    func() string // more of its words for errors, such as a log file's; nil: none
	done    chan struct{} // closed when it has exited
	waitErr error         // its exit, once done is closed
	once    sync.Once
	stopErr error
}

// launch starts cmd as what; logs (nil: none) returns more of its words
// for errors.
func launch(what string, cmd *exec.Cmd, logs func() string) (*proc, error) {
	p := &proc{what: what, cmd: cmd, out: &SyncBuffer{}, logs: logs, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	go func() { p.waitErr = cmd.Wait(); close(p.done) }()
	return p, nil
}

// words returns what the process wrote, then its log.
func (p *proc) words() string {
	s := strings.TrimSpace(p.out.String())
	if p.logs != nil {
		if l := strings.TrimSpace(p.logs()); l != "" {
			s += "\n" + l
		}
	}
	return s
}

// await polls ready every 10ms until it returns true, at most within
// (or until ctx ends); it fails, having stopped the process, if the
// process exits first or ready never holds.
func (p *proc) await(ctx context.Context, within time.Duration, what string, ready func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !ready() {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before %s (%v): %s", p.what, what, p.waitErr, p.words())
		case <-ctx.Done():
			p.kill()
			return fmt.Errorf("%s: not %s within %v (%w): %s", p.what, what, within, ctx.Err(), p.words())
		case <-tick.C:
		}
	}
	return nil
}

// awaitDial waits until addr accepts a TCP connection (see await).
func (p *proc) awaitDial(ctx context.Context, addr string, within time.Duration) error {
	return p.await(ctx, within, "accepting on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// awaitOutput waits until the process's output matches re and returns
// re's first submatch (see await).
func (p *proc) awaitOutput(ctx context.Context, re *regexp.Regexp, within time.Duration) (string, error) {
	var got string
	err := p.await(ctx, within, fmt.Sprintf("saying %q", re), func() bool {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			got = m[1]
			return true
		}
		return false
	})
	return got, err
}

// stop sends sig (the program's graceful stop) and waits for the process
// to exit; after grace it kills the process group. It returns an error
// when the process had exited on its own, had to be killed or exited
// other than cleanly. Only the first call stops; later ones return its
// error.
func (p *proc) stop(sig os.Signal, grace time.Duration) error {
	p.once.Do(func() {
		select {
		case <-p.done:
			p.stopErr = fmt.Errorf("%s exited on its own (%v): %s", p.what, p.waitErr, p.words())
			return
		default:
		}
		if err := p.cmd.Process.Signal(sig); err != nil {
			p.stopErr = fmt.Errorf("%s: %w", p.what, err)
		}
		select {
		case <-p.done:
			if p.waitErr != nil {
				p.stopErr = fmt.Errorf("%s: exit after %v: %v: %s", p.what, sig, p.waitErr, p.words())
			}
		case <-time.After(grace):
			killGroup(p.cmd)
			<-p.done
			p.stopErr = fmt.Errorf("%s did not stop within %v of %v; killed: %s", p.what, grace, sig, p.words())
		}
	})
	return p.stopErr
}

// kill kills the process group at once and waits for the process; a
// later stop returns an error saying it exited.
func (p *proc) kill() {
	killGroup(p.cmd)
	<-p.done
}

// freeLoopbackPort returns a port that was free on 127.0.0.1 a moment
// ago. A program that cannot be told to choose its own port is given
// one; withFreePort retries when another took it first.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errPortTaken is what a start returns when its port was taken between
// freeLoopbackPort and the program's bind.
var errPortTaken = errors.New("port taken")

// withFreePort calls start with a free loopback port, up to five times
// while it fails with errPortTaken.
func withFreePort[T any](start func(port int) (T, error)) (T, error) {
	for try := 0; ; try++ {
		port, err := freeLoopbackPort()
		if err != nil {
			var zero T
			return zero, err
		}
		v, err := start(port)
		if err == nil || try == 4 || !errors.Is(err, errPortTaken) {
			return v, err
		}
	}
}

// portTaken wraps err with errPortTaken when the program's words say its
// port was in use.
func portTaken(err error) error {
	if err != nil && strings.Contains(err.Error(), "Address already in use") {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// lookPath returns the first of names found on PATH or at its absolute
// path (Debian puts nginx and haproxy in /usr/sbin, which a user's PATH
// may lack), or an error wrapping ErrMissing that says to install hint.
func lookPath(hint string, names ...string) (string, error) {
	for _, name := range names {
		if bin, err := exec.LookPath(name); err == nil {
			return bin, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not on PATH nor at %s (%s)", ErrMissing, names[0], strings.Join(names[1:], ", "), hint)
}
