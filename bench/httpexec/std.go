package httpexec

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// stdClient sends through net/http Transports, one per source address:
// https (TLS, HTTP/2 when the server offers it), or http when
// Config.Client asks. Each Transport dials from its source only and keeps
// its own connections, so that a kept connection never carries another
// source's request. Safe for concurrent use.
type stdClient struct {
	t       *target
	d       *dialer
	trs     []*http.Transport // by source, as Client.srcs
	tmpl    *http.Request     // every request but its context and key
	timeout time.Duration
	maxWait time.Duration // < timeout, or 0: the wait is bounded by timeout alone
	hasBody bool
}

// newStdClient builds the Transports of srcs, each with its share of
// cfg.Connections.
func newStdClient(t *target, d *dialer, cfg *Config, srcs []source) *stdClient {
	s := &stdClient{t: t, d: d, timeout: cfg.Timeout, trs: make([]*http.Transport, len(srcs))}
	if cfg.MaxWait < cfg.Timeout {
		s.maxWait = cfg.MaxWait
	}
	for i, src := range srcs {
		conns := connsOf(cfg.Connections, len(srcs), i)
		s.trs[i] = &http.Transport{
			Proxy: nil, // a load generator talks to the URL it is given
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return d.dial(ctx, src.local, addr, 0)
			},
			MaxIdleConns:          conns,
			MaxIdleConnsPerHost:   conns, // keep every connection a burst opened
			MaxConnsPerHost:       conns,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   cfg.Timeout,
			ExpectContinueTimeout: time.Second,
			DisableCompression:    true,                                          // measure the server, not gzip
			ForceAttemptHTTP2:     true,                                          // a custom DialContext turns HTTP/2 off otherwise
			TLSClientConfig:       &tls.Config{InsecureSkipVerify: cfg.Insecure}, //nolint:gosec // asked for with Insecure
		}
	}
	h := make(http.Header, len(t.fields))
	for _, f := range t.fields {
		name := f.name
		if http.CanonicalHeaderKey(name) == "User-Agent" {
			name = "User-Agent" // net/http adds its own unless it finds this key
		}
		h[name] = append(h[name], f.value)
	}
	s.tmpl = &http.Request{
		Method:     t.method,
		URL:        t.url,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       t.host,
	}
	s.hasBody = len(t.body) > 0
	return s
}

// stdCall is what the trace of one request tells Do. Its hooks run on
// net/http's goroutines, even after RoundTrip returned.
type stdCall struct {
	wrote   atomic.Int32 // whole writes of the request
	gotConn atomic.Bool
	expired atomic.Bool // no connection within maxWait
}

// do sends one request from source src with key in the key header and
// reads its response.
func (s *stdClient) do(src int, key string, wantPolicy bool) Response {
	call := &stdCall{}
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { call.gotConn.Store(true) },
		// net/http writes a request again on a new connection when its
		// kept connection turns out closed and the request may be
		// replayed (GET, HEAD, ...): each write counts as one sent.
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				call.wrote.Add(1)
			}
		},
	}
	ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(s.d.ctx, trace), s.timeout)
	defer cancel()
	if s.maxWait > 0 {
		t := time.AfterFunc(s.maxWait, func() {
			if !call.gotConn.Load() {
				call.expired.Store(true)
				cancel()
			}
		})
		defer t.Stop()
	}
	req := s.tmpl.WithContext(ctx)
	if s.t.keyHeader != "" {
		req.Header = s.tmpl.Header.Clone()
		req.Header[s.t.keyHeader] = []string{key}
	}
	if s.hasBody {
		req.ContentLength = int64(len(s.t.body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(s.t.body)), nil }
		req.Body, _ = req.GetBody()
	}
	resp, err := s.trs[src].RoundTrip(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	r := Response{RetryAfter: NoRetryAfter, Quota: NoQuota, Attempts: int(call.wrote.Load())}
	if resp != nil && r.Attempts == 0 {
		r.Attempts = 1 // answered before its write ended: the hook may not have run yet
	}
	if err != nil {
		switch {
		case s.d.aborted.Load():
			err = fmt.Errorf("%w: %w", ErrAborted, err)
		case call.expired.Load() && !call.gotConn.Load():
			err = fmt.Errorf("%w: %w", ErrNoFreeConnection, err)
		}
		r.Err, r.Kind = err, Classify(err)
		return r
	}
	r.Status = resp.StatusCode
	now := time.Now()
	if v, ok := resp.Header["Retry-After"]; ok && len(v) > 0 {
		r.RetryAfter = parseRetryAfter([]byte(v[0]), now)
	}
	get := func(name string) []byte {
		if v := resp.Header.Values(name); len(v) > 0 {
			return []byte(v[0])
		}
		return nil
	}
	r.Quota = readQuota(get, now)
	if wantPolicy {
		r.Policy = resp.Header.Get("RateLimit-Policy")
		r.Advertised = readPolicy(get)
	}
	return r
}
