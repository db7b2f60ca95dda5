package httplimit

import (
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns the address r is keyed by before Config.Key sees it.
// Addresses come without zone, and IPv4-mapped IPv6 addresses as IPv4.
//
// It is the direct peer (r.RemoteAddr, port stripped) unless the peer is in
// TrustedProxies. Then the proxy header (X-Forwarded-For, or the for=
// parameters of Forwarded) is walked from the right, field line by field
// line from the last, each entry being the peer of the hop to its right:
// trusted entries are skipped, and the first untrusted address is the
// client. If every entry is trusted, the leftmost is returned.
//
// The walk stops at the last good hop (the last trusted address read, or
// the peer) at the first entry that is not a plain address: malformed
// syntax (a port that is empty, not a number or above 65535 included), an
// empty list element, or in Forwarded a missing for=, "unknown" or an
// obfuscated identifier ("_hidden"). Such an entry was written by a
// trusted hop that could not name its peer, or copied from the client, so
// nothing left of it is believed; the client then shares the key of the
// proxy in front of it, a key it cannot choose. Because the walk reads from
// the right, garbage the client puts in front of the entries its proxies
// append never hides them.
//
// X-Forwarded-For entries are an IPv4 or IPv6 address, optionally with a
// port ("192.0.2.1:80", "[2001:db8::1]:80") or brackets. Forwarded is
// parsed as RFC 7239 says (quoted strings, case-insensitive parameter
// names, for= at most once per element, IPv6 bracketed and quoted),
// except that an unquoted port or bracket (for=192.0.2.1:80,
// for=[2001:db8::1]) is accepted, as some proxies send them.
//
// A peer that is not an IP address (a Unix socket) is never trusted and
// gives the zero Addr. Safe for concurrent use.
func (m *Middleware) ClientIP(r *http.Request) netip.Addr {
	return clientIP(r.RemoteAddr, r.Header[m.header], m.fwd, m.trusted)
}

// clientIP is ClientIP on its parts: the peer's address, the field lines of
// the proxy header, whether it is Forwarded, and the trusted prefixes.
func clientIP(remoteAddr string, lines []string, forwarded bool, trusted []netip.Prefix) netip.Addr {
	peer := parsePeer(remoteAddr)
	if !isTrusted(peer, trusted) {
		return peer
	}
	client := peer
	for i := len(lines) - 1; i >= 0; i-- {
		rest, more := lines[i], true
		for more {
			var elem string
			var ok bool
			if forwarded {
				elem, rest, more, ok = lastElement(rest)
			} else {
				elem, rest, more, ok = lastEntry(rest)
			}
			if !ok {
				return client
			}
			var a netip.Addr
			if forwarded {
				a, ok = forwardedFor(elem)
			} else {
				a, ok = parseHop(elem)
			}
			if !ok {
				return client
			}
			client = a
			if !isTrusted(a, trusted) {
				return a
			}
		}
	}
	return client
}

// norm drops the zone and unmaps IPv4-mapped IPv6 addresses.
func norm(a netip.Addr) netip.Addr { return a.WithZone("").Unmap() }

// normPrefix is p masked, with an IPv4-mapped IPv6 prefix of at least 96
// bits turned into the IPv4 prefix it covers (addresses are unmapped before
// they are matched).
func normPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parsePeer parses r.RemoteAddr: "ip:port", "[ipv6%zone]:port" or a bare
// address; anything else (a Unix socket's "@" or "") is the zero Addr.
func parsePeer(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return norm(ap.Addr())
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return norm(a)
	}
	return netip.Addr{}
}

// lastEntry splits the last comma-separated entry of an X-Forwarded-For
// line off s, without surrounding whitespace; more reports whether there is
// a rest to its left. ok is always true: an empty entry is refused by
// parseHop.
func lastEntry(s string) (entry, rest string, more, ok bool) {
	i := strings.LastIndexByte(s, ',')
	if i < 0 {
		return trimOWS(s), "", false, true
	}
	return trimOWS(s[i+1:]), s[:i], true, true
}

// parseHop parses an X-Forwarded-For entry: an address, "ipv4:port",
// "[ipv6]" or "[ipv6]:port".
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return norm(a), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return norm(ap.Addr()), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return norm(a), true
		}
	}
	return netip.Addr{}, false
}

// lastElement splits the last element of a Forwarded line off s, reading
// from the right and skipping commas inside quoted strings, so that what
// the client wrote at the left cannot change how the right is split. A
// quoted string is closed by a '"' and opened by the nearest '"' to its
// left that is preceded by an even number of backslashes (an odd number
// escapes it). ok is false when no opening quote is found.
func lastElement(s string) (elem, rest string, more, ok bool) {
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ',':
			return trimOWS(s[i+1:]), s[:i], true, true
		case '"':
			j := openingQuote(s, i)
			if j < 0 {
				return "", "", false, false
			}
			i = j
		}
	}
	return trimOWS(s), "", false, true
}

// openingQuote returns the index of the quote that opens the quoted string
// closed at s[end], or -1.
func openingQuote(s string, end int) int {
	for j := end - 1; j >= 0; j-- {
		if s[j] != '"' {
			continue
		}
		n := 0
		for k := j - 1; k >= 0 && s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
	}
	return -1
}

// forwardedFor parses one Forwarded element, pairs separated by ';'
// (whitespace around them tolerated), and returns the address of its for=
// node. It fails on any syntax error, a repeated or missing for=, or a node
// that is not an address.
func forwardedFor(elem string) (netip.Addr, bool) {
	var node string
	seen := false
	s := elem
	for {
		s = trimOWS(s)
		if s == "" {
			break
		}
		if s[0] == ';' { // an empty pair
			s = s[1:]
			continue
		}
		n := tokenLen(s)
		if n == 0 || n == len(s) || s[n] != '=' {
			return netip.Addr{}, false
		}
		name := s[:n]
		s = s[n+1:]
		var val string
		var ok bool
		if s != "" && s[0] == '"' {
			if val, s, ok = unquote(s); !ok {
				return netip.Addr{}, false
			}
		} else {
			n := valueLen(s)
			if n == 0 {
				return netip.Addr{}, false
			}
			val, s = s[:n], s[n:]
		}
		if strings.EqualFold(name, "for") {
			if seen {
				return netip.Addr{}, false
			}
			seen, node = true, val
		}
		s = trimOWS(s)
		if s == "" {
			break
		}
		if s[0] != ';' {
			return netip.Addr{}, false
		}
		s = s[1:]
	}
	if !seen {
		return netip.Addr{}, false
	}
	return parseNode(node)
}

// parseNode parses an RFC 7239 node: IPv4 or "[IPv6]", then optionally
// ":port" (digits, or an obfuscated "_port"). "unknown" and obfuscated
// names ("_x") fail: they name no address.
func parseNode(node string) (netip.Addr, bool) {
	var host, port string
	if strings.HasPrefix(node, "[") {
		j := strings.IndexByte(node, ']')
		if j < 0 {
			return netip.Addr{}, false
		}
		host, port = node[1:j], node[j+1:]
	} else if j := strings.IndexByte(node, ':'); j >= 0 {
		host, port = node[:j], node[j:]
	} else {
		host = node
	}
	if port != "" && !validPort(port) {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	// IPv4 bare, IPv6 only in brackets.
	if a.Is4() == strings.HasPrefix(node, "[") {
		return netip.Addr{}, false
	}
	return norm(a), true
}

// validPort reports whether p is ":" followed by a port number (1 to 5
// digits, at most 65535, as X-Forwarded-For's ports are read) or by an
// obfuscated port ("_" then letters, digits, '.', '_' or '-'). An empty,
// non-numeric or out-of-range port is malformed: a hop that writes one is
// not trusted to have written the address before it either.
func validPort(p string) bool {
	if len(p) < 2 || p[0] != ':' {
		return false
	}
	p = p[1:]
	if p[0] == '_' {
		for i := 1; i < len(p); i++ {
			if c := p[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
				return false
			}
		}
		return len(p) > 1
	}
	if len(p) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535
}

// unquote reads the quoted string at the start of s and returns its
// content, unescaped, and what follows it.
func unquote(s string) (val, rest string, ok bool) {
	escaped := false
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) || !isQuotedPairChar(s[i+1]) {
				return "", "", false
			}
			escaped = true
			i++
		case c == '"':
			val = s[1:i]
			if escaped {
				var b strings.Builder
				for k := 0; k < len(val); k++ {
					if val[k] == '\\' {
						k++
					}
					b.WriteByte(val[k])
				}
				val = b.String()
			}
			return val, s[i+1:], true
		case !isQDText(c):
			return "", "", false
		}
	}
	return "", "", false
}

// tokenLen is the length of the RFC 9110 token at the start of s.
func tokenLen(s string) int {
	for i := 0; i < len(s); i++ {
		if !isTChar(s[i]) {
			return i
		}
	}
	return len(s)
}

// valueLen is the length of an unquoted value at the start of s: a token,
// also allowing ':' '[' ']' for the unquoted "ip:port" some proxies send.
func valueLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isTChar(c) && c != ':' && c != '[' && c != ']' {
			return i
		}
	}
	return len(s)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isTChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isQDText: HTAB, SP, visible ASCII but '"' and '\', and obs-text.
func isQDText(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || c >= 0x23 && c <= 0x5b || c >= 0x5d && c <= 0x7e || c >= 0x80
}

// isQuotedPairChar: what may follow '\' in a quoted string.
func isQuotedPairChar(c byte) bool {
	return c == '\t' || c == ' ' || c >= 0x21 && c <= 0x7e || c >= 0x80
}

// trimOWS trims optional whitespace (spaces and tabs).
func trimOWS(s string) string { return strings.Trim(s, " \t") }
