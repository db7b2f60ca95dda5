package rule

// LogHorizon is the latest instant (ns) of a sliding log's entry that no
// longer counts at the instant t (ns), for a window of w ns: an entry at a
// counts while t < a+w, so the log holds what was logged in (t-w, t], after
// the horizon. A request fits the log as FixedFits says, on the cost its
// entries after the horizon hold.
//
// How a log keeps its entries is not part of the rule: a limiter keeps a
// bounded ring that forgets what can no longer decide anything, a model
// that is asked at earlier instants too keeps them all.
func LogHorizon(t, w int64) int64 {
	return t - w
}
