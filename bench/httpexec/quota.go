package httpexec

import (
	"bytes"
	"time"
)

// Quota is what a response's rate-limit fields say about the client's
// quota: Remaining units left and ResetAfter until it is whole again.
// Either is -1 when no field said it.
type Quota struct {
	Remaining  int64
	ResetAfter time.Duration
}

// NoQuota is the Quota of a response without rate-limit fields.
var NoQuota = Quota{Remaining: -1, ResetAfter: -1}

// quotaFields are the field names a quota is read from, in the order they
// are tried: the RateLimit field of the IETF draft, then the separate
// fields of its earlier versions, then the X- fields most servers send.
var quotaFields = [...]string{
	"RateLimit",
	"RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Remaining", "X-RateLimit-Reset",
}

// readQuota reads a response's quota, with get returning a field's value
// (nil when absent) and now the time the response came, for a reset sent
// as a Unix time. It allocates nothing.
//
// RateLimit is the draft's structured field: `"name";r=50;t=30` (its
// version 09 on, the first item's r and t) or `limit=100, remaining=50,
// reset=30` (earlier versions). A reset of the X- fields is a delay in
// seconds, or, when it is 10^9 or more, a Unix time in seconds (10^12 or
// more: milliseconds), as GitHub and others send it. A value that cannot
// be read counts as not said.
func readQuota(get func(name string) []byte, now time.Time) Quota {
	q := NoQuota
	if v := get(quotaFields[0]); v != nil {
		q = parseRateLimit(v)
	}
	for i := 1; i < len(quotaFields) && (q.Remaining < 0 || q.ResetAfter < 0); i += 2 {
		if q.Remaining < 0 {
			if n, ok := parseUint(bytes.TrimSpace(get(quotaFields[i]))); ok {
				q.Remaining = n
			}
		}
		if q.ResetAfter < 0 {
			q.ResetAfter = parseReset(bytes.TrimSpace(get(quotaFields[i+1])), now)
		}
	}
	return q
}

// parseRateLimit reads remaining and reset from a RateLimit field value.
func parseRateLimit(v []byte) Quota {
	q := NoQuota
	v = bytes.TrimLeft(v, " \t")
	// Draft 09 on: a list whose first item is a String or Token followed by
	// parameters. Earlier: a dictionary with no item before the first '='.
	item := len(v) > 0 && v[0] == '"'
	if i := bytes.IndexAny(v, "=;,"); i >= 0 && v[i] == ';' {
		item = true
	}
	if item {
		if v[0] == '"' {
			i := 1
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
			if i >= len(v) {
				return q
			}
			v = v[i+1:]
		}
		if i := bytes.IndexByte(v, ','); i >= 0 {
			v = v[:i] // the first item only
		}
		if i := bytes.IndexByte(v, ';'); i >= 0 {
			v = v[i:]
		} else {
			return q
		}
	}
	for len(v) > 0 {
		end := bytes.IndexAny(v, ";,")
		if end < 0 {
			end = len(v)
		}
		name, val, _ := bytes.Cut(v[:end], []byte("="))
		name, val = bytes.TrimSpace(name), bytes.TrimSpace(val)
		if end < len(v) {
			end++
		}
		v = v[end:]
		n, ok := parseUint(val)
		if !ok {
			continue
		}
		switch {
		case item && string(name) == "r", !item && string(name) == "remaining":
			q.Remaining = n
		case item && string(name) == "t", !item && string(name) == "reset":
			if n <= maxReset {
				q.ResetAfter = time.Duration(n) * time.Second
			}
		}
	}
	return q
}

// maxReset bounds a reset delay, in seconds: a year.
const maxReset = 366 * 86400

// parseReset reads a reset: a delay in seconds, perhaps with a fraction,
// or a Unix time in seconds or milliseconds; -1 when v is none of them
// or more than a year away. A Unix time already past is a reset of 0.
func parseReset(v []byte, now time.Time) time.Duration {
	whole, frac, _ := bytes.Cut(v, []byte("."))
	n, ok := parseUint(whole)
	if !ok {
		return -1
	}
	var f time.Duration
	scale := time.Second
	for _, c := range frac {
		if c < '0' || c > '9' {
			return -1
		}
		scale /= 10
		f += time.Duration(c-'0') * scale
	}
	var at time.Time
	switch {
	case n >= 1e12:
		at = time.UnixMilli(n)
	case n >= 1e9:
		at = time.Unix(n, int64(f))
	case n > maxReset:
		return -1
	default:
		return time.Duration(n)*time.Second + f
	}
	d := at.Sub(now)
	if d > maxReset*time.Second {
		return -1
	}
	return max(d, 0)
}

// parseUint reads a decimal integer of at most 18 digits.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
