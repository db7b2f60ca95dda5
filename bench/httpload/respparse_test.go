//go:build !race

package httpload

import (
	"errors"
	"io"
	"testing"
)

// parseInPieces reads one response from wire with a respParser, handed
// the bytes piece at a time as a connection would deliver them, then the
// end of the connection. rest is what followed the response.
func parseInPieces(wire string, piece int, noBody bool) (got want, started bool, rest string) {
	var p respParser
	p.reset(noBody, true)
	var buf []byte // arrived, not consumed
	finish := func() (want, bool, string) {
		return want{status: p.resp.status, keepAlive: p.keepAlive, retryAfter: p.resp.retryAfter, policy: p.resp.policy}, p.started, string(buf)
	}
	for i := 0; i < len(wire); i += piece {
		buf = append(buf, wire[i:min(i+piece, len(wire))]...)
		n, done, err := p.feed(buf)
		buf = buf[n:]
		if err != nil {
			return want{err: err}, p.started, ""
		}
		if done {
			buf = append(buf, wire[min(i+piece, len(wire)):]...)
			return finish()
		}
	}
	if done, err := p.eof(); err != nil || !done {
		return want{err: err}, p.started, ""
	}
	return finish()
}

// TestRespParser: the incremental parser reads every case as
// readResponse does, whatever pieces the bytes come in.
func TestRespParser(t *testing.T) {
	for _, tc := range responseCases {
		for _, piece := range []int{1, 2, 3, 7, 64, 1 << 20} {
			got, _, rest := parseInPieces(tc.wire, piece, tc.noBody)
			if tc.want.err != nil {
				if !errors.Is(got.err, tc.want.err) {
					t.Errorf("%s, pieces of %d: err %v, want %v", tc.name, piece, got.err, tc.want.err)
				}
				continue
			}
			if got != tc.want {
				t.Errorf("%s, pieces of %d: got %+v, want %+v", tc.name, piece, got, tc.want)
				continue
			}
			if tc.want.keepAlive { // the framing ended exactly at the next response
				if next, _, rest := parseInPieces(rest, piece, false); next.err != nil || next.status != 204 || rest != "" {
					t.Errorf("%s, pieces of %d: the next response: %+v, %q left", tc.name, piece, next, rest)
				}
			}
		}
	}
}

// TestRespParserStarted: started, which lets a request be retried on a
// new connection, is as readResponse reports it.
func TestRespParserStarted(t *testing.T) {
	if _, started, _ := parseInPieces("", 1, false); started {
		t.Error("empty: started")
	}
	if got, started, _ := parseInPieces("HTTP/1.1 200", 5, false); !started || !errors.Is(got.err, io.EOF) {
		t.Errorf("a partial status line: started %v, %v", started, got.err)
	}
	if got, _, _ := parseInPieces("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", 4, false); !errors.Is(got.err, io.ErrUnexpectedEOF) {
		t.Errorf("a short body: %v", got.err)
	}
}
