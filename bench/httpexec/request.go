package httpexec

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// UserAgent is the User-Agent sent unless Config.Header sets one.
const UserAgent = "ratebench-attack"

// ParseHeader parses a header flag, "Name: value" (the space is optional),
// into its canonical name and its value. The name must be an RFC 9110
// token and the value must hold no CR, LF or NUL; errors wrap
// ErrBadRequest. Safe for concurrent use.
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
// syntax of a header field name (and of a method). Safe for concurrent
// use.
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

// field is one header line to send, its name as Config.Header spells it.
type field struct{ name, value string }

// target is a checked request: where to connect and what to send. It is
// read-only once built.
type target struct {
	url    *url.URL
	addr   string // host:port to dial
	method string
	// fields are Config.Header's lines sorted by name, without Host and
	// the key header, with a User-Agent.
	fields []field
	body   []byte
	host   string // the Host header
	// keyHeader is the name of the per-request key header as given, or "".
	keyHeader string
}

// newTarget checks the URL, method, headers and key header of cfg.
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
	t := &target{url: u, method: method, body: cfg.Body, host: u.Host}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	if cfg.KeyHeader != "" {
		if !ValidHeaderName(cfg.KeyHeader) {
			return nil, fmt.Errorf("%w: key header %q is not a token", ErrBadRequest, cfg.KeyHeader)
		}
		t.keyHeader = cfg.KeyHeader
	}
	hasUA := false
	// Names are compared without regard to case: a map may hold
	// "content-length" as well as "Content-Length".
	for name, values := range cfg.Header {
		if !ValidHeaderName(name) {
			return nil, fmt.Errorf("%w: header name %q is not a token", ErrBadRequest, name)
		}
		// The client frames the request; a Trailer field would make
		// fasthttp send the body chunked.
		for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection", "Trailer"} {
			if strings.EqualFold(name, k) && len(values) > 0 {
				return nil, fmt.Errorf("%w: header %s is set by the client itself", ErrBadRequest, k)
			}
		}
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("%w: header %s: the value holds CR, LF or NUL", ErrBadRequest, name)
			}
		}
		switch {
		case len(values) == 0:
		case strings.EqualFold(name, "Host"):
			if strings.ContainsAny(values[0], " \t") || values[0] == "" {
				return nil, fmt.Errorf("%w: header Host %q: want HOST[:PORT]", ErrBadRequest, values[0])
			}
			t.host = values[0]
		case t.keyHeader != "" && strings.EqualFold(name, t.keyHeader):
			// Each request carries its own key instead.
		default:
			hasUA = hasUA || strings.EqualFold(name, "User-Agent")
			for _, v := range values {
				t.fields = append(t.fields, field{name, v})
			}
		}
	}
	if !hasUA {
		t.fields = append(t.fields, field{"User-Agent", UserAgent})
	}
	// A stable order on the wire; the values of one name keep theirs.
	slices.SortStableFunc(t.fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
	return t, nil
}
