package httpexec_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
	"github.com/valyala/fasthttp"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want httpexec.Kind
	}{
		{name: "nil", err: nil, want: httpexec.None},
		// Dial errors as net returns them.
		{name: "refused", err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, want: httpexec.Refused},
		{name: "reset", err: &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, want: httpexec.Reset},
		{name: "broken pipe", err: fmt.Errorf("write: %w", syscall.EPIPE), want: httpexec.Reset},
		// Deadlines, net/http's context and fasthttp's own timeout, which
		// has Timeout but not Temporary.
		{name: "deadline", err: &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, want: httpexec.Timeout},
		{name: "context deadline", err: fmt.Errorf("Get: %w", context.DeadlineExceeded), want: httpexec.Timeout},
		{name: "fasthttp timeout", err: fasthttp.ErrTimeout, want: httpexec.Timeout},
		// No free connection within MaxWait, though net/http ends the
		// wait with a cancel.
		{name: "no free connection", err: fmt.Errorf("%w: %w", httpexec.ErrNoFreeConnection, context.Canceled), want: httpexec.Timeout},
		// Closed before a whole response.
		{name: "EOF", err: io.EOF, want: httpexec.Closed},
		{name: "unexpected EOF", err: fmt.Errorf("body: %w", io.ErrUnexpectedEOF), want: httpexec.Closed},
		{name: "fasthttp closed", err: fasthttp.ErrConnectionClosed, want: httpexec.Closed},
		// Aborted, whatever the connection said.
		{name: "aborted", err: fmt.Errorf("%w: %w", httpexec.ErrAborted, io.EOF), want: httpexec.Canceled},
		{name: "canceled", err: context.Canceled, want: httpexec.Canceled},
		// Anything else.
		{name: "other", err: errors.New("malformed"), want: httpexec.Other},
	} {
		if got := httpexec.Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestKindNames: the names result.json's error_kinds uses.
func TestKindNames(t *testing.T) {
	want := map[httpexec.Kind]string{
		httpexec.None: "", httpexec.Timeout: "timeout", httpexec.Refused: "connection_refused",
		httpexec.Reset: "connection_reset", httpexec.Closed: "connection_closed",
		httpexec.Canceled: "canceled", httpexec.Other: "other",
	}
	for k, name := range want {
		if k.String() != name {
			t.Errorf("Kind %d: %q, want %q", k, k.String(), name)
		}
	}
}
