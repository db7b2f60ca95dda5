package corpus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	"github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"
)

// serveInProcess serves h on a free port of 127.0.0.1 from this process
// until the target's Stop, which waits at most 10 s for the requests in
// hand.
func serveInProcess(name string, truth Truth, h http.Handler) (*Target, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	stop := sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			return fmt.Errorf("%s: %w", name, serr)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	return &Target{Name: name, URL: "http://" + l.Addr().String() + "/", Truth: truth, Stop: stop}, nil
}

// ok answers 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
})

// tooMany answers 429.
func tooMany(w http.ResponseWriter) {
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
}

// clientIP is the address a request came from, without its port.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// startHttprate serves go-chi/httprate's LimitByIP(50, time.Second).
//
// What it does (v0.16.1): per client address, a count of the admitted
// requests of the current window and of the one before; a request is
// admitted iff round(prev x (W - elapsed)/W + curr) + 1 <= 50, rounding
// half away from zero, and only an admitted one is counted. Its windows
// are multiples of W shifted by the instant the limiter was made (its
// "windowOffset", that instant's distance from the last multiple of W
// since the zero time.Time; for W = 1s, from the last whole Unix second).
func startHttprate() (*Target, error) {
	const limit, window = 50, time.Second
	before := time.Now()
	//lint:ignore SA1019 the corpus runs the middleware deployments run; LimitBy with the same key is the same limiter
	mw := httprate.LimitByIP(limit, window)
	made := before.Add(time.Since(before) / 2)
	phase := time.Duration(made.UnixNano() % int64(window))
	truth := Truth{Algorithms: []string{"httprate"}, Limit: limit, Window: window, Phase: &phase,
		Scope: result.ScopeSource, CountsDenied: ptr(false), RejectStatus: 429}
	return serveInProcess(Httprate, truth, mw(ok))
}

// startUlule serves ulule/limiter's stdlib middleware over its memory
// store at rate "10-S", keyed by the client address (its default key,
// no forwarding header trusted).
//
// What it does (v3.11.2): per key, a counter whose window opens at the
// first request after the last one expired and ends a period (1 s)
// later (expired strictly after, in nanoseconds); every request is
// counted, denied too, and one is denied when the count, itself
// included, is above 10. Counting denied requests changes nothing: the
// window ends at its time whatever the count.
func startUlule() (*Target, error) {
	r, err := limiter.NewRateFromFormatted("10-S")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Ulule, err)
	}
	mw := stdlib.NewMiddleware(limiter.New(memory.NewStore(), r))
	truth := Truth{Algorithms: []string{"fixed-window-first"}, Limit: 10, Window: time.Second,
		Scope: result.ScopeSource, RejectStatus: 429}
	return serveInProcess(Ulule, truth, mw.Handler(ok))
}

// startXTimeRate serves a map of client address to
// rate.NewLimiter(20, 7), each asked Allow(): a token bucket of 20 per
// second holding 7, that takes nothing from a denied request.
func startXTimeRate() (*Target, error) {
	var (
		mu   sync.Mutex
		lims = map[string]*rate.Limiter{}
	)
	limiterOf := func(ip string) *rate.Limiter {
		mu.Lock()
		defer mu.Unlock()
		l := lims[ip]
		if l == nil {
			l = rate.NewLimiter(20, 7)
			lims[ip] = l
		}
		return l
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !limiterOf(clientIP(r)).Allow() {
			tooMany(w)
			return
		}
		ok(w, r)
	})
	truth := Truth{Algorithms: Buckets(), Limit: 20, Window: time.Second, Burst: 7,
		Scope: result.ScopeSource, CountsDenied: ptr(false), RejectStatus: 429, RateOnly: true}
	return serveInProcess(XTimeRate, truth, h)
}
