package httpexec_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
)

func TestParseStatuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    []int
		wantErr string // in the error, which wraps ErrBadRequest
	}{
		{name: "one", in: "429", want: []int{429}},
		{name: "a list, spaces and a repeat", in: "429, 503,429", want: []int{429, 503}},
		{name: "a success", in: "429,204", wantErr: "204 is a success"},
		{name: "not a number", in: "429,x", wantErr: `"x" is not an HTTP status`},
		{name: "out of range", in: "99", wantErr: `"99" is not an HTTP status`},
		{name: "empty", in: "", wantErr: `"" is not an HTTP status`},
	} {
		got, err := httpexec.ParseStatuses(tc.in)
		if tc.wantErr != "" {
			if got != nil || !errors.Is(err, httpexec.ErrBadRequest) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, %v; want a bad request with %q", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
