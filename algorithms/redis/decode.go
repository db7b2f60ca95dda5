package redis

import (
	"time"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/internal/wide"
)

// kind selects a Limiter's decode.
type kind int

const (
	kindGCRA kind = iota
	kindTokenBucket
	kindFixedWindow
	kindSlidingLog
	kindSlidingCounter
)

// decode turns one decision's reply numbers r (algorithm.width of them, see
// the scripts in lua.go) for clamped cost c into the Decision the in-memory
// algorithm gives. Spans are in ns.
func (l *Limiter) decode(r []int64, c int64) algorithms.Decision {
	switch l.kind {
	case kindGCRA:
		return l.decodeGCRA(r[0], c)
	case kindTokenBucket:
		return l.decodeTokenBucket(r[0], c)
	case kindFixedWindow:
		return l.decodeFixedWindow(r[0], r[1], c)
	case kindSlidingLog:
		return l.decodeSlidingLog(r[0], r[1], r[2])
	}
	return l.decodeSlidingCounter(r[0], r[1], r[2], r[3], c)
}

// decodeGCRA: v is nxt (> 0) when admitted, else -base-1; span = B*T.
func (l *Limiter) decodeGCRA(v, c int64) algorithms.Decision {
	t := l.interval
	if v > 0 {
		return algorithms.Decision{Allowed: true, Remaining: (l.span - v) / t, ResetAfter: time.Duration(v)}
	}
	base := -v - 1
	d := algorithms.Decision{Remaining: max(l.span-base, 0) / t, ResetAfter: time.Duration(base), RetryAfter: algorithms.Never}
	if c <= l.capacity {
		d.RetryAfter = time.Duration(base + c*t - l.span)
	}
	return d
}

// decodeTokenBucket: v is left (>= 0) when admitted, else have-cap-1;
// span = cap = B*T.
func (l *Limiter) decodeTokenBucket(v, c int64) algorithms.Decision {
	t := l.interval
	if v >= 0 {
		return algorithms.Decision{Allowed: true, Remaining: v / t, ResetAfter: time.Duration(l.span - v)}
	}
	have := v + l.span + 1
	d := algorithms.Decision{Remaining: max(have, 0) / t, ResetAfter: time.Duration(l.span - have), RetryAfter: algorithms.Never}
	if c <= l.capacity {
		d.RetryAfter = time.Duration(c*t - have)
	}
	return d
}

// decodeFixedWindow: v is the count after the admit when admitted, else
// -count-1; finish is the time until the counted window's end.
func (l *Limiter) decodeFixedWindow(v, finish, c int64) algorithms.Decision {
	if v > 0 {
		return algorithms.Decision{Allowed: true, Remaining: l.capacity - v, ResetAfter: time.Duration(finish)}
	}
	count := -v - 1
	d := algorithms.Decision{Remaining: l.capacity - count, RetryAfter: algorithms.Never}
	if c <= l.capacity {
		d.RetryAfter = time.Duration(finish)
	}
	if count > 0 {
		d.ResetAfter = time.Duration(finish)
	}
	return d
}

// decodeSlidingLog: v is the live sum after the admit when admitted, else
// -sum-1; retry (-1: Never) and reset are the script's.
func (l *Limiter) decodeSlidingLog(v, retry, reset int64) algorithms.Decision {
	d := algorithms.Decision{Allowed: v > 0, Remaining: l.capacity - v, RetryAfter: time.Duration(retry), ResetAfter: time.Duration(reset)}
	if v <= 0 {
		d.Remaining = l.capacity + v + 1
	}
	if retry < 0 {
		d.RetryAfter = algorithms.Never
	}
	return d
}

// decodeSlidingCounter: v is curr after the admit when admitted, else
// -curr-1; prev the previous window's count, srel the current window's
// start minus now, weight that start minus the latest instant, plus W.
// While rejected with cost <= L, admission comes when prev's weight has
// fallen to floor(room*W/prev), or in the next window, where curr weighs
// floor((L-c)*W/curr) at most (as in memory; both quotients are below W).
func (l *Limiter) decodeSlidingCounter(v, prev, srel, weight, c int64) algorithms.Decision {
	w, lim := l.window, l.capacity
	curr := v
	if v <= 0 {
		curr = -v - 1
	}
	d := algorithms.Decision{Allowed: v > 0, Remaining: max(lim-curr-wide.MulDivCeil(prev, weight, w), 0)}
	if d.Allowed {
		d.ResetAfter = time.Duration(srel + 2*w)
		return d
	}
	d.RetryAfter = algorithms.Never
	if c <= lim {
		if room := lim - curr - c; room >= 0 {
			d.RetryAfter = time.Duration(srel + w - wide.MulDiv(room, w, prev))
		} else {
			d.RetryAfter = time.Duration(srel + 2*w - wide.MulDiv(lim-c, w, curr))
		}
	}
	switch {
	case curr > 0:
		d.ResetAfter = time.Duration(srel + 2*w)
	case prev > 0:
		d.ResetAfter = time.Duration(srel + w)
	}
	return d
}
