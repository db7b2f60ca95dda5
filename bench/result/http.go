package result

// HTTPStats holds what only `ratebench attack` measures, in Run.HTTP; nil
// in other runs. In an HTTP run each request is exactly one of
// Run.Admitted (2xx), Run.Rejected (a reject status, 429 unless told
// otherwise) and Run.Errors (transport errors and every other status,
// split by Run.ErrorKinds); statuses are counted in Run.StatusCodes.
type HTTPStats struct {
	URL       string `json:"url"`
	Method    string `json:"method"`
	Client    string `json:"client"` // "fasthttp" or "net/http"
	KeyHeader string `json:"key_header,omitempty"`
	// Closed: no schedule, each connection sent its next request when
	// answered (-rate 0); latency is then the service time.
	Closed bool `json:"closed_loop,omitempty"`
	// Responses counts the requests answered, whatever the status.
	Responses int64 `json:"responses"`
	// Sent counts the requests written to the network: more than Offered
	// when the client re-sent some on its own (net/http does, on a reused
	// connection); what the server's own count should say.
	Sent int64 `json:"requests_sent"`
	// RejectStatuses are the statuses counted as rejections (429 unless
	// told otherwise); other non-2xx statuses are errors.
	RejectStatuses []int `json:"reject_statuses,omitempty"`
	// TooManyPct is the rejections in percent of Responses.
	TooManyPct float64 `json:"too_many_pct"`
	// RetryAfterS counts the Retry-After values seen, in whole seconds
	// ("invalid" for a value that is neither seconds nor a date).
	RetryAfterS map[string]int64 `json:"retry_after_s,omitempty"`
	// HonorRetryAfter: arrivals of a key told to retry later were held
	// back until then; HeldBack counts them (in Live.Scheduled, not in
	// Offered).
	HonorRetryAfter bool  `json:"honor_retry_after,omitempty"`
	HeldBack        int64 `json:"held_back,omitempty"`
	// Connections counts the connections opened.
	Connections int64 `json:"connections"`
	// SourceAddrs are the local addresses the requests left from
	// (attack's -source-addrs), each key always from the same one; empty
	// when the system chose.
	SourceAddrs []string `json:"source_addrs,omitempty"`
	// CompletedRatePerS is the requests that ended (answered or failed)
	// per second of wall time, the drain after the last send included.
	CompletedRatePerS float64 `json:"completed_rate_per_s"`
	// PolicySource says where Result.Policy came from: "config" (flags),
	// "RateLimit-Policy" (the server's response field), "config and
	// RateLimit-Policy", "fit" (probe: the fit of its own answers), or
	// "none" (no limit known: Result.Policy has
	// Limit 0, and its window is only the span the most admitted is
	// counted in).
	PolicySource string `json:"policy_source"`
	// ServerAlgorithm is the server's algorithm as the user named it, for
	// the theory; "" when unknown (TheoryMaxInWindow is then 0).
	ServerAlgorithm string `json:"server_algorithm,omitempty"`
	// Headers is whether the rate-limit fields told the truth.
	Headers *HeaderStats `json:"headers,omitempty"`
}
