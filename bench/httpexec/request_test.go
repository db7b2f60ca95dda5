package httpexec_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/httpexec"
)

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in          string
		name, value string
		ok          bool
	}{
		// The name is canonicalized, the value trimmed.
		{in: "X-API-Key: secret", name: "X-Api-Key", value: "secret", ok: true},
		// The first colon splits; the space after it is optional.
		{in: "authorization:Bearer a:b", name: "Authorization", value: "Bearer a:b", ok: true},
		// An empty value.
		{in: "X-Empty:", name: "X-Empty", ok: true},
		// No colon.
		{in: "no colon"},
		// No name.
		{in: ": value"},
		// A name that is not a token.
		{in: "Bad Name: 1"},
		// A value that would inject a header.
		{in: "X-Inject: a\r\nHost: evil"},
	} {
		name, value, err := httpexec.ParseHeader(tc.in)
		if (err == nil) != tc.ok || name != tc.name || value != tc.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v", tc.in, name, value, err)
		}
		if err != nil && !errors.Is(err, httpexec.ErrBadRequest) {
			t.Errorf("ParseHeader(%q): %v does not wrap ErrBadRequest", tc.in, err)
		}
	}
}

func TestValidHeaderName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{in: "X-Api-Key", want: true},          // the usual
		{in: "x_key!#$%&'*+.^`|~", want: true}, // every token character
		{in: "", want: false},                  // empty
		{in: "X Key", want: false},             // a space
		{in: "X:Key", want: false},             // a separator
		{in: "Ключ", want: false},              // not ASCII
	} {
		if got := httpexec.ValidHeaderName(tc.in); got != tc.want {
			t.Errorf("ValidHeaderName(%q) = %v", tc.in, got)
		}
	}
}

// TestNewRefuses: every Config New refuses, with an error wrapping
// ErrBadRequest.
func TestNewRefuses(t *testing.T) {
	const url = "http://127.0.0.1:1/"
	for _, tc := range []struct {
		name string
		cfg  httpexec.Config
	}{
		// Credentials belong in a header.
		{name: "userinfo", cfg: httpexec.Config{URL: "http://user:pw@host/"}},
		// No host.
		{name: "no host", cfg: httpexec.Config{URL: "http:///path"}},
		// Neither http nor https.
		{name: "scheme", cfg: httpexec.Config{URL: "ftp://host/"}},
		// Not a URL.
		{name: "unparsable", cfg: httpexec.Config{URL: "http://host:port:1/%zz"}},
		// A method is a token.
		{name: "method", cfg: httpexec.Config{URL: url, Method: "GET /"}},
		// Framing is the client's, in any case.
		{name: "content-length", cfg: httpexec.Config{URL: url, Header: http.Header{"content-length": {"3"}}}},
		{name: "transfer-encoding", cfg: httpexec.Config{URL: url, Header: http.Header{"Transfer-Encoding": {"chunked"}}}},
		{name: "connection", cfg: httpexec.Config{URL: url, Header: http.Header{"Connection": {"close"}}}},
		{name: "trailer", cfg: httpexec.Config{URL: url, Header: http.Header{"Trailer": {"X"}}}},
		// A header name that is not a token.
		{name: "header name", cfg: httpexec.Config{URL: url, Header: http.Header{"X Y": {"1"}}}},
		// A value with a line break.
		{name: "header value", cfg: httpexec.Config{URL: url, Header: http.Header{"X": {"a\nb"}}}},
		// An empty Host.
		{name: "host", cfg: httpexec.Config{URL: url, Header: http.Header{"Host": {""}}}},
		// A key header that is not a token.
		{name: "key header", cfg: httpexec.Config{URL: url, KeyHeader: "X Key"}},
		// Bounds.
		{name: "connections < 0", cfg: httpexec.Config{URL: url, Connections: -1}},
		{name: "connections too many", cfg: httpexec.Config{URL: url, Connections: httpexec.MaxConnections + 1}},
		{name: "timeout < 0", cfg: httpexec.Config{URL: url, Timeout: -time.Second}},
		{name: "max wait < 0", cfg: httpexec.Config{URL: url, MaxWait: -time.Second}},
		// An unknown client.
		{name: "client", cfg: httpexec.Config{URL: url, Client: "curl"}},
		// fasthttp here speaks plain http only.
		{name: "fasthttp https", cfg: httpexec.Config{URL: "https://host/", Client: httpexec.ClientFast}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := httpexec.New(tc.cfg)
			if !errors.Is(err, httpexec.ErrBadRequest) || c != nil {
				t.Errorf("%v, %v; want ErrBadRequest", c, err)
			}
		})
	}
}

// TestClientChoice: which client New picks.
func TestClientChoice(t *testing.T) {
	for _, tc := range []struct {
		url, client, want string
	}{
		{url: "http://h/", want: httpexec.ClientFast},                            // http: fasthttp
		{url: "https://h/", want: httpexec.ClientStd},                            // https: net/http
		{url: "http://h/", client: httpexec.ClientStd, want: httpexec.ClientStd}, // asked for
	} {
		c, err := httpexec.New(httpexec.Config{URL: tc.url, Client: tc.client})
		if err != nil || c.Name() != tc.want {
			t.Errorf("%s %q: %v, %v; want %s", tc.url, tc.client, c, err, tc.want)
		}
	}
}

// TestCheck: Check connects and sends nothing; a closed port is
// unreachable.
func TestCheck(t *testing.T) {
	url, reqs := recordingServer(t)
	for _, client := range clients {
		c, err := httpexec.New(httpexec.Config{URL: url, Client: client})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(context.Background()); err != nil {
			t.Errorf("%s: %v", client, err)
		}
		if c.Dials() != 0 {
			t.Errorf("%s: Check counted in Dials", client)
		}
		c, _ = httpexec.New(httpexec.Config{URL: closedPort(t), Client: client})
		if err := c.Check(context.Background()); !errors.Is(err, httpexec.ErrUnreachable) {
			t.Errorf("%s, closed port: %v, want ErrUnreachable", client, err)
		}
	}
	select {
	case g := <-reqs:
		t.Errorf("Check sent %q", g.raw)
	default:
	}
}
