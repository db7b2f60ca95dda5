package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
	"github.com/ratebench/ratebench/bench/backend"
)

// backendFlags choose where limiter state lives, for run, boundary and
// serve.
type backendFlags struct {
	backend   string
	failOpen  bool
	timeout   time.Duration
	redisTime string
	prefix    string // names the shared state; "" is a fresh name per run (-prefix, for run and serve)
}

func (b *backendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.backend, "backend", "memory", "where limiter state lives: memory, redis://HOST:PORT[/DB], rediss://..., redis+cluster://H1,H2,H3, sqlite://PATH")
	fs.BoolVar(&b.failOpen, "fail-open", false, "when the backend fails, admit (and count the error) instead of rejecting")
	durationVar(fs, &b.timeout, "backend-timeout", backend.DefaultTimeout, "per-decision timeout on a shared backend")
	fs.StringVar(&b.redisTime, "redis-time", "arg", "Redis: time passed in (arg, exact and reproducible) or read from Redis TIME (server, live mode only)")
}

// check checks the backend flags without connecting.
func (b *backendFlags) check() error {
	switch {
	case b.redisTime != "arg" && b.redisTime != "server":
		return usagef("-redis-time %q: want arg or server", b.redisTime)
	case b.timeout <= 0:
		return usagef("-backend-timeout %v must be > 0", b.timeout)
	}
	if _, err := backend.Parse(b.backend); err != nil {
		return usagef("-backend: %v%s", err, backendHint(b.backend))
	}
	return nil
}

// unreachable is a backend that could not be reached before the run, as
// bad input (exit 2): "-backend URL cannot be reached: WHY", the URL
// once, without its password.
func unreachable(value string, err error) error {
	why := err.Error()
	if op := (*net.OpError)(nil); errors.As(err, &op) {
		why = op.Err.Error() // the dial error repeats the address
	}
	display := value
	if p, perr := backend.Parse(value); perr == nil {
		display = p.Display
	}
	return usageError{reworded{fmt.Sprintf("-backend %s cannot be reached: %s", display, why), err}}
}

// reworded is err with a message of the user's words instead of its own.
type reworded struct {
	msg string
	err error
}

func (r reworded) Error() string { return r.msg }
func (r reworded) Unwrap() error { return r.err }

// shared reports whether the state lives outside the process (Redis,
// SQLite); false for memory or a backend that does not parse.
func (b *backendFlags) shared() bool {
	p, err := backend.Parse(b.backend)
	return err == nil && p.Kind != backend.Memory
}

// targets builds the targets on the chosen backend, the in-memory ones
// sized for keys keys within the bounds. Bad values and an unreachable
// backend are usage errors (exit 2): both are found before the run, and
// nothing is written before it returns.
func (b *backendFlags) targets(names []string, p algorithms.Policy, keys, replicas int, live bool, workers int, bd bounds) ([]bench.Target, func() error, error) {
	if err := b.check(); err != nil {
		return nil, nil, err
	}
	opts := backend.Options{Timeout: b.timeout, FailOpen: b.failOpen, ServerTime: b.redisTime == "server", Live: live, Workers: workers,
		MaxKeys: bd.maxKeys, Lossy: bd.lossy, Prefix: b.prefix}
	targets, closeFn, err := backend.Targets(names, p, keys, replicas, b.backend, opts)
	switch {
	case err == nil:
		return targets, closeFn, nil
	case errors.Is(err, algorithms.ErrBackend):
		return nil, nil, unreachable(b.backend, err)
	default: // bad URL, unknown algorithm, invalid policy, too many keys
		return nil, nil, usageError{err}
	}
}
