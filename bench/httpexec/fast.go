package httpexec

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// readBufferSize is the size of the buffer a response is read through,
// which bounds its whole header block: a few kilobytes of
// Content-Security-Policy and several Set-Cookie fields of up to 4 KB each
// fit, as does anything nginx (8 KB per line by default) or most proxies
// pass. A larger block fails the request (Kind Other). Buffers are pooled
// across requests, so this costs about 64 KB per request in flight.
const readBufferSize = 64 << 10

// fastClient sends over plain http with fasthttp: one HostClient for the
// target per source address, whose RoundTripper is fastTransport. Each
// HostClient dials from its source only and keeps its own connections,
// so that a kept connection never carries another source's request.
// Safe for concurrent use.
type fastClient struct {
	hcs     []*fasthttp.HostClient // by source, as Client.srcs
	d       *dialer
	t       *target
	timeout time.Duration
	calls   sync.Pool // *fastCall
}

// fastCall is what one Do needs: the request, built once per fastCall and
// given its key per Do, the response, and what the transport tells Do.
// One goroutine owns it from Get to Put.
type fastCall struct {
	req      fasthttp.Request
	resp     fasthttp.Response
	start    time.Time // when Do began
	deadline time.Time // start + Timeout
	attempts int       // times the whole request was written
}

// callKey is the user value of a fastCall's request that leads the
// transport to the fastCall.
type callKey struct{}

// newFastClient builds the HostClients of srcs, each with its share of
// cfg.Connections.
func newFastClient(t *target, d *dialer, cfg *Config, srcs []source) *fastClient {
	f := &fastClient{d: d, t: t, timeout: cfg.Timeout, hcs: make([]*fasthttp.HostClient, len(srcs))}
	for i, src := range srcs {
		conns := connsOf(cfg.Connections, len(srcs), i)
		f.hcs[i] = &fasthttp.HostClient{
			Addr: t.addr,
			DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
				return d.dial(d.ctx, src.local, addr, timeout) // 0 from a waiter's dial: d.timeout
			},
			// Every request carries its User-Agent (see newTarget), or an
			// empty one that asks for none.
			NoDefaultUserAgentHeader: true,
			MaxConns:                 conns,
			MaxConnWaitTimeout:       cfg.MaxWait,
			// The transport asks for a retry only after failing a request
			// on a stale connection, before writing anything: RetryIfErr
			// lets that through and nothing else. Enough attempts to go
			// through every kept connection a server dropped at once and
			// dial one.
			MaxIdemponentCallAttempts: conns + 1,
			RetryIfErr: func(_ *fasthttp.Request, _ int, err error) (resetTimeout, retry bool) {
				return false, errors.Is(err, errStale)
			},
			ReadBufferSize:         readBufferSize,
			ConnPoolStrategy:       fasthttp.LIFO, // the connection idle last: few stay busy and warm
			DisablePathNormalizing: true,          // the path and query as the URL has them
			Transport:              fastTransport{},
		}
	}
	f.calls.New = f.newCall
	return f
}

// newCall builds a fastCall's request: everything but the key.
func (f *fastClient) newCall() any {
	c := &fastCall{}
	req := &c.req
	// Header names as Config.Header spells them. This request's only:
	// HostClient.DisableHeaderNamesNormalizing would also keep response
	// names as sent, and Peek("Retry-After") then misses "retry-after".
	req.Header.DisableNormalizing()
	req.Header.SetNoDefaultContentType(true)
	req.Header.SetMethod(f.t.method)
	req.SetRequestURI(f.t.url.RequestURI())
	req.Header.SetHost(f.t.host)
	req.UseHostHeader = true // the Host header, not the URL's host
	for _, fl := range f.t.fields {
		req.Header.Add(fl.name, fl.value)
	}
	if len(f.t.body) > 0 {
		req.SetBody(f.t.body)
	}
	req.SetUserValue(callKey{}, c)
	return c
}

// do sends one request from source src with key in the key header and
// reads its response.
func (f *fastClient) do(src int, key string, wantPolicy bool) Response {
	c := f.calls.Get().(*fastCall)
	defer func() {
		c.resp.ResetBody() // a large body goes back to fasthttp's pool now, not at the next use of c
		f.calls.Put(c)
	}()
	if f.t.keyHeader != "" {
		c.req.Header.Set(f.t.keyHeader, key)
	}
	c.start = time.Now()
	c.deadline = c.start.Add(f.timeout)
	c.attempts = 0
	err := f.hcs[src].DoTimeout(&c.req, &c.resp, f.timeout)
	r := Response{RetryAfter: NoRetryAfter, Quota: NoQuota, Attempts: c.attempts}
	if err != nil {
		r.Err = err
		if f.d.aborted.Load() {
			r.Err = fmt.Errorf("%w: %w", ErrAborted, err)
		}
		r.Kind = Classify(r.Err)
		return r
	}
	r.Status = c.resp.StatusCode()
	now := time.Now()
	if v := c.resp.Header.Peek("Retry-After"); v != nil {
		r.RetryAfter = parseRetryAfter(v, now)
	}
	r.Quota = readQuota(c.resp.Header.Peek, now)
	if wantPolicy {
		r.Policy = string(c.resp.Header.Peek("RateLimit-Policy"))
		r.Advertised = readPolicy(c.resp.Header.Peek)
	}
	return r
}

// fastTransport is the HostClient's RoundTripper: fasthttp's own
// transport (HTTP/1.1, no streaming) with three changes. A kept connection
// is checked before a request goes on it (conn.stale), and one the server
// closed or wrote to is dropped and the request retried on another:
// nothing was written, so nothing is sent twice; a connection with bytes
// left after a response is not kept. Any other failure is not
// retried: a request that fails after it was written counts as sent once.
// And each whole write of the request is counted in its fastCall's
// attempts. Writing the request and reading the response are fasthttp's
// (Request.Write, Response.ReadLimitBody).
type fastTransport struct{}

func (fastTransport) RoundTrip(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response) (retry bool, err error) {
	call, _ := req.UserValue(callKey{}).(*fastCall)
	if call == nil {
		return false, errors.New("httpexec: a request without its call")
	}
	cc, err := hc.AcquireConn(time.Until(call.deadline), false)
	if err != nil {
		if errors.Is(err, fasthttp.ErrNoFreeConns) {
			err = fmt.Errorf("%w: %w", ErrNoFreeConnection, err)
		}
		return false, err
	}
	c, ok := cc.Conn().(*conn)
	if !ok { // every connection comes from the dialer
		hc.CloseConn(cc)
		return false, errors.New("httpexec: a connection not from the dialer")
	}
	if err := c.SetDeadline(call.deadline); err != nil { // before stale: a past deadline fails its peek
		hc.CloseConn(cc)
		return false, err
	}
	// A connection dialed for this call has nothing to check; one that
	// carried requests, or waited in the pool, may have been closed.
	if staleCheck && (c.exchanges > 0 || c.dialed.Before(call.start)) {
		if err := c.stale(); err != nil {
			hc.CloseConn(cc)
			return errors.Is(err, errStale), err
		}
	}
	bw := hc.AcquireWriter(c)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	hc.ReleaseWriter(bw)
	if err != nil {
		hc.CloseConn(cc)
		return false, err
	}
	call.attempts++
	resp.SkipBody = req.Header.IsHead() // a HEAD response announces a body it does not send
	c.readErr = nil
	br := hc.AcquireReader(c)
	err = resp.ReadLimitBody(br, 0) // bodies read whole: the next response starts after them
	// Bytes past the response are not an answer to anything: an
	// unsolicited response that came with this one, which the pooled
	// reader would drop unseen. The connection is not reused.
	extra := br.Buffered() > 0
	hc.ReleaseReader(br)
	if err != nil {
		if errors.Is(err, io.EOF) && c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
			err = c.readErr // fasthttp says io.EOF for any error before the first byte: a reset, say
		}
		hc.CloseConn(cc)
		return false, err
	}
	c.exchanges++
	if extra || resp.ConnectionClose() || req.ConnectionClose() {
		hc.CloseConn(cc)
	} else {
		hc.ReleaseConn(cc)
	}
	return false, nil
}
