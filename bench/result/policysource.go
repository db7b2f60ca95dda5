package result

// Where the policy of an executor pass came from (HTTPStats.PolicySource).
const (
	PolicyFromConfig = "config"
	// PolicyFromServer: what the answers advertised, in RateLimit-Policy
	// or, with the config's window, a limit field such as
	// X-RateLimit-Limit (the value keeps the first field's name).
	PolicyFromServer = "RateLimit-Policy"
	PolicyFromBoth   = "config and RateLimit-Policy"
	// PolicyFromFit: from a fit of the pass's own answers (probe).
	PolicyFromFit = "fit"
	// PolicyNone: neither the config nor the server gave a limit. The
	// pass is recorded with Limit 0 (unknown) and its window (1s unless
	// given) as the span "most admitted in any W" is counted in.
	PolicyNone = "none"
)
