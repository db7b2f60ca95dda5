package httpload

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// errKind classifies how a request failed without a response.
type errKind uint8

const (
	errNone     errKind = iota
	errTimeout          // no whole response within Config.Timeout (dial included)
	errRefused          // the dial was refused: nothing listens there
	errReset            // the connection was reset or broken (ECONNRESET, EPIPE, ECONNABORTED)
	errClosed           // the server closed the connection before a whole response
	errCanceled         // the attack was interrupted with the request in flight
	errOther            // anything else: DNS, routing, a malformed response, ...
	numErrKinds
)

// Error kinds as result.json's error_kinds names them; KindHTTP5xx counts
// responses with a 5xx status, also errors.
const (
	KindTimeout  = "timeout"
	KindRefused  = "connection_refused"
	KindReset    = "connection_reset"
	KindClosed   = "connection_closed"
	KindCanceled = "canceled"
	KindOther    = "other"
	KindHTTP5xx  = "http_5xx"
)

var kindNames = [numErrKinds]string{"", KindTimeout, KindRefused, KindReset, KindClosed, KindCanceled, KindOther}

// ErrorKind returns the error_kinds name of a transport error: timeout,
// connection_refused, connection_reset, connection_closed, canceled or
// other.
func ErrorKind(err error) string { return kindNames[classify(err)] }

// classify sorts a transport error by errors.Is on the errnos and
// sentinel errors net, os and context wrap.
func classify(err error) errKind {
	var ne net.Error
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, context.Canceled):
		return errCanceled
	case errors.Is(err, syscall.ECONNREFUSED):
		return errRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return errReset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return errTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errClosed
	}
	return errOther
}
