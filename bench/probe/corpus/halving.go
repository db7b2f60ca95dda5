package corpus

import (
	"net/http"
	"sync"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// halving is a limiter that none of ratebench's models explains: per
// key, a fixed window on the multiples of window of the clock it is
// given, whose limit starts at limit, halves (rounding down, to no less
// than 1) at each rejection, and is limit again once a whole window has
// passed in which the key sent nothing. Its first burst looks like a
// window of limit, overload like a window of 1. It keeps every key it
// has seen. Safe for concurrent use.
type halving struct {
	limit  int64
	window time.Duration
	mu     sync.Mutex
	keys   map[string]*halvingKey
}

// halvingKey is one key's state.
type halvingKey struct {
	last  int64 // the window of its latest request: now / window
	count int64 // requests admitted in window last
	limit int64 // what window last admits
}

func newHalving(limit int64, window time.Duration) *halving {
	return &halving{limit: limit, window: window, keys: map[string]*halvingKey{}}
}

// allow decides a request of key at now, the time since the clock's zero
// (a clock that goes back is taken to stand still).
func (h *halving) allow(now time.Duration, key string) bool {
	w := int64(now / h.window)
	h.mu.Lock()
	defer h.mu.Unlock()
	k := h.keys[key]
	switch {
	case k == nil:
		k = &halvingKey{last: w, limit: h.limit}
		h.keys[key] = k
	case w > k.last+1: // a whole window without a request
		k.last, k.count, k.limit = w, 0, h.limit
	case w > k.last:
		k.last, k.count = w, 0
	}
	if k.count < k.limit {
		k.count++
		return true
	}
	k.limit = max(1, k.limit/2)
	return false
}

// startHalving serves halving at 40 per 1 s per client address, its
// windows on whole seconds of the Unix clock.
func startHalving() (*Target, error) {
	const limit, window = 40, time.Second
	h := newHalving(limit, window)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.allow(time.Duration(time.Now().UnixNano()), clientIP(r)) {
			tooMany(w)
			return
		}
		ok(w, r)
	})
	truth := Truth{Limit: limit, Window: window, Phase: ptr(time.Duration(0)), Scope: result.ScopeSource,
		RejectStatus: 429, Outside: true}
	return serveInProcess(Halving, truth, handler)
}
