// Package serve runs an HTTP server behind an httplimit.Middleware: a
// demo endpoint (OK) with bounded timeouts, that logs what the limiter
// decided once a second and, when its context ends, shuts down
// gracefully. It is `ratebench serve`'s server.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/ratebench/ratebench/algorithms/httplimit"
)

// Timeouts bound how long the server's connections may take, and how
// long it waits for requests in progress when it stops.
type Timeouts struct {
	ReadHeader time.Duration // to read a request's headers
	// Read bounds reading a whole request, body included, from its first
	// byte (http.Server.ReadTimeout): a body trickled byte by byte would
	// otherwise hold the connection while net/http drains it after the
	// handler. net/http clears the read deadline once the body is read, so
	// a shaper's delay does not count against it for a request without
	// one (OK reads no body).
	Read time.Duration
	// Write bounds writing a response, from when the middleware answers:
	// after a shaper's delay, not from the end of the headers as
	// http.Server.WriteTimeout alone would (see httplimit.Config, whose
	// WriteTimeout must be the same). A client that pipelines requests
	// and never reads its responses fills the socket buffers and is cut
	// after it.
	Write time.Duration
	Idle  time.Duration // between requests on a kept-alive connection
	// Grace is how long Run waits, once its context is done, for requests
	// in progress before it closes their connections.
	Grace time.Duration
}

// DefaultTimeouts are `ratebench serve`'s. OK's responses are a few
// hundred bytes, which a client that reads takes in well under Write.
var DefaultTimeouts = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Write:      10 * time.Second,
	Idle:       2 * time.Minute,
	Grace:      5 * time.Second,
}

// OK is the demo service: 200 "ok". Safe for concurrent use.
func OK(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["Content-Length"] = []string{"3"}
	_, _ = io.WriteString(w, "ok\n")
}

// Run serves OK behind mw on ln until ctx is done, writing to logw one
// line per second that saw requests (see mw.Stats) and the server's own
// errors, then shuts down gracefully. Stopping is its normal end: it
// returns nil even when it had to cut connections still busy after
// t.Grace (and says so on logw), and an error only if the server failed.
// mw must have been built with t.Write as its WriteTimeout. logw is
// written from one goroutine at a time.
func Run(ctx context.Context, ln net.Listener, mw *httplimit.Middleware, t Timeouts, logw io.Writer) error {
	srv := &http.Server{
		Handler:           mw.Wrap(http.HandlerFunc(OK)),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		// The same as the middleware's: this one covers what the
		// middleware does not answer, and is reset at each request; the
		// middleware's is set again after a shaper's delay.
		WriteTimeout: t.Write,
		IdleTimeout:  t.Idle,
		ErrorLog:     log.New(logw, "serve: ", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	err := logEverySecond(ctx, mw, served, logw)
	shutdown, cancel := context.WithTimeout(context.Background(), t.Grace)
	defer cancel()
	switch serr := srv.Shutdown(shutdown); {
	case errors.Is(serr, context.DeadlineExceeded):
		// Connections still busy after the grace: a client not reading its
		// responses (until the write timeout cuts it), requests a shaper
		// still holds. Cutting them is part of stopping, not a failure.
		_ = srv.Close()
		fmt.Fprintf(logw, "shutdown: closed the connections still busy after %v\n", t.Grace)
	case serr != nil && err == nil:
		err = fmt.Errorf("shutdown: %w", serr) // closing the listener failed
	}
	return err
}

// logEverySecond writes one line per second that saw requests: admitted
// and rejected in that second, then errors, bad_keys and table_full (of
// rejected, those refused by a full key table) when any is not zero. It
// returns nil when ctx is done, or the server's error if it stops first.
func logEverySecond(ctx context.Context, mw *httplimit.Middleware, served <-chan error, w io.Writer) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last httplimit.Stats
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case now := <-tick.C:
			s := mw.Stats()
			if d := (httplimit.Stats{Admitted: s.Admitted - last.Admitted, Rejected: s.Rejected - last.Rejected,
				Errors: s.Errors - last.Errors, BadKeys: s.BadKeys - last.BadKeys,
				TableFull: s.TableFull - last.TableFull}); d != (httplimit.Stats{}) {
				fmt.Fprintf(w, "%s admitted %d rejected %d", now.Format("15:04:05"), d.Admitted, d.Rejected)
				if d.Errors > 0 || d.BadKeys > 0 || d.TableFull > 0 {
					fmt.Fprintf(w, " errors %d bad_keys %d table_full %d", d.Errors, d.BadKeys, d.TableFull)
				}
				fmt.Fprintln(w)
			}
			last = s
		}
	}
}
