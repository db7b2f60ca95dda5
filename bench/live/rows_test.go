package live_test

import "github.com/ratebench/ratebench/bench/call"

// rowsTracer keeps the rows it is given.
type rowsTracer struct{ rows []call.Row }

func (r *rowsTracer) Row(row call.Row) { r.rows = append(r.rows, row) }
