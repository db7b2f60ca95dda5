package algorithms

import "errors"

// Sentinel errors. Errors returned by constructors and decisions wrap them,
// so callers test with errors.Is.
var (
	// ErrInvalidPolicy: a zero, negative, NaN or Inf limit or window, a
	// burst below one, or a combination that would overflow.
	ErrInvalidPolicy = errors.New("algorithms: invalid policy")
	// ErrInvalidCost: a cost below one.
	ErrInvalidCost = errors.New("algorithms: invalid cost")
	// ErrBackend: the store behind a limiter failed (Redis, SQLite). The
	// caller's failure policy decides whether to admit or reject.
	ErrBackend = errors.New("algorithms: backend error")
)
