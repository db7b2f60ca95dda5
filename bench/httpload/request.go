package httpload

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ErrBadRequest is wrapped by the errors about what Config asks to send: a
// URL, method, header or key header that cannot be sent.
var ErrBadRequest = errors.New("httpload: bad request")

// ParseHeader parses a header flag, "Name: value" (the space is optional),
// into its canonical name and its value. The name must be an RFC 9110
// token and the value must hold no CR, LF or NUL; errors wrap
// ErrBadRequest.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("%w: header %q: want Name: value", ErrBadRequest, s)
	}
	if !ValidHeaderName(name) {
		return "", "", fmt.Errorf("%w: header %q: the name %q is not a token", ErrBadRequest, s, name)
	}
	value = strings.Trim(value, " \t")
	if strings.ContainsAny(value, "\r\n\x00") {
		return "", "", fmt.Errorf("%w: header %q: the value holds CR, LF or NUL", ErrBadRequest, s)
	}
	return http.CanonicalHeaderKey(name), value, nil
}

// ValidHeaderName reports whether s is a non-empty RFC 9110 token, the
// syntax of a header field name.
func ValidHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// target is a checked request: where to connect and what to send.
type target struct {
	url    *url.URL
	addr   string // host:port to dial
	method string
	header http.Header // without the key header
	body   []byte
	host   string // the Host header
	// keyHeader is the canonical name of the per-arrival key header, or "".
	keyHeader string
	noBody    bool // HEAD: responses carry no body
}

// newTarget checks the URL, method, headers and key header.
func newTarget(cfg *Config) (*target, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: URL %q: %v", ErrBadRequest, cfg.URL, errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: URL %q: want http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH", ErrBadRequest, cfg.URL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: URL %q: credentials in the URL are not supported; send an Authorization header", ErrBadRequest, cfg.URL)
	}
	method := cfg.Method
	if method == "" {
		method = http.MethodGet
	}
	if !ValidHeaderName(method) { // a method is a token too
		return nil, fmt.Errorf("%w: method %q is not a token", ErrBadRequest, method)
	}
	t := &target{url: u, method: method, header: http.Header{}, body: cfg.Body, host: u.Host, noBody: method == http.MethodHead}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	for name, values := range cfg.Header {
		if !ValidHeaderName(name) {
			return nil, fmt.Errorf("%w: header name %q is not a token", ErrBadRequest, name)
		}
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("%w: header %s: the value holds CR, LF or NUL", ErrBadRequest, name)
			}
			t.header.Add(name, v)
		}
	}
	if h := t.header.Get("Host"); h != "" {
		t.host = h
		t.header.Del("Host")
	}
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection"} {
		if t.header.Get(k) != "" {
			return nil, fmt.Errorf("%w: header %s is set by the client itself", ErrBadRequest, k)
		}
	}
	if t.header.Get("User-Agent") == "" {
		t.header.Set("User-Agent", UserAgent)
	}
	if cfg.KeyHeader != "" {
		if !ValidHeaderName(cfg.KeyHeader) {
			return nil, fmt.Errorf("%w: key header %q is not a token", ErrBadRequest, cfg.KeyHeader)
		}
		t.keyHeader = http.CanonicalHeaderKey(cfg.KeyHeader)
		t.header.Del(t.keyHeader)
	}
	return t, nil
}

// UserAgent is the User-Agent sent unless a header sets one.
const UserAgent = "ratebench-attack"

// wire returns the request's bytes before and after the key header line:
// the request line and headers, then the framing, the blank line and the
// body.
func (t *target) wire() (head, tail []byte) {
	var b strings.Builder
	b.WriteString(t.method + " " + t.url.RequestURI() + " HTTP/1.1\r\nHost: " + t.host + "\r\n")
	_ = t.header.Write(&b) // sorted; a strings.Builder never fails
	head = []byte(b.String())
	b.Reset()
	if len(t.body) > 0 || t.method == http.MethodPost || t.method == http.MethodPut || t.method == http.MethodPatch {
		b.WriteString("Content-Length: " + strconv.Itoa(len(t.body)) + "\r\n")
	}
	b.WriteString("\r\n")
	tail = append([]byte(b.String()), t.body...)
	return head, tail
}
