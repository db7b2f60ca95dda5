package httpexec

import (
	"net/http"
	"testing"
	"time"
)

func TestReadQuota(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name   string
		fields map[string]string
		want   Quota
	}{
		{name: "none", fields: nil, want: NoQuota},
		{name: "draft 09 item", fields: map[string]string{"RateLimit": `"default";r=50;t=30`}, want: Quota{50, 30 * time.Second}},
		{name: "draft 09 token item, first only", fields: map[string]string{"RateLimit": `day;r=7;t=3, hour;r=1;t=9`}, want: Quota{7, 3 * time.Second}},
		{name: "draft 09 spaces", fields: map[string]string{"RateLimit": ` "a" ; r=0 ; t=1`}, want: Quota{0, time.Second}},
		{name: "draft 07 dictionary", fields: map[string]string{"RateLimit": `limit=100, remaining=5, reset=2`}, want: Quota{5, 2 * time.Second}},
		{name: "draft 09 without t", fields: map[string]string{"RateLimit": `"d";r=4`, "RateLimit-Reset": "6"}, want: Quota{4, 6 * time.Second}},
		{name: "separate fields", fields: map[string]string{"RateLimit-Remaining": "9", "RateLimit-Reset": "1"}, want: Quota{9, time.Second}},
		{name: "x fields delay", fields: map[string]string{"X-RateLimit-Remaining": " 3 ", "X-RateLimit-Reset": "0.25"}, want: Quota{3, 250 * time.Millisecond}},
		{name: "x fields unix seconds", fields: map[string]string{"X-RateLimit-Reset": "1700000012"}, want: Quota{-1, 12 * time.Second}},
		{name: "x fields unix ms", fields: map[string]string{"X-RateLimit-Reset": "1700000000500"}, want: Quota{-1, 500 * time.Millisecond}},
		{name: "unix time past", fields: map[string]string{"X-RateLimit-Reset": "1600000000"}, want: Quota{-1, 0}},
		{name: "standard wins over x", fields: map[string]string{"RateLimit-Remaining": "1", "X-RateLimit-Remaining": "2"}, want: Quota{1, -1}},
		{name: "malformed", fields: map[string]string{"RateLimit": `"d";r=-1;t=x`, "X-RateLimit-Remaining": "many", "X-RateLimit-Reset": "1.5s"}, want: NoQuota},
		{name: "unterminated string", fields: map[string]string{"RateLimit": `"d;r=1`}, want: NoQuota},
		{name: "too long", fields: map[string]string{"X-RateLimit-Remaining": "1234567890123456789"}, want: NoQuota},
		{name: "delay over a year", fields: map[string]string{"RateLimit-Reset": "40000000"}, want: NoQuota},
		{name: "unix time over a year ahead", fields: map[string]string{"X-RateLimit-Reset": "2000000000"}, want: NoQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.fields {
				h.Set(k, v)
			}
			got := readQuota(func(name string) []byte {
				if v := h.Values(name); len(v) > 0 {
					return []byte(v[0])
				}
				return nil
			}, now)
			if got != tt.want {
				t.Errorf("readQuota(%v) = %+v, want %+v", tt.fields, got, tt.want)
			}
		})
	}
}

func FuzzReadQuota(f *testing.F) {
	f.Add(`"default";r=50;t=30`, "1700000012")
	f.Add(`limit=1, remaining=0, reset=1`, "0.5")
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, rl, reset string) {
		q := readQuota(func(name string) []byte {
			switch name {
			case "RateLimit":
				return []byte(rl)
			case "X-RateLimit-Reset":
				return []byte(reset)
			}
			return nil
		}, now)
		if q.Remaining < -1 || q.ResetAfter < -1 {
			t.Fatalf("readQuota(%q, %q) = %+v: below -1", rl, reset, q)
		}
		if q.ResetAfter > maxReset*time.Second {
			t.Fatalf("readQuota(%q, %q) = %+v: reset beyond a year", rl, reset, q)
		}
	})
}
