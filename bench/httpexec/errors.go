package httpexec

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/valyala/fasthttp"
)

var (
	// ErrBadRequest is wrapped by every error of New: about what Config
	// asks to send (a URL, method, header or key header that cannot be
	// sent) or how (a client, bound or duration out of range).
	ErrBadRequest = errors.New("bad request")
	// ErrUnreachable is wrapped by Check's error when the server cannot be
	// connected to.
	ErrUnreachable = errors.New("cannot connect")
	// ErrAborted is wrapped by Response.Err of the requests that Abort
	// ended or refused (Kind Canceled).
	ErrAborted = errors.New("httpexec: aborted")
	// ErrNoFreeConnection is wrapped by Response.Err of a request that
	// found every one of Config.Connections busy for Config.MaxWait (Kind
	// Timeout, Attempts 0: it was not sent).
	ErrNoFreeConnection = errors.New("httpexec: no free connection within MaxWait")
)

// errStale fails a request, before anything of it is written, on a kept
// connection that the server closed or wrote to while it was idle: the
// request goes on another connection (see staleCheck).
var errStale = errors.New("httpexec: the server closed or wrote to the idle connection")

// Kind is how a request failed without a whole response.
type Kind uint8

// Kinds of failure; None for a request that got a whole response.
const (
	None     Kind = iota
	Timeout       // no whole response within Config.Timeout (the wait for a connection and the dial included), or no free connection within Config.MaxWait
	Refused       // the dial was refused: nothing listens there
	Reset         // the connection was reset or broken (ECONNRESET, EPIPE, ECONNABORTED)
	Closed        // the server closed the connection before a whole response
	Canceled      // Abort ended the request, or it came after Abort
	Other         // anything else: DNS, routing, a malformed response, a header block over the read buffer, ...
	numKinds
)

var kindNames = [numKinds]string{"", "timeout", "connection_refused", "connection_reset", "connection_closed", "canceled", "other"}

// String returns the name result.json's error_kinds gives k: "timeout",
// "connection_refused", "connection_reset", "connection_closed",
// "canceled" or "other"; "" for None.
func (k Kind) String() string {
	if k >= numKinds {
		return "other"
	}
	return kindNames[k]
}

// Classify sorts a transport error by errors.Is on the errnos and sentinel
// errors that net, os, context, net/http and fasthttp return: None for
// nil. Safe for concurrent use.
func Classify(err error) Kind {
	var timeout interface{ Timeout() bool } // net.Error, and fasthttp's ErrTimeout that lacks Temporary
	switch {
	case err == nil:
		return None
	case errors.Is(err, ErrAborted):
		return Canceled
	case errors.Is(err, ErrNoFreeConnection): // before context.Canceled: net/http's wait ends with it
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return Reset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &timeout) && timeout.Timeout():
		return Timeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, fasthttp.ErrConnectionClosed),
		errors.Is(err, errStale):
		return Closed
	}
	return Other
}
