// Package httplimit is net/http middleware that rate-limits requests with
// any algorithms.Limiter: it answers 429 Too Many Requests with Retry-After
// and an RFC 9457 problem body, and advertises the quota on every decided
// response with the RateLimit-Policy and RateLimit header fields of
// draft-ietf-httpapi-ratelimit-headers-09.
//
// It is one of the two places in ratebench that read the clock: a request
// is decided at now = time since the Unix epoch (so that fixed windows align
// across hosts), or at what Config.Now returns.
//
// Requests are keyed by the client's IP address: the direct peer, or, when
// the peer is a trusted proxy, the first untrusted address of its
// forwarding header read from the right (see Middleware.ClientIP). A
// client-chosen header is never trusted by default.
package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/keyed"
)

// Proxy headers that Config.ProxyHeader may name.
const (
	// HeaderXForwardedFor is the de facto list of addresses
	// "client, proxy1, proxy2", each proxy appending its peer.
	HeaderXForwardedFor = "X-Forwarded-For"
	// HeaderForwarded is RFC 7239's field; only its for= parameter is read.
	HeaderForwarded = "Forwarded"
)

// DefaultName is the policy name advertised when Config.Name is empty.
const DefaultName = "default"

// maxSFInteger is the largest Integer a structured field may carry
// (RFC 9651: at most 15 digits).
const maxSFInteger = 999_999_999_999_999

// Config configures a Middleware. Policy is required; everything else has a
// default. A Config is read once by New and not kept.
type Config struct {
	// Policy is what RateLimit-Policy advertises: q = Limit cost units per
	// w = Window, in whole seconds rounded up (the draft supports no
	// fractions: a 1.5s window is advertised as w=2). It must be valid
	// (algorithms.Policy.Validate), with Limit and Burst at most
	// 999,999,999,999,999 (the largest structured-field Integer). It should
	// be the policy Limiter was built with: headers and decisions must tell
	// the same story. Burst is not advertised, so RateLimit's r (the
	// Remaining of a decision, at most Burst) may exceed q when Burst > Limit.
	Policy algorithms.Policy
	// Limiter decides each request under its key. Nil means a per-key GCRA
	// for Policy (keyed.New with default options: at most 1<<20 keys; a new
	// key whose part of the table is full of keys still limited is refused,
	// answered 429 and counted in Stats.TableFull). An in-memory algorithm
	// used directly ignores keys: one quota for all.
	Limiter algorithms.Limiter
	// Name identifies the policy in both header fields; empty means
	// "default". It is sent as a structured-field String, so it must be
	// printable ASCII (0x20-0x7E).
	Name string

	// Key returns the key a request is limited under, given the client's
	// address resolved as Middleware.ClientIP says (the zero Addr when the
	// peer is not an IP, e.g. a Unix socket). Nil means the address itself
	// (netip.Addr.String, "unknown" for the zero Addr). An error answers 400
	// Bad Request, with the error's text as the problem detail: it must not
	// hold secrets. See KeyHeader.
	Key KeyFunc
	// TrustedProxies are the networks of reverse proxies whose forwarding
	// header is believed. Empty (the default) means none: the key is always
	// the direct peer.
	TrustedProxies []netip.Prefix
	// ProxyHeader is the one header trusted proxies write:
	// HeaderXForwardedFor (the default) or HeaderForwarded. Only that one is
	// read, because a proxy passes the other through untouched and the
	// client could then choose its value.
	ProxyHeader string

	// Cost returns the cost units of a request (>= 1); nil means 1. A cost
	// below 1 is a server bug: the request is answered 500 and the error
	// counted.
	Cost func(r *http.Request) int64
	// FailOpen: when the limiter fails (a backend error), pass the request
	// through without rate-limit headers instead of answering 503.
	FailOpen bool
	// LegacyHeaders adds X-RateLimit-Limit (q), X-RateLimit-Remaining (r)
	// and X-RateLimit-Reset (t, in seconds from now, not an epoch) to every
	// decided response.
	LegacyHeaders bool
	// Routes gives some requests their own policy: the key is a net/http
	// ServeMux pattern ("GET /api/", "/login", "example.com/"), matched by an
	// internal ServeMux with its usual precedence, after its usual path
	// cleaning (a request for "/a/../login" counts against "/login").
	// Unmatched requests use Policy and Limiter. Each route has its own
	// limiter, so its quota is separate from the default one.
	Routes map[string]Route
	// OnError, if set, is called with every error the middleware meets:
	// limiter errors (whether failed open or closed), key errors and cost
	// errors. It may be called concurrently.
	OnError func(r *http.Request, err error)

	// Now returns the current instant as a duration since the limiter's
	// zero; nil means the time since the Unix epoch. Tests pass a fake.
	Now func() time.Duration
	// Sleep waits d for a shaper's Decision.Delay, returning early with
	// ctx.Err() when ctx (the request's context) is done; nil means a timer.
	// Tests pass a fake that records d.
	Sleep func(ctx context.Context, d time.Duration) error

	// WriteTimeout, when > 0, bounds the writing of each response from the
	// moment the middleware answers (0 or less: no bound, as in
	// http.Server). Just before it writes a response of its own (400, 429,
	// 500, 503), and just before it calls the next handler, after any
	// shaper delay, it sets the connection's write deadline
	// (http.ResponseController; real time, whatever Now says) to
	// WriteTimeout from then. http.Server.WriteTimeout cannot do this
	// alone: it runs from the end of the request's headers, so a request a
	// shaper queued for longer would find its deadline past before writing
	// a byte. Set both to the same value: the server's also covers what
	// the middleware does not answer, and replaces at every request a
	// deadline the middleware left on a kept-alive connection. A
	// ResponseWriter without deadlines (httptest.ResponseRecorder) is left
	// as it is. Read deadlines are not touched: net/http clears its own
	// while a handler runs once the body is read, and a handler that reads
	// a body after a long delay must allow for the server's ReadTimeout.
	WriteTimeout time.Duration
}

// Route is the policy of one Config.Routes pattern: the same fields as
// Config's, with the same defaults, except that an empty Name means the
// pattern itself.
type Route struct {
	Policy  algorithms.Policy
	Limiter algorithms.Limiter
	Name    string
}

// Stats counts the requests a Middleware has seen since New.
type Stats struct {
	Admitted int64 // admitted by the limiter (and then served, or cancelled while a shaper delayed them)
	Rejected int64 // answered 429, TableFull included
	Errors   int64 // limiter errors (failed open, or closed: 503) and costs below 1 (500)
	BadKeys  int64 // answered 400 because Key returned an error
	// TableFull counts the part of Rejected that the limiter refused
	// because its key table was full (Decision.TableFull), not for the
	// key's own quota: a sign that the table is too small for the keys
	// in use, or that a client is making keys up.
	TableFull int64
}

// Middleware rate-limits the requests of the handlers it wraps. Build it
// with New. It is safe for concurrent use: its configuration is fixed at
// New, and its counters are atomic.
type Middleware struct {
	def      *policy
	routes   map[string]*policy // by ServeMux pattern
	mux      *http.ServeMux     // nil without routes
	key      KeyFunc
	trusted  []netip.Prefix
	header   string
	fwd      bool // header is Forwarded
	cost     func(*http.Request) int64
	failOpen bool
	legacy   bool
	onError  func(*http.Request, error)
	now      func() time.Duration
	sleep    func(context.Context, time.Duration) error
	writeTO  time.Duration // Config.WriteTimeout

	admitted, rejected, errs, badKeys, tableFull atomic.Int64
}

// policy is one advertised policy and the limiter that enforces it, with
// its header values prepared once.
type policy struct {
	name     string
	limiter  algorithms.Limiter
	item     string // `"name"`, the structured-field String
	policyHV string // RateLimit-Policy value
	limitHV  string // X-RateLimit-Limit value
	detail   string // problem detail: `quota of policy "name" (L per W)`
}

// New returns a Middleware for cfg, or an error prefixed "httplimit:" for
// an invalid policy, name, proxy header or route pattern (wrapping
// algorithms.ErrInvalidPolicy for a bad policy).
func New(cfg Config) (*Middleware, error) {
	m := &Middleware{
		key:      cfg.Key,
		header:   cfg.ProxyHeader,
		cost:     cfg.Cost,
		failOpen: cfg.FailOpen,
		legacy:   cfg.LegacyHeaders,
		onError:  cfg.OnError,
		now:      cfg.Now,
		sleep:    cfg.Sleep,
		writeTO:  cfg.WriteTimeout,
	}
	switch http.CanonicalHeaderKey(m.header) {
	case "", HeaderXForwardedFor:
		m.header = HeaderXForwardedFor
	case HeaderForwarded:
		m.header, m.fwd = HeaderForwarded, true
	default:
		return nil, fmt.Errorf("httplimit: ProxyHeader %q is neither %s nor %s", cfg.ProxyHeader, HeaderXForwardedFor, HeaderForwarded)
	}
	for _, p := range cfg.TrustedProxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("httplimit: invalid trusted proxy prefix %v", p)
		}
		m.trusted = append(m.trusted, normPrefix(p))
	}
	if m.key == nil {
		m.key = keyByIP
	}
	if m.now == nil {
		m.now = sinceEpoch
	}
	if m.sleep == nil {
		m.sleep = sleepCtx
	}
	name := cfg.Name
	if name == "" {
		name = DefaultName
	}
	var err error
	if m.def, err = newPolicy(name, cfg.Policy, cfg.Limiter); err != nil {
		return nil, fmt.Errorf("httplimit: %w", err)
	}
	if err := m.addRoutes(cfg.Routes); err != nil {
		return nil, err
	}
	return m, nil
}

// addRoutes registers routes, in sorted order so that errors are stable.
func (m *Middleware) addRoutes(routes map[string]Route) error {
	if len(routes) == 0 {
		return nil
	}
	m.mux = http.NewServeMux()
	m.routes = make(map[string]*policy, len(routes))
	patterns := make([]string, 0, len(routes))
	for p := range routes {
		patterns = append(patterns, p)
	}
	slices.Sort(patterns)
	for _, pat := range patterns {
		rt := routes[pat]
		name := rt.Name
		if name == "" {
			name = pat
		}
		pol, err := newPolicy(name, rt.Policy, rt.Limiter)
		if err != nil {
			return fmt.Errorf("httplimit: route %q: %w", pat, err)
		}
		if err := register(m.mux, pat); err != nil {
			return err
		}
		m.routes[pat] = pol
	}
	return nil
}

// register adds pat to mux, turning ServeMux's panic on a bad or
// conflicting pattern into an error.
func register(mux *http.ServeMux, pat string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("httplimit: route %q: %v", pat, v)
		}
	}()
	mux.Handle(pat, http.NotFoundHandler()) // never served: only matched
	return nil
}

// newPolicy validates one policy and prepares its header values. Errors
// are not prefixed: the caller says which policy.
func newPolicy(name string, p algorithms.Policy, l algorithms.Limiter) (*policy, error) {
	p, err := p.Validate()
	if err != nil {
		return nil, err
	}
	if p.Limit > maxSFInteger || p.Burst > maxSFInteger {
		return nil, fmt.Errorf("%w: limit %d or burst %d does not fit a header Integer (at most 15 digits)",
			algorithms.ErrInvalidPolicy, p.Limit, p.Burst)
	}
	item, err := sfString(name)
	if err != nil {
		return nil, err
	}
	if l == nil {
		if l, err = keyed.New(p, newGCRA, keyed.Options{}); err != nil {
			return nil, err
		}
	}
	w := ceilSeconds(p.Window)
	return &policy{
		name:     name,
		limiter:  l,
		item:     item,
		policyHV: item + ";q=" + strconv.FormatInt(p.Limit, 10) + ";w=" + strconv.FormatInt(w, 10),
		limitHV:  strconv.FormatInt(p.Limit, 10),
		detail:   fmt.Sprintf("quota of policy %q (%d per %v)", name, p.Limit, p.Window),
	}, nil
}

func newGCRA(p algorithms.Policy) (algorithms.Limiter, error) { return algorithms.NewGCRA(p) }

// sfString serializes s as a structured-field String (RFC 9651 section
// 4.1.6): quoted, with '"' and '\' escaped; other bytes must be printable
// ASCII.
func sfString(s string) (string, error) {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return "", fmt.Errorf("policy name %q: byte %#x is not printable ASCII", s, c)
		}
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(append(b, '"')), nil
}

// Stats returns the counts since New. Safe for concurrent use; the counts
// are read one after another, not as one snapshot, but TableFull is never
// seen above Rejected (it is counted after Rejected and read before it).
func (m *Middleware) Stats() Stats {
	tableFull := m.tableFull.Load()
	return Stats{
		Admitted:  m.admitted.Load(),
		Rejected:  m.rejected.Load(),
		Errors:    m.errs.Load(),
		BadKeys:   m.badKeys.Load(),
		TableFull: tableFull,
	}
}

// Wrap returns next behind the rate limiter; it is the
// func(http.Handler) http.Handler middleware. For each request it resolves
// the key and cost, decides at now, and then:
//
//   - admitted: sets the rate-limit headers, waits Decision.Delay for a
//     shaper (a request whose context ends first is answered 503 and not
//     served), and calls next;
//   - rejected: answers 429 with the rate-limit headers, Retry-After and a
//     problem body (see Problem);
//   - refused because the limiter's key table is full (Decision.TableFull):
//     answers 429 with Retry-After (until a slot frees) and a problem body
//     saying so, counted in Rejected and TableFull; a decision, not an
//     error, so FailOpen does not admit it;
//   - limiter error: with FailOpen calls next without rate-limit headers,
//     otherwise answers 503 with a problem body; counted either way.
//
// With WriteTimeout, the write deadline is set before each of these
// answers (after the delay for an admitted request).
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serve(w, r, next)
	})
}

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	pol := m.policyFor(r)
	key, err := m.key(r, m.ClientIP(r))
	if err != nil {
		m.badKeys.Add(1)
		m.report(r, err)
		m.armWrite(w)
		writeProblem(w, Problem{Type: "about:blank", Title: http.StatusText(http.StatusBadRequest),
			Status: http.StatusBadRequest, Detail: err.Error()})
		return
	}
	cost := int64(1)
	if m.cost != nil {
		cost = m.cost(r)
	}
	if cost < 1 {
		m.errs.Add(1)
		m.report(r, fmt.Errorf("httplimit: %w: Cost returned %d", algorithms.ErrInvalidCost, cost))
		m.armWrite(w)
		writeProblem(w, Problem{Type: "about:blank", Title: http.StatusText(http.StatusInternalServerError),
			Status: http.StatusInternalServerError, Detail: "the server could not price this request"})
		return
	}
	d, err := pol.limiter.Allow(m.now(), key, cost)
	if err != nil {
		m.errs.Add(1)
		m.report(r, fmt.Errorf("httplimit: policy %q: %w", pol.name, err))
		m.armWrite(w)
		if m.failOpen {
			next.ServeHTTP(w, r)
			return
		}
		writeProblem(w, Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable),
			Status: http.StatusServiceUnavailable, Detail: "the rate limiter is unavailable; try again later"})
		return
	}
	if !d.Allowed {
		m.rejected.Add(1)
		if d.TableFull {
			m.tableFull.Add(1) // after Rejected: see Stats
		}
		m.armWrite(w)
		m.reject(w, pol, d, cost)
		return
	}
	m.admitted.Add(1)
	m.setHeaders(w.Header(), pol, d.Remaining, ceilSeconds(d.ResetAfter))
	if d.Delay > 0 {
		// The deadline is set after the wait: queueing is the limiter's
		// doing, not the client's, and must not eat its time to read.
		err := m.sleep(r.Context(), d.Delay)
		m.armWrite(w)
		if err != nil {
			writeProblem(w, Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable),
				Status: http.StatusServiceUnavailable, Detail: "the request was cancelled while queued"})
			return
		}
	} else {
		m.armWrite(w)
	}
	next.ServeHTTP(w, r)
}

// armWrite sets w's write deadline to WriteTimeout from now, when there is
// one. A ResponseWriter that has no deadlines is left alone: there is
// nothing to bound.
func (m *Middleware) armWrite(w http.ResponseWriter) {
	if m.writeTO > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(m.writeTO))
	}
}

// policyFor returns the policy of the route r matches, or the default one.
func (m *Middleware) policyFor(r *http.Request) *policy {
	if m.mux == nil {
		return m.def
	}
	// The pattern comes back also for the redirects ServeMux would answer
	// (trailing slash, unclean path), so that they count on their route.
	if _, pat := m.mux.Handler(r); pat != "" {
		if p, ok := m.routes[pat]; ok {
			return p
		}
	}
	return m.def
}

func (m *Middleware) report(r *http.Request, err error) {
	if m.onError != nil {
		m.onError(r, err)
	}
}

// reject answers 429. Retry-After is RetryAfter in whole seconds rounded up
// (at least 1: a rejected request is never told to retry now), and the
// RateLimit t parameter names the same instant, as the draft asks. A
// request that can never pass (RetryAfter == algorithms.Never: its cost is
// above what the policy admits at once) gets no Retry-After, t from
// ResetAfter, and a detail saying so. A key refused by a full key table
// (TableFull) gets the same Retry-After, RateLimit r=0, and an
// "about:blank" problem naming the table, not the policy: the key's own
// quota was never looked at.
func (m *Middleware) reject(w http.ResponseWriter, pol *policy, d algorithms.Decision, cost int64) {
	h := w.Header()
	p := Problem{
		Type:             ProblemQuotaExceeded,
		Title:            "Request quota exceeded",
		Status:           http.StatusTooManyRequests,
		ViolatedPolicies: []string{pol.name},
	}
	remaining, what := d.Remaining, pol.detail+" exceeded"
	if d.TableFull {
		p = Problem{Type: "about:blank", Title: http.StatusText(http.StatusTooManyRequests), Status: http.StatusTooManyRequests}
		remaining, what = 0, tableFullDetail
	}
	if d.RetryAfter == algorithms.Never {
		m.setHeaders(h, pol, remaining, ceilSeconds(d.ResetAfter))
		p.Detail = what
		if !d.TableFull {
			p.Detail = fmt.Sprintf("request cost %d is more than the %s admits at once: it can never be admitted, do not retry", cost, pol.detail)
		}
		writeProblem(w, p)
		return
	}
	secs := max(ceilSeconds(d.RetryAfter), 1)
	m.setHeaders(h, pol, remaining, secs)
	h["Retry-After"] = []string{strconv.FormatInt(secs, 10)}
	p.RetryAfter = secs
	p.Detail = fmt.Sprintf("%s; retry after %d s", what, secs)
	writeProblem(w, p)
}

// tableFullDetail is the problem detail of a key refused by a full key
// table, before its "; retry after N s".
const tableFullDetail = "the server's rate-limit key table is full: no new key is taken in until a slot frees"

// setHeaders sets RateLimit-Policy and RateLimit (and the legacy fields).
// Keys are set in canonical form without Header.Set's canonicalization.
func (m *Middleware) setHeaders(h http.Header, pol *policy, remaining, reset int64) {
	remaining = min(max(remaining, 0), maxSFInteger)
	reset = min(reset, maxSFInteger)
	r := strconv.FormatInt(remaining, 10)
	t := strconv.FormatInt(reset, 10)
	h["Ratelimit-Policy"] = []string{pol.policyHV}
	h["Ratelimit"] = []string{pol.item + ";r=" + r + ";t=" + t}
	if m.legacy {
		h["X-Ratelimit-Limit"] = []string{pol.limitHV}
		h["X-Ratelimit-Remaining"] = []string{r}
		h["X-Ratelimit-Reset"] = []string{t}
	}
}

// ceilSeconds is d in whole seconds, rounded up; 0 for d <= 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// sinceEpoch is the default clock: the time since the Unix epoch, so that
// fixed windows start at the same instants on every host.
func sinceEpoch() time.Duration { return time.Duration(time.Now().UnixNano()) }

// sleepCtx waits d or until ctx is done, whichever comes first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrNoKey is wrapped by the errors of KeyHeader's key functions.
var ErrNoKey = errors.New("httplimit: no rate-limit key")

// MaxKeyLen bounds the length in bytes of a key taken from a header by
// KeyHeader, so that a client cannot make the limiter hold huge keys.
const MaxKeyLen = 256

// KeyFunc returns the key a request is limited under; client is the
// address Middleware.ClientIP resolved. An error answers 400.
type KeyFunc func(r *http.Request, client netip.Addr) (string, error)

// KeyHeader returns a KeyFunc that keys requests by the value of header
// name (e.g. "X-API-Key"). A request without it, with an empty value or
// with one longer than MaxKeyLen bytes is answered 400 Bad Request rather
// than keyed by IP: falling back would give a client two quotas (with and
// without the header) and would let a header value such as "192.0.2.1"
// land in that address's bucket. So is a request whose identity is
// ambiguous: the header sent on more than one field line, or a value
// holding a comma-separated list (which HTTP makes equivalent to repeated
// lines). Which element names the client would depend on who reads it: a
// proxy or the server's authentication reading another one than the
// limiter would let a client be charged under someone else's key. The
// value is used as sent, so the header must identify a client (an API key
// the server checks), not be a free choice of the client. Every error
// wraps ErrNoKey; none quotes the value. The KeyFunc is safe for
// concurrent use.
func KeyHeader(name string) KeyFunc {
	canonical := http.CanonicalHeaderKey(name)
	return func(r *http.Request, _ netip.Addr) (string, error) {
		vs := r.Header[canonical]
		if len(vs) > 1 || len(vs) == 1 && strings.IndexByte(vs[0], ',') >= 0 {
			return "", fmt.Errorf("%w: header %s must be sent once, with one value (not a list)", ErrNoKey, name)
		}
		var v string
		if len(vs) == 1 {
			v = vs[0]
		}
		if v == "" || len(v) > MaxKeyLen {
			return "", fmt.Errorf("%w: header %s must be present, non-empty and at most %d bytes", ErrNoKey, name, MaxKeyLen)
		}
		return v, nil
	}
}

// keyByIP is the default KeyFunc: the client address, "unknown" when the
// peer is not an IP address.
func keyByIP(_ *http.Request, client netip.Addr) (string, error) {
	if !client.IsValid() {
		return "unknown", nil
	}
	return client.String(), nil
}
