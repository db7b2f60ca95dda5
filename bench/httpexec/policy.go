package httpexec

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench"
)

// ParsePolicy reads the first policy of a RateLimit-Policy field value
// (draft-ietf-httpapi-ratelimit-headers-09: a structured-field list such
// as `"default";q=100;w=60`): its quota q per window w seconds, with a
// burst of q. ok is false when the value is malformed or lacks q or w
// (both positive integers). Safe for concurrent use.
func ParsePolicy(v string) (p algorithms.Policy, ok bool) {
	s := strings.TrimLeft(v, " \t")
	// The item: a String or a Token, skipped.
	if strings.HasPrefix(s, `"`) {
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		if i >= len(s) {
			return p, false
		}
		s = s[i+1:]
	} else {
		i := strings.IndexAny(s, ";,")
		if i < 0 {
			return p, false
		}
		s = s[i:]
	}
	var q, w int64
	for strings.HasPrefix(s, ";") {
		s = strings.TrimLeft(s[1:], " ")
		end := strings.IndexAny(s, ";,")
		if end < 0 {
			end = len(s)
		}
		name, val, _ := strings.Cut(s[:end], "=")
		s = s[end:]
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		switch strings.TrimSpace(name) {
		case "q":
			if err != nil || n < 1 {
				return p, false
			}
			q = n
		case "w":
			if err != nil || n < 1 || n > int64(time.Duration(1<<62)/time.Second) {
				return p, false
			}
			w = n
		}
	}
	if q == 0 || w == 0 {
		return p, false
	}
	return algorithms.Policy{Limit: q, Window: time.Duration(w) * time.Second, Burst: q}, true
}

// Values of Response.RetryAfter besides whole seconds >= 0.
// They are the engine's (bench.Outcome.RetryAfter), so an outcome takes
// a response's value as it is.
const (
	NoRetryAfter  = bench.NoRetryAfter  // the response has no Retry-After field
	BadRetryAfter = bench.BadRetryAfter // a value that is neither delay-seconds nor an HTTP-date
)

// maxRetryAfter caps Response.RetryAfter: a day, in seconds.
const maxRetryAfter = 86400

// parseRetryAfter reads a Retry-After value: delay-seconds, or an
// HTTP-date turned into seconds from now, rounded up (0 when past).
// Values above a day are capped at a day. It returns BadRetryAfter for
// anything else. It allocates only for a date.
func parseRetryAfter(b []byte, now time.Time) int32 {
	if len(b) == 0 {
		return BadRetryAfter
	}
	var n int64
	digits := true
	for _, c := range b {
		if c < '0' || c > '9' {
			digits = false
			break
		}
		if n = n*10 + int64(c-'0'); n > maxRetryAfter {
			n = maxRetryAfter
		}
	}
	if digits {
		return int32(n)
	}
	t, err := http.ParseTime(string(b))
	if err != nil {
		return BadRetryAfter
	}
	d := t.Sub(now) // saturates ~292 years ahead: capped before rounding up
	switch {
	case d <= 0:
		return 0
	case d >= maxRetryAfter*time.Second:
		return maxRetryAfter
	}
	return int32((d + time.Second - 1) / time.Second)
}
