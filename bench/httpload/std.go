package httpload

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// stdClient sends through one net/http Client, for https (TLS, HTTP/2) or
// when Config.Client asks for it. Safe for concurrent use.
type stdClient struct {
	t      *target
	client *http.Client
	ctx    context.Context // cancelled when the attack is interrupted
	dials  atomic.Int64
}

func newStdClient(ctx context.Context, t *target, cfg *Config) *stdClient {
	s := &stdClient{t: t, ctx: ctx}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: nil, // a load generator talks to the URL it is given
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				s.dials.Add(1)
			}
			return c, err
		},
		MaxIdleConns:          cfg.Connections,
		MaxIdleConnsPerHost:   cfg.Connections, // keep every connection a burst opened
		MaxConnsPerHost:       cfg.Connections,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // measure the server, not gzip
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: cfg.Insecure}, //nolint:gosec // asked for with -insecure
	}
	s.client = &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// A redirect is a response to measure, not to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s
}

// roundTrip sends one request and reads the whole response.
func (s *stdClient) roundTrip(key string, wantPolicy bool) (response, error) {
	var body io.Reader
	if len(s.t.body) > 0 {
		body = bytes.NewReader(s.t.body)
	}
	req, err := http.NewRequestWithContext(s.ctx, s.t.method, s.t.url.String(), body)
	if err != nil {
		return response{}, err
	}
	req.Header = s.t.header.Clone()
	if s.t.keyHeader != "" {
		req.Header[s.t.keyHeader] = []string{key}
	}
	req.Host = s.t.host
	resp, err := s.client.Do(req)
	if err != nil {
		return response{}, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return response{}, err
	}
	r := response{status: resp.StatusCode, retryAfter: noRetryAfter}
	if v, ok := resp.Header["Retry-After"]; ok && len(v) > 0 {
		r.retryAfter = parseRetryAfter([]byte(v[0]), time.Now())
	}
	if wantPolicy {
		r.policy = resp.Header.Get("RateLimit-Policy")
	}
	return r, nil
}
