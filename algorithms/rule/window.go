package rule

// FloorTo is the start (ns) of the window of w ns that holds the instant t
// (ns), among windows starting at phase + j*w for every integer j, also
// for a t before phase.
func FloorTo(t, w, phase int64) int64 {
	r := (t - phase) % w
	if r < 0 {
		r += w
	}
	return t - r
}

// Millis is the millisecond that holds the instant t (ns) on a clock of
// whole milliseconds, such as nginx's and HAProxy's, whose milliseconds
// start phase ns into the instants' (0 <= phase < 1ms): floor((t-phase)/1ms).
func Millis(t, phase int64) int64 {
	d := t - phase
	m := d / 1e6
	if d%1e6 < 0 {
		m-- // floor, also before the clock's zero
	}
	return m
}

// FixedRoll is a fixed window's state at the instant t (ns): the start
// (ns) of its current window and the cost counted in it (FixedCount), from
// those of the window at start. Windows are w ns long and start at phase
// + j*w. An instant past the window opens the one that holds it, empty; an
// earlier one (a clock that went backwards) counts against the current
// window and never reopens one. It divides only when the window changes.
func FixedRoll(start, count, t, w, phase int64) (int64, int64) {
	if fixedOver(start, t, w) {
		return FloorTo(t, w, phase), 0
	}
	return start, count
}

// FixedCount is the cost counted at the instant t (ns) in a fixed window
// of w ns that started at start (ns) and counts count: zero once t is past
// it, as FixedRoll says.
func FixedCount(start, count, t, w int64) int64 {
	if fixedOver(start, t, w) {
		return 0
	}
	return count
}

// fixedOver reports whether the instant t is at or past the end of the
// window of w ns that started at start, on one comparison: t-w wraps only
// for an instant within w of the int64 minimum (centuries before any
// clock's zero), which it reads as past every window. A fresh state's
// start, math.MinInt64, is before every instant's t-w.
func fixedOver(start, t, w int64) bool {
	return t-w >= start
}

// FixedFits reports whether a request of cost units fits a window that
// has counted count of its limit units.
func FixedFits(count, cost, limit int64) bool {
	return cost <= limit-count
}

// FixedTake is a window's count after it admits a request of cost units.
func FixedTake(count, cost int64) int64 {
	return count + cost
}

// FirstRoll is the count at the instant t (ns) of a fixed window that a
// request opened at start (ns) for w ns (the INCR-then-EXPIRE pattern),
// from its count: zero once the window has expired. An instant before
// start (a clock that went backwards) counts against the open window. Such
// a window fits a request as FixedFits says.
func FirstRoll(start, count, t, w int64) int64 {
	if fixedOver(start, t, w) && count > 0 {
		return 0
	}
	return count
}

// FirstTake is the start (ns) and count of such a window after a request
// of cost units at the instant t (ns) is taken: one taken with no window
// open (count zero) opens one at t.
func FirstTake(start, count, t, cost int64) (int64, int64) {
	if count == 0 {
		start = t
	}
	return start, count + cost
}
