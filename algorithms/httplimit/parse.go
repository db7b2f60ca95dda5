package httplimit

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseTrustedProxies parses a comma-separated list of CIDRs for
// Config.TrustedProxies; a bare address is a prefix of itself alone, and
// empty elements are skipped.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q: not a CIDR (e.g. 10.0.0.0/8) or an address", part)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// ParseKey parses what requests are limited by, for Config.Key: "" for
// the client IP (a nil KeyFunc), or "header:NAME" for KeyHeader(NAME).
func ParseKey(s string) (KeyFunc, error) {
	if s == "" {
		return nil, nil
	}
	name, ok := strings.CutPrefix(s, "header:")
	if !ok || name == "" || tokenLen(name) != len(name) {
		return nil, fmt.Errorf("%q: want header:NAME, e.g. header:X-API-Key", s)
	}
	return KeyHeader(name), nil
}
