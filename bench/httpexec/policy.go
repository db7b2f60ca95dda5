package httpexec

import (
	"bytes"
	"net/http"
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/bench/call"
)

// ParsePolicy reads the first policy of a RateLimit-Policy field value:
// its quota q per window w seconds, with a burst of q. It takes the
// structured-field list of draft-ietf-httpapi-ratelimit-headers 08 on,
// `"default";q=100;w=60` (the item a String or Token, parameters in any
// order, others such as pk or qu ignored), and that of the drafts before,
// `100;w=60` (the item the quota). ok is false when the value is
// malformed, lacks the quota or w (both positive integers), or says a
// policy algorithms.Policy.Validate refuses. Safe for concurrent use.
func ParsePolicy(v string) (p algorithms.Policy, ok bool) { return parsePolicy(v) }

// text is a field value as a string or as bytes.
type text interface{ ~string | ~[]byte }

// parsePolicy is ParsePolicy on either form of a value; it allocates
// nothing.
func parsePolicy[T text](v T) (p algorithms.Policy, ok bool) {
	item, s, ok := parseItem(v)
	if !ok {
		return p, false
	}
	q, w := int64(-1), int64(-1)
	if n, isInt := parseInteger(item); isInt {
		q = n // drafts before 08: the item is the quota
	}
	if !eachParam(s, func(name, val T) bool {
		n, isInt := parseInteger(val)
		switch string(name) {
		case "q":
			q = n
			return isInt
		case "w":
			w = n
			return isInt && n <= int64(time.Duration(1<<62)/time.Second)
		}
		return true
	}) || q < 1 || w < 1 {
		return p, false
	}
	p = algorithms.Policy{Limit: q, Window: time.Duration(w) * time.Second, Burst: q}
	if _, err := p.Validate(); err != nil { // e.g. more than one per nanosecond
		return algorithms.Policy{}, false
	}
	return p, true
}

// parseItem splits the first member of a structured-field list into its
// item (a String's quotes left on, a Token or an Integer as it is) and
// what follows it up to the next member: its parameters. ok is false for
// a String left open or an empty item.
func parseItem[T text](v T) (item, params T, ok bool) {
	s := trimSpace(v)
	i := 0
	if i < len(s) && s[i] == '"' {
		i = skipString(s, i)
		if i < 0 {
			return item, params, false
		}
	} else {
		for i < len(s) && s[i] != ';' && s[i] != ',' {
			i++
		}
	}
	item, s = trimSpace(s[:i]), s[i:]
	end := 0
	for end < len(s) && s[end] != ',' {
		if s[end] == '"' {
			if end = skipString(s, end); end < 0 {
				return item, params, false
			}
			continue
		}
		end++
	}
	return item, s[:end], len(item) > 0
}

// skipString returns the index after the String that opens at s[i], or
// -1 when it is not closed.
func skipString[T text](s T, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// eachParam calls f with each parameter's name and value (a String's
// quotes left on) of params, `;a=1;b="x;y"`, until f returns false; it
// reports whether f never did.
func eachParam[T text](params T, f func(name, val T) bool) bool {
	s := params
	for len(s) > 0 && s[0] == ';' {
		s = s[1:]
		end := 0
		for end < len(s) && s[end] != ';' {
			if s[end] == '"' {
				if end = skipString(s, end); end < 0 {
					return false
				}
				continue
			}
			end++
		}
		name, val := s[:end], s[end:end]
		for i := range end {
			if s[i] == '=' {
				name, val = s[:i], s[i+1:end]
				break
			}
		}
		if !f(trimSpace(name), trimSpace(val)) {
			return false
		}
		s = s[end:]
	}
	return true
}

// trimSpace drops spaces and tabs from both ends of v.
func trimSpace[T text](v T) T {
	i, j := 0, len(v)
	for i < j && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t') {
		j--
	}
	return v[i:j]
}

// parseInteger reads a structured-field Integer >= 0 of at most 15
// digits.
func parseInteger[T text](v T) (int64, bool) {
	if len(v) == 0 || len(v) > 15 {
		return 0, false
	}
	var n int64
	for i := range len(v) {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// policyFields are the fields a limit is read from when RateLimit-Policy
// says none, in the order they are tried: the RateLimit field of the
// drafts before 08 (`limit=100, remaining=5, reset=2`), then the separate
// fields of drafts 00 to 06 and the X- field most servers send.
var policyFields = [...]string{"RateLimit", "RateLimit-Limit", "X-RateLimit-Limit"}

// readPolicy reads the policy a response advertises, with get returning a
// field's value (nil when absent): RateLimit-Policy's first (ParsePolicy);
// else a limit from RateLimit's limit parameter, RateLimit-Limit or
// X-RateLimit-Limit, each `100` or, as drafts 00 to 02 allowed, `100,
// 100;w=60, 1000;w=3600` (then the window of the policy whose quota is the
// limit). A limit alone has Window 0: the response did not say it. The
// zero Policy when none is said. It allocates nothing.
func readPolicy(get func(name string) []byte) algorithms.Policy {
	if p, ok := parsePolicy(get("RateLimit-Policy")); ok {
		return p
	}
	for i, name := range policyFields {
		v := get(name)
		if v == nil {
			continue
		}
		var limit int64
		ok := false
		if i == 0 {
			limit, ok = dictLimit(v)
		} else {
			limit, ok = parseInteger(firstMember(v))
		}
		if !ok || limit < 1 {
			continue
		}
		p := algorithms.Policy{Limit: limit, Burst: limit}
		for rest := v; len(rest) > 0; {
			rest = afterMember(rest)
			if q, ok := parsePolicy(rest); ok && q.Limit == limit {
				p.Window = q.Window
				break
			}
		}
		return p
	}
	return algorithms.Policy{}
}

// firstMember is v up to its first comma, trimmed.
func firstMember(v []byte) []byte {
	m, _, _ := bytes.Cut(v, []byte(","))
	return trimSpace(m)
}

// afterMember is v after its first comma; empty when it has none.
func afterMember(v []byte) []byte {
	_, rest, _ := bytes.Cut(v, []byte(","))
	return rest
}

// dictLimit reads the limit member of a RateLimit dictionary of the
// drafts before 08, `limit=100, remaining=5, reset=2`.
func dictLimit(v []byte) (int64, bool) {
	for len(v) > 0 {
		m := firstMember(v)
		v = afterMember(v)
		if len(m) > 6 && string(m[:6]) == "limit=" {
			m, _, _ = bytes.Cut(m, []byte(";"))
			return parseInteger(trimSpace(m[6:]))
		}
	}
	return 0, false
}

// Values of Response.RetryAfter besides whole seconds >= 0.
// They are the engine's (call.Outcome.RetryAfter), so an outcome takes
// a response's value as it is.
const (
	NoRetryAfter  = call.NoRetryAfter  // the response has no Retry-After field
	BadRetryAfter = call.BadRetryAfter // a value that is neither delay-seconds nor an HTTP-date
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
