package rule

// HTTPRateEstimate is go-chi/httprate's estimate of a sliding counter
// whose previous window counted prev and whose current one counts curr, at
// diff ns into the current window of w ns: prev*(w-diff)/w + curr, in
// float64 as the library computes it. Its windows roll as CounterRoll
// says.
func HTTPRateEstimate(prev, curr, diff, w int64) float64 {
	fw := float64(w)
	return float64(prev)*(fw-float64(diff))/fw + float64(curr)
}

// HTTPRateFits reports whether a request of cost units fits httprate's
// estimate (HTTPRateEstimate, >= 0 and below 2^63) within limit: whether
// int(math.Round(estimate)) + cost <= limit, rounding half away from
// zero. It compares without rounding: below 2^52, round(x) <= m iff x <
// m + 1/2, which float64 holds exactly; from 2^52 on, a float64 is a whole
// number, which rounding leaves as it is.
func HTTPRateFits(estimate float64, cost, limit int64) bool {
	if cost > limit {
		return false
	}
	if m := limit - cost; m < 1<<52 {
		return estimate < float64(m)+0.5
	}
	return estimate < 1<<52 || int64(estimate) <= limit-cost
}
