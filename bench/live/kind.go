package live

// kindError carries an executor's error kind to the summary, which counts
// errors by call.ErrorKind.
type kindError struct {
	kind string
	err  error
}

func (e kindError) Error() string {
	if e.err != nil {
		return e.kind + ": " + e.err.Error()
	}
	return e.kind
}

func (e kindError) Unwrap() error { return e.err }

// ErrorKind names the error's kind for call.ErrorKind.
func (e kindError) ErrorKind() string { return e.kind }
