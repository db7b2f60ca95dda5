// Package rule holds each rate-limiting algorithm's decision rule, written
// once: pure functions on a plain state, with no lock, no atomic, no key
// and no Decision. The limiters of package algorithms run them under their
// own concurrency and add their headers; the fit (bench/fit) runs them to
// predict a service's decisions and to follow what it really did, which
// is why a rule comes apart into its pieces: bring the state to the
// instant t, whether a request fits it, and the state after the request
// is taken (admitted, or denied for a rule that counts denied requests).
//
// It is a leaf: it imports nothing of this module, so that both sides may
// import it. Instants and durations are in ns (int64), costs in units.
package rule
