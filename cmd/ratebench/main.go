// Command ratebench drives rate-limiter algorithms with synthetic workloads
// and reports what they admitted, how fast they decided and how far they
// strayed from theory. Run `ratebench help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/redis"
)

// usageError marks bad input: one line on stderr and exit status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitStatus is an error with its own exit status: a check that ran and
// failed (1), or could not tell (3), after the command wrote its results.
type exitStatus struct {
	code int
	err  error
}

func (s exitStatus) Error() string { return s.err.Error() }
func (s exitStatus) Unwrap() error { return s.err }

// errInterrupted is what a measuring command returns when a signal cut its
// run short and it wrote what ran: main exits 128 + the signal's number,
// as shells expect (130 for SIGINT, 143 for SIGTERM).
var errInterrupted = errors.New("interrupted")

// signalCause is the cause main cancels its context with.
type signalCause struct{ sig syscall.Signal }

func (s signalCause) Error() string { return "received " + s.sig.String() }

// interruptedStatus is the exit status of a run that ctx's signal cut
// short: 128 + the signal's number, or 130 when the cause is not a signal
// (a test's cancel).
func interruptedStatus(ctx context.Context) int {
	var s signalCause
	if errors.As(context.Cause(ctx), &s) {
		return 128 + int(s.sig)
	}
	return 130
}

// command is one subcommand: its flags and what it does with the rest.
// usage, examples and notes, when set, are part of its -h.
type command struct {
	name     string
	summary  string
	usage    string
	examples []string
	notes    []string // said after the flags
	noArgs   bool     // refuse arguments besides the flags
	fs       *flag.FlagSet
	run      func(ctx context.Context, args []string) error
}

// env is what commands write to; tests replace it.
type env struct {
	stdout, stderr io.Writer
	args           []string // the whole command line, for result.json
	// beforeWrite, when set, is called between a run and the writing of
	// its results: tests break the output folder there.
	beforeWrite func()
	// wrapLimiter, when set, wraps the limiter `serve` builds: tests record
	// the server's own decision instants through it.
	wrapLimiter func(algorithms.Limiter) algorithms.Limiter
}

func (e *env) commands() []*command {
	return []*command{
		e.listCommand(),
		e.runCommand(),
		e.boundaryCommand(),
		e.reportCommand(),
		e.compareCommand(),
		e.mergeCommand(),
		e.serveCommand(),
		e.attackCommand(),
		e.fitCommand(),
		e.probeCommand(),
		e.versionCommand(),
		e.helpCommand(),
	}
}

// main is the only place that exits.
func main() {
	// go-redis logs "failed to dial" to stderr while a server is down, over
	// the progress bars; the errors are counted in result.json instead.
	redis.SetClientLog(io.Discard)
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal stops the run, which then writes what ran; a
		// second one is a user who will not wait for that.
		first := (<-sigs).(syscall.Signal)
		cancel(signalCause{first})
		second := (<-sigs).(syscall.Signal)
		fmt.Fprintf(os.Stderr, "ratebench: %v again: exiting without writing\n", second)
		os.Exit(128 + int(second))
	}()
	// A reader that goes away (`| head`, a pager quit early) must not
	// cost a run the folder it has yet to write: with SIGPIPE ignored, a
	// write to its pipe fails instead of killing the process, and
	// readerGone drops what no one will read.
	signal.Ignore(syscall.SIGPIPE)
	e := &env{stdout: readerGone{os.Stdout}, stderr: readerGone{os.Stderr}, args: os.Args}
	os.Exit(e.main(ctx, os.Args[1:]))
}

// readerGone is w, whose writes succeed once its reader has closed the
// pipe (EPIPE): what a command prints is a courtesy, its folder the
// record, and the one must not stop the other.
type readerGone struct{ w io.Writer }

func (r readerGone) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		return len(p), nil
	}
	return n, err
}

// main runs one command and returns the exit status: 0, 1 for a failure,
// 2 for bad input.
func (e *env) main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		e.help()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, err := e.lookupCommand(args[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "ratebench: %v\n", err)
		return 2
	}
	c.fs.SetOutput(io.Discard)
	if err := c.fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(e.stdout)
			return 0
		}
		fmt.Fprintf(e.stderr, "ratebench %s: %v\n", c.name, flagError(c.fs, err))
		return 2
	}
	if args := c.fs.Args(); c.noArgs && len(args) > 0 {
		err = usagef("unexpected argument %q", args[0])
	} else {
		err = c.run(ctx, args)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errInterrupted):
		// The command said where it wrote what ran; a failure
		// besides (e.g. writing it) comes wrapped.
		if err != errInterrupted {
			fmt.Fprintf(e.stderr, "ratebench %s: %v\n", c.name, err)
		}
		return interruptedStatus(ctx)
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Stopped while getting ready (reading a trace, connecting):
		// nothing ran, nothing was written.
		fmt.Fprintf(e.stderr, "ratebench %s: interrupted before the run: nothing written\n", c.name)
		return interruptedStatus(ctx)
	}
	fmt.Fprintf(e.stderr, "ratebench %s: %v\n", c.name, err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	if st := (exitStatus{}); errors.As(err, &st) {
		return st.code
	}
	return 1
}

// help is ratebench's own help: its commands and exit statuses.
func (e *env) help() {
	fmt.Fprintln(e.stdout, "usage: ratebench COMMAND [flags]\n\ncommands:")
	for _, c := range e.commands() {
		fmt.Fprintf(e.stdout, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(e.stdout, "\nratebench help COMMAND (or ratebench COMMAND -h) shows a command's usage, examples and flags.\n"+
		"Names of commands, algorithms and workloads are case-insensitive.")
	fmt.Fprintln(e.stdout, "\nexit status: 0 done; 1 a failure during the run, a -check failed, or probe -expect contradicted;\n"+
		"2 bad input (flags, names, files, an unreachable URL or backend), nothing written; 3 probe -expect\n"+
		"could not tell; 130 or 143 interrupted by SIGINT or SIGTERM, after writing what ran.")
}
