package httplimit

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ProblemQuotaExceeded is the problem type of a 429: the "quota-exceeded"
// type that draft-ietf-httpapi-ratelimit-headers-09 (section 5.1) defines
// for exactly this case, with its "violated-policies" member. Other
// problems (400, 500, 503, and the 429 of a key refused by a full key
// table, which exceeded no quota) carry no more than their status, so they
// use "about:blank" as RFC 9457 section 4.2.1 advises.
const ProblemQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"

// Problem is the RFC 9457 problem details body of the responses the
// middleware writes itself (400, 429, 500, 503), sent as
// application/problem+json. Members are the standard type, title, status
// and detail, plus two extensions on a 429: retry_after (whole seconds, the
// Retry-After value; absent when the request can never pass) and the
// draft's violated-policies (the policy names; absent when the key table
// was full).
type Problem struct {
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Status           int      `json:"status"`
	Detail           string   `json:"detail,omitempty"`
	RetryAfter       int64    `json:"retry_after,omitempty"`
	ViolatedPolicies []string `json:"violated-policies,omitempty"`
}

// writeProblem writes p with its status. The body ends with a newline.
func writeProblem(w http.ResponseWriter, p Problem) {
	body, err := json.Marshal(p)
	if err != nil { // strings and integers only: cannot happen
		body = []byte(`{"type":"about:blank","status":` + strconv.Itoa(p.Status) + `}`)
	}
	body = append(body, '\n')
	h := w.Header()
	h["Content-Type"] = []string{"application/problem+json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	w.WriteHeader(p.Status)
	_, _ = w.Write(body) // the client is gone if this fails: nothing to do
}
