// Package call holds the plain values the engines, the executors and the
// trace readers and writers share: a Target to decide with, a Request an
// Executor performs and its Outcome, and the Row each request leaves in a
// trace. It imports nothing of ratebench but algorithms, so every stage
// can depend on it without depending on the engines.
package call
