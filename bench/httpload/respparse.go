package httpload

import (
	"bytes"
	"io"
)

// respParser parses one response from the bytes of a connection as they
// arrive, for an event loop that cannot block on a read: feed consumes
// what it can of what arrived, eof says the connection ended. It frames
// and fails as readResponse does (same errors, same started), and keeps
// no byte itself: a partial line is left unconsumed, for the caller to
// feed again with what follows. A zero respParser is not ready: reset it.
// Owned by one goroutine.
type respParser struct {
	noBody, wantPolicy bool
	state              parseState
	started            bool // a byte of the response arrived
	status             int
	minor              byte // HTTP/1.minor
	h                  header
	remain             int64 // body or chunk bytes still to skip
	resp               response
	keepAlive          bool
}

// parseState is what a respParser expects next.
type parseState uint8

const (
	psStatus    parseState = iota // the status line
	psHeader                      // a header line or the blank line
	psLength                      // Content-Length body bytes
	psChunkSize                   // a chunk-size line
	psChunkData                   // chunk bytes
	psChunkEnd                    // the line end after a chunk's bytes
	psTrailer                     // a trailer line or the blank line
	psToEOF                       // body bytes up to the end of the connection
	psDone                        // the response is complete
)

// reset readies r for the response to a new request; noBody for HEAD,
// wantPolicy to keep the RateLimit-Policy field.
func (r *respParser) reset(noBody, wantPolicy bool) {
	*r = respParser{noBody: noBody, wantPolicy: wantPolicy}
}

// feed consumes what it can of b, the bytes that arrived and were not
// consumed yet: whole lines and body bytes. It returns how many bytes it
// consumed and done once the response is complete; r.resp and
// r.keepAlive then hold it, and the rest of b belongs to what follows. A
// line longer than readBufSize bytes, line feed included, is errMalformed.
func (r *respParser) feed(b []byte) (n int, done bool, err error) {
	if len(b) > 0 {
		r.started = true
	}
	for n < len(b) {
		switch r.state {
		case psLength, psChunkData:
			k := int(min(r.remain, int64(len(b)-n)))
			n += k
			r.remain -= int64(k)
			if r.remain > 0 {
				return n, false, nil
			}
			if r.state == psLength {
				return n, r.finish(), nil
			}
			r.state = psChunkEnd
			continue
		case psToEOF:
			return len(b), false, nil
		case psDone:
			return n, true, nil
		}
		i := bytes.IndexByte(b[n:], '\n')
		switch {
		case i >= readBufSize || i < 0 && len(b)-n >= readBufSize:
			return n, false, errMalformed // a line longer than readResponse's buffer
		case i < 0:
			return n, false, nil
		}
		line := b[n : n+i+1]
		n += i + 1
		if done, err := r.line(line); done || err != nil {
			return n, done, err
		}
	}
	return n, r.state == psDone, nil
}

// line takes one whole line, its line feed included.
func (r *respParser) line(line []byte) (done bool, err error) {
	switch r.state {
	case psStatus:
		status, minor, err := parseStatusLine(line)
		if err != nil {
			return false, err
		}
		r.status, r.minor, r.h, r.state = status, minor, newHeader(), psHeader
	case psHeader:
		if line = trimEOL(line); len(line) > 0 {
			return false, r.h.field(line, r.wantPolicy)
		}
		return r.endHeader()
	case psChunkSize:
		size, err := parseChunkSize(trimEOL(line))
		if err != nil {
			return false, err
		}
		if size == 0 {
			r.state, r.h = psTrailer, newHeader()
			return false, nil
		}
		r.state, r.remain = psChunkData, size
	case psChunkEnd:
		if len(trimEOL(line)) != 0 {
			return false, errMalformed
		}
		r.state = psChunkSize
	case psTrailer:
		if line = trimEOL(line); len(line) > 0 {
			return false, r.h.field(line, false)
		}
		return r.finish(), nil
	}
	return false, nil
}

// endHeader follows the blank line ending a header section: the next
// response after an interim one, or the final response's body.
func (r *respParser) endHeader() (done bool, err error) {
	if r.status < 200 {
		if r.status == 101 || r.status < 100 {
			return false, errMalformed // no protocol switch was asked for
		}
		r.state = psStatus // an interim response: the final one follows
		return false, nil
	}
	r.resp = response{status: r.status, retryAfter: r.h.retryAfter, policy: r.h.policy}
	r.keepAlive = r.h.keepAliveAfter(r.minor)
	switch bodyOf(r.noBody, r.status, r.h) {
	case bodyNone:
		return r.finish(), nil
	case bodyChunked:
		r.state = psChunkSize
	case bodyLength:
		if r.h.length == 0 {
			return r.finish(), nil
		}
		r.state, r.remain = psLength, r.h.length
	default:
		r.state, r.keepAlive = psToEOF, false
	}
	return false, nil
}

func (r *respParser) finish() bool {
	r.state = psDone
	return true
}

// eof ends the response at the end of the connection: done for a body
// that runs to it; else io.EOF before a status line (as readResponse,
// whatever a partial line held), io.ErrUnexpectedEOF after one.
func (r *respParser) eof() (done bool, err error) {
	switch r.state {
	case psDone:
		return true, nil
	case psToEOF:
		return r.finish(), nil
	case psStatus:
		return false, io.EOF
	}
	return false, io.ErrUnexpectedEOF
}
