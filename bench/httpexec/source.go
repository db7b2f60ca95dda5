package httpexec

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// MaxSourceAddrs bounds Config.SourceAddrs, and what ParseSourceAddrs
// accepts in all and in one range: each source has connections of its
// own.
const MaxSourceAddrs = 1 << 16

// source is one local address a Client's connections are bound to, and
// what a request sent from it says. Read-only once built.
type source struct {
	local *net.TCPAddr // port 0; nil: the system chooses
	name  string       // Response.Source: the address, "" when the system chooses
}

// newSources checks addrs (Config.SourceAddrs) and returns one source
// for each, in order; one that lets the system choose for none.
func newSources(addrs []netip.Addr) ([]source, error) {
	if len(addrs) == 0 {
		return []source{{}}, nil
	}
	if err := checkSources(addrs); err != nil {
		return nil, err
	}
	srcs := make([]source, len(addrs))
	for i, a := range addrs {
		a = a.Unmap()
		srcs[i] = source{local: net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 0)), name: a.String()}
	}
	return srcs, nil
}

// checkSources checks that addrs are at most MaxSourceAddrs unicast
// addresses, none twice (an IPv4-mapped IPv6 address is its IPv4
// address). Errors wrap ErrBadRequest.
func checkSources(addrs []netip.Addr) error {
	if len(addrs) > MaxSourceAddrs {
		return fmt.Errorf("%w: %d source addresses: at most %d", ErrBadRequest, len(addrs), MaxSourceAddrs)
	}
	seen := make(map[netip.Addr]struct{}, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		switch {
		case !a.IsValid():
			return fmt.Errorf("%w: a source address is the zero netip.Addr", ErrBadRequest)
		case a.IsUnspecified():
			return fmt.Errorf("%w: source address %s is unspecified: name the address to send from", ErrBadRequest, a)
		case a.IsMulticast():
			return fmt.Errorf("%w: source address %s is multicast", ErrBadRequest, a)
		}
		if _, ok := seen[a]; ok {
			return fmt.Errorf("%w: source address %s is given twice", ErrBadRequest, a)
		}
		seen[a] = struct{}{}
	}
	return nil
}

// ParseSourceAddrs parses a list of source addresses for
// Config.SourceAddrs: comma-separated items, each an IPv4 or IPv6 address
// (127.0.0.2, ::1) or an inclusive range of one family, given by both
// ends (127.0.0.2-127.0.0.9) or, for IPv4, by the first address and the
// last octet (127.0.0.2-9). A range holds at most MaxSourceAddrs
// addresses and so does the list; no address may come twice, and each
// must be unicast. IPv4-mapped IPv6 addresses are taken as IPv4. Errors
// name the item at fault and wrap ErrBadRequest. Safe for concurrent use.
func ParseSourceAddrs(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("%w: an empty item in %q: want addresses or ranges separated by commas", ErrBadRequest, s)
		}
		if a, err := netip.ParseAddr(item); err == nil {
			out = append(out, a.Unmap())
		} else {
			first, last, err := parseRange(item)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
			}
			for a, n := first, 1; ; a, n = a.Next(), n+1 {
				if n > MaxSourceAddrs {
					return nil, fmt.Errorf("%w: range %s holds more than %d addresses", ErrBadRequest, item, MaxSourceAddrs)
				}
				out = append(out, a)
				if a == last {
					break
				}
			}
		}
		if len(out) > MaxSourceAddrs {
			return nil, fmt.Errorf("%w: %q holds more than %d addresses in all", ErrBadRequest, s, MaxSourceAddrs)
		}
	}
	if err := checkSources(out); err != nil {
		return nil, err
	}
	return out, nil
}

// parseRange parses an item "FIRST-LAST" or "A.B.C.D-N" into its ends,
// unmapped, first <= last and of one family and zone.
func parseRange(item string) (first, last netip.Addr, err error) {
	lo, hi, ok := strings.Cut(item, "-")
	if !ok {
		return first, last, fmt.Errorf("%q is not an IP address or a range FIRST-LAST", item)
	}
	lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
	if first, err = netip.ParseAddr(lo); err != nil {
		return first, last, fmt.Errorf("range %s: %q is not an IP address", item, lo)
	}
	first = first.Unmap()
	if n, err := strconv.ParseUint(hi, 10, 8); err == nil {
		if !first.Is4() {
			return first, last, fmt.Errorf("range %s: the short form A.B.C.D-N is for IPv4; give both ends", item)
		}
		b := first.As4()
		b[3] = byte(n)
		last = netip.AddrFrom4(b)
	} else if last, err = netip.ParseAddr(hi); err != nil {
		if isDigits(hi) {
			return first, last, fmt.Errorf("range %s: the last octet %s is over 255", item, hi)
		}
		return first, last, fmt.Errorf("range %s: %q is not an IP address", item, hi)
	}
	last = last.Unmap()
	switch {
	case first.Is4() != last.Is4():
		return first, last, fmt.Errorf("range %s mixes IPv4 and IPv6", item)
	case first.Zone() != last.Zone():
		return first, last, fmt.Errorf("range %s: its ends have different zones", item)
	case last.Less(first):
		return first, last, fmt.Errorf("range %s ends before it starts", item)
	}
	return first, last, nil
}

// isDigits reports whether s is one or more decimal digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// SourceIndex is the index in [0, n) of the source address a request
// with key is sent from when there are n (Config.SourceAddrs): for a key
// "k" followed by decimal digits, as workloads name their keys (k0, k1,
// ...), that number modulo n, so that keys k0 to kN-1 take the sources in
// turn and spread over them evenly; for any other key, its 64-bit FNV-1a
// hash modulo n. 0 when n <= 1. It allocates nothing and is safe for
// concurrent use.
func SourceIndex(key string, n int) int {
	if n <= 1 {
		return 0
	}
	m := uint64(n)
	if len(key) > 1 && key[0] == 'k' && isDigits(key[1:]) {
		r := uint64(0) // the number modulo m, digit by digit: exact for any length (and any n below 2^60)
		for i := 1; i < len(key); i++ {
			r = (r*10 + uint64(key[i]-'0')) % m
		}
		return int(r)
	}
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime
	}
	return int(h % m)
}

// connsOf is source i's share of total connections over n sources: an
// even split, the remainder to the first, at least one each.
func connsOf(total, n, i int) int {
	c := total / n
	if i < total%n {
		c++
	}
	return max(c, 1)
}
