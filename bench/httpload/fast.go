package httpload

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"time"
)

// The fast client speaks HTTP/1.1 over plain TCP, one request at a time
// per connection, keeping connections alive the way wrk does: each worker
// owns one connection and writes each request in one write. It parses
// only what it measures (the status, Retry-After, RateLimit-Policy) and
// what frames the response (Content-Length, Transfer-Encoding, Connection),
// and allocates nothing per request. On loopback with the server on the
// same two cores, net/http's client (its connection goroutines and
// channels per request) answered about 35% fewer requests per second in a
// closed loop than this, and vegeta, built on it, 60% fewer.

// errMalformed is a response that is not HTTP/1.x as the fast client reads it.
var errMalformed = errors.New("httpload: malformed HTTP/1.x response")

// readBufSize bounds a response's status and header lines.
const readBufSize = 16 << 10

// response is what a round trip measured.
type response struct {
	status     int
	retryAfter int32 // seconds, noRetryAfter or badRetryAfter
	policy     string
}

// readResponse reads one response (after any 1xx interim ones) from br
// and discards its body. keepAlive reports whether the connection may
// carry another request.
func readResponse(br *bufio.Reader, noBody, wantPolicy bool) (resp response, keepAlive, started bool, err error) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return resp, false, len(line) > 0 || started, lineErr(err)
		}
		started = true
		status, minor, err := parseStatusLine(line)
		if err != nil {
			return resp, false, true, err
		}
		h, err := readHeader(br, wantPolicy)
		if err != nil {
			return resp, false, true, err
		}
		if status < 200 {
			if status == 101 || status < 100 {
				return resp, false, true, errMalformed // no protocol switch was asked for
			}
			continue // an interim response: the final one follows
		}
		resp = response{status: status, retryAfter: h.retryAfter, policy: h.policy}
		keepAlive = h.keepAliveAfter(minor)
		switch bodyOf(noBody, status, h) {
		case bodyNone:
		case bodyChunked:
			err = discardChunked(br)
		case bodyLength:
			if _, err = br.Discard(int(min(h.length, int64(^uint(0)>>1)))); errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
		default: // the body runs to the end of the connection
			_, err = io.Copy(io.Discard, br)
			keepAlive = false
		}
		return resp, keepAlive, true, err
	}
}

// lineErr turns a line too long for the buffer into a malformed response.
func lineErr(err error) error {
	if errors.Is(err, bufio.ErrBufferFull) {
		return errMalformed
	}
	return err
}

// header is what readHeader keeps of a response's header section.
type header struct {
	length           int64 // Content-Length, -1 when absent
	chunked          bool
	close, keepAlive bool // Connection: close / keep-alive
	retryAfter       int32
	policy           string
}

// readHeader reads header lines up to the blank line.
func readHeader(br *bufio.Reader, wantPolicy bool) (header, error) {
	h := newHeader()
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return h, lineErr(err)
		}
		line = trimEOL(line)
		if len(line) == 0 {
			return h, nil
		}
		if err := h.field(line, wantPolicy); err != nil {
			return h, err
		}
	}
}

// newHeader is a header before its first field.
func newHeader() header { return header{length: -1, retryAfter: noRetryAfter} }

// parseStatusLine parses a status line, "HTTP/1.x SSS reason" with its
// line feed: the status, and the minor version digit x.
func parseStatusLine(line []byte) (status int, minor byte, err error) {
	if len(line) < 13 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
		(line[12] != ' ' && line[12] != '\r' && line[12] != '\n') {
		return 0, 0, errMalformed
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, 0, errMalformed
		}
		status = status*10 + int(c-'0')
	}
	return status, line[7], nil
}

// field reads one header line, its line end trimmed, not empty.
func (h *header) field(line []byte, wantPolicy bool) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		if line[0] == ' ' || line[0] == '\t' {
			return nil // obsolete line folding: a continuation we do not need
		}
		return errMalformed
	}
	name, value := line[:colon], trimOWS(line[colon+1:])
	switch len(name) {
	case len("Content-Length"):
		if asciiEqualFold(name, "Content-Length") {
			n, ok := parseLength(value)
			if !ok || h.length >= 0 && h.length != n {
				return errMalformed
			}
			h.length = n
		}
	case len("Transfer-Encoding"):
		if asciiEqualFold(name, "Transfer-Encoding") {
			h.chunked = hasToken(value, "chunked")
		}
	case len("Connection"):
		if asciiEqualFold(name, "Connection") {
			h.close = h.close || hasToken(value, "close")
			h.keepAlive = h.keepAlive || hasToken(value, "keep-alive")
		}
	case len("Retry-After"):
		if asciiEqualFold(name, "Retry-After") {
			h.retryAfter = parseRetryAfter(value, time.Now())
		}
	case len("RateLimit-Policy"):
		if wantPolicy && h.policy == "" && asciiEqualFold(name, "RateLimit-Policy") {
			h.policy = string(value)
		}
	}
	return nil
}

// keepAliveAfter reports whether a response of HTTP/1.minor with header
// h leaves the connection open for another request (its body framed).
func (h *header) keepAliveAfter(minor byte) bool {
	return minor == '1' && !h.close || minor == '0' && h.keepAlive && !h.close
}

// body framings, as bodyOf tells them.
const (
	bodyNone    = iota // no body: HEAD, 204, 304
	bodyChunked        // chunked transfer coding
	bodyLength         // Content-Length bytes
	bodyToEOF          // to the end of the connection
)

// bodyOf says how the body of a final response with status and header h
// is framed.
func bodyOf(noBody bool, status int, h header) int {
	switch {
	case noBody || status == 204 || status == 304:
		return bodyNone
	case h.chunked:
		return bodyChunked
	case h.length >= 0:
		return bodyLength
	}
	return bodyToEOF
}

// discardChunked reads a chunked body and its trailers.
func discardChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return unexpected(lineErr(err))
		}
		size, err := parseChunkSize(trimEOL(line))
		if err != nil {
			return err
		}
		if size == 0 {
			_, err := readHeader(br, false) // the trailers
			return err
		}
		if _, err := br.Discard(int(size)); err != nil {
			return unexpected(err)
		}
		crlf, err := br.ReadSlice('\n')
		if err != nil {
			return unexpected(lineErr(err))
		}
		if len(trimEOL(crlf)) != 0 {
			return errMalformed
		}
	}
}

// parseChunkSize parses a chunk-size line, its line end trimmed: hex
// digits, then any chunk extension.
func parseChunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = trimOWS(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, errMalformed
	}
	var size int64
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, errMalformed
		}
		size = size<<4 | int64(d)
	}
	return size, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// trimEOL drops the line feed ending b and a carriage return before it.
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// trimOWS drops the spaces and tabs around b.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseLength parses a Content-Length value: digits only.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// asciiEqualFold reports whether b equals s ignoring ASCII case; s is
// the canonical spelling.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasToken reports whether the comma-separated list v holds token
// (ASCII case-insensitive).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		if asciiEqualFold(trimOWS(item), token) {
			return true
		}
	}
	return false
}
