// Package algorithms holds the rate-limiter contract shared by every part of
// ratebench (Limiter, Decision, Policy and the sentinel errors) and one file
// per in-memory algorithm.
//
// Time is passed in, never read: every decision takes the instant now as a
// time.Duration since the clock's zero (the start of a virtual-time run, or
// the Unix epoch for live runs). Fixed windows start at multiples of the
// window from that zero. A clock that goes backwards never creates quota.
//
// One Policy configures every algorithm so that they are comparable:
// limit L per window W, burst B (default L).
package algorithms
