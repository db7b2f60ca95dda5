package httplimit_test

import (
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"

	"github.com/ratebench/ratebench/algorithms/httplimit"
)

func TestParseTrustedProxies(t *testing.T) {
	tests := []struct {
		name, in string
		want     []netip.Prefix
		wantErr  string
	}{
		{name: "empty", in: ""},
		{name: "cidr and address", in: "10.0.0.0/8, 192.0.2.1,,::1",
			want: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("::1/128")}},
		{name: "bad", in: "10.0.0.0/8,nope", wantErr: `"nope": not a CIDR (e.g. 10.0.0.0/8) or an address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := httplimit.ParseTrustedProxies(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		name, in string
		wantNil  bool
		wantKey  string // of a request with X-API-Key: k1
		wantErr  bool
	}{
		{name: "client IP", in: "", wantNil: true},
		{name: "header", in: "header:X-API-Key", wantKey: "k1"},
		{name: "no prefix", in: "X-API-Key", wantErr: true},
		{name: "empty name", in: "header:", wantErr: true},
		{name: "not a token", in: "header:X API", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := httplimit.ParseKey(tc.in)
			switch {
			case tc.wantErr:
				if err == nil {
					t.Fatalf("ParseKey(%q): no error", tc.in)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.wantNil:
				if fn != nil {
					t.Fatalf("ParseKey(%q) is not nil", tc.in)
				}
				return
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-API-Key", "k1")
			if got, err := fn(r, netip.Addr{}); err != nil || got != tc.wantKey {
				t.Fatalf("key %q, %v; want %q", got, err, tc.wantKey)
			}
		})
	}
}
