package httplimit

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// testTrusted are the trusted proxies of the client address tests: two
// IPv4 networks, an IPv6 one, and an IPv4 network written IPv4-mapped.
var testTrusted = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("2001:db8:ffff::/48"),
	normPrefix(netip.MustParsePrefix("::ffff:172.16.0.0/108")),
}

func TestClientIPXForwardedFor(t *testing.T) {
	const proxy = "10.0.0.1:443"
	for _, tc := range []struct {
		name  string
		peer  string   // r.RemoteAddr
		lines []string // X-Forwarded-For field lines
		want  string   // "" for the zero Addr
	}{
		// Untrusted peers: the header is never read.
		{name: "untrusted peer, spoofed header ignored", peer: "203.0.113.9:5000", lines: []string{"198.51.100.7"}, want: "203.0.113.9"},
		{name: "untrusted peer, no header", peer: "203.0.113.9:5000", want: "203.0.113.9"},
		{name: "untrusted peer, trusted-looking header ignored", peer: "203.0.113.9:5000", lines: []string{"10.0.0.2"}, want: "203.0.113.9"},
		// Trusted peer: the first untrusted address from the right.
		{name: "trusted peer, no header: the peer", peer: proxy, want: "10.0.0.1"},
		{name: "trusted peer selects the client", peer: proxy, lines: []string{"198.51.100.7"}, want: "198.51.100.7"},
		{name: "client's spoofed entries left of the real one ignored", peer: proxy, lines: []string{"6.6.6.6, 7.7.7.7, 198.51.100.7"}, want: "198.51.100.7"},
		{name: "several trusted hops skipped", peer: proxy, lines: []string{"6.6.6.6, 198.51.100.7, 10.0.0.2, 192.168.1.1"}, want: "198.51.100.7"},
		{name: "trusted IPv6 hop skipped", peer: "[2001:db8:ffff::1]:443", lines: []string{"198.51.100.7, 2001:db8:ffff::2"}, want: "198.51.100.7"},
		{name: "every hop trusted: the leftmost", peer: proxy, lines: []string{"10.0.0.3, 10.0.0.2"}, want: "10.0.0.3"},
		{name: "walk goes on across field lines, last line first", peer: proxy, lines: []string{"6.6.6.6, 198.51.100.7", "10.0.0.2"}, want: "198.51.100.7"},
		{name: "later line holds the client", peer: proxy, lines: []string{"6.6.6.6", "198.51.100.7"}, want: "198.51.100.7"},
		{name: "whitespace and tabs around entries", peer: proxy, lines: []string{" 6.6.6.6 ,\t198.51.100.7 \t"}, want: "198.51.100.7"},
		// Entry forms.
		{name: "IPv4 with port", peer: proxy, lines: []string{"198.51.100.7:4711"}, want: "198.51.100.7"},
		{name: "bare IPv6", peer: proxy, lines: []string{"2001:db8:cafe::17"}, want: "2001:db8:cafe::17"},
		{name: "bracketed IPv6", peer: proxy, lines: []string{"[2001:db8:cafe::17]"}, want: "2001:db8:cafe::17"},
		{name: "bracketed IPv6 with port", peer: proxy, lines: []string{"[2001:db8:cafe::17]:4711"}, want: "2001:db8:cafe::17"},
		{name: "IPv4-mapped IPv6 is unmapped", peer: proxy, lines: []string{"::ffff:198.51.100.7"}, want: "198.51.100.7"},
		{name: "zone dropped", peer: proxy, lines: []string{"fe80::1%eth0"}, want: "fe80::1"},
		{name: "IPv4-mapped trusted hop matches its IPv4 prefix", peer: proxy, lines: []string{"198.51.100.7, ::ffff:10.0.0.2"}, want: "198.51.100.7"},
		// Malformed entries stop the walk at the last good hop.
		{name: "malformed rightmost entry: the peer", peer: proxy, lines: []string{"6.6.6.6, garbage"}, want: "10.0.0.1"},
		{name: "malformed entry after a trusted hop: that hop", peer: proxy, lines: []string{"6.6.6.6, nonsense, 10.0.0.2"}, want: "10.0.0.2"},
		{name: "empty element stops", peer: proxy, lines: []string{"6.6.6.6,,10.0.0.2"}, want: "10.0.0.2"},
		{name: "trailing comma stops at the peer", peer: proxy, lines: []string{"198.51.100.7,"}, want: "10.0.0.1"},
		{name: "empty field line stops", peer: proxy, lines: []string{"198.51.100.7", ""}, want: "10.0.0.1"},
		{name: "hostname stops", peer: proxy, lines: []string{"client.example"}, want: "10.0.0.1"},
		{name: "unknown stops", peer: proxy, lines: []string{"6.6.6.6, unknown"}, want: "10.0.0.1"},
		{name: "out of range octet stops", peer: proxy, lines: []string{"999.1.1.1"}, want: "10.0.0.1"},
		{name: "IPv4 in brackets stops", peer: proxy, lines: []string{"[198.51.100.7]"}, want: "10.0.0.1"},
		{name: "Forwarded syntax in X-Forwarded-For stops", peer: proxy, lines: []string{"for=198.51.100.7"}, want: "10.0.0.1"},
		{name: "NUL byte stops", peer: proxy, lines: []string{"198.51.100.7\x00"}, want: "10.0.0.1"},
		// Ports: a number from 0 to 65535, or the entry is malformed.
		{name: "largest port", peer: proxy, lines: []string{"198.51.100.7:65535"}, want: "198.51.100.7"},                                            // in range
		{name: "port above 65535 stops", peer: proxy, lines: []string{"198.51.100.7:99999"}, want: "10.0.0.1"},                                      // five digits, out of range
		{name: "port 65536 stops", peer: proxy, lines: []string{"198.51.100.7:65536"}, want: "10.0.0.1"},                                            // one past the largest
		{name: "empty port stops", peer: proxy, lines: []string{"198.51.100.7:"}, want: "10.0.0.1"},                                                 // a colon and nothing
		{name: "named port stops", peer: proxy, lines: []string{"198.51.100.7:http"}, want: "10.0.0.1"},                                             // not a number
		{name: "IPv6 port out of range stops", peer: proxy, lines: []string{"[2001:db8::1]:70000"}, want: "10.0.0.1"},                               // bracketed form too
		{name: "bad port after a trusted hop stops there", peer: proxy, lines: []string{"6.6.6.6, 198.51.100.7:99999, 10.0.0.2"}, want: "10.0.0.2"}, // the last good hop
		// Peers.
		{name: "IPv6 peer with zone", peer: "[fe80::1%eth0]:80", want: "fe80::1"},
		{name: "IPv4-mapped peer unmapped, then trusted", peer: "[::ffff:10.0.0.1]:80", lines: []string{"198.51.100.7"}, want: "198.51.100.7"},
		{name: "peer in a prefix written IPv4-mapped", peer: "172.16.0.9:80", lines: []string{"198.51.100.7"}, want: "198.51.100.7"},
		{name: "peer without port", peer: "10.0.0.1", lines: []string{"198.51.100.7"}, want: "198.51.100.7"},
		{name: "Unix socket peer: zero, never trusted", peer: "@", lines: []string{"198.51.100.7"}, want: ""},
		{name: "empty peer: zero", peer: "", lines: []string{"198.51.100.7"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clientIP(tc.peer, tc.lines, false, testTrusted)
			checkAddr(t, got, tc.want)
		})
	}
}

func TestClientIPForwarded(t *testing.T) {
	const proxy = "10.0.0.1:443"
	for _, tc := range []struct {
		name  string
		peer  string
		lines []string // Forwarded field lines
		want  string
	}{
		{name: "untrusted peer, spoofed header ignored", peer: "203.0.113.9:5000", lines: []string{"for=198.51.100.7"}, want: "203.0.113.9"},
		{name: "plain IPv4", peer: proxy, lines: []string{"for=198.51.100.7"}, want: "198.51.100.7"},
		{name: "quoted IPv6 with port", peer: proxy, lines: []string{`for="[2001:db8:cafe::17]:4711"`}, want: "2001:db8:cafe::17"},
		{name: "quoted IPv4 with port, other pairs, name case-insensitive", peer: proxy, lines: []string{`For="198.51.100.7:4711";proto=https;by=10.0.0.1`}, want: "198.51.100.7"},
		{name: "for= not first in its element", peer: proxy, lines: []string{`proto=https;for=198.51.100.7`}, want: "198.51.100.7"},
		{name: "whitespace around semicolons", peer: proxy, lines: []string{`for=198.51.100.7 ; proto=https`}, want: "198.51.100.7"},
		{name: "unquoted ip:port accepted (some proxies send it)", peer: proxy, lines: []string{`for=198.51.100.7:4711`}, want: "198.51.100.7"},
		{name: "obfuscated port", peer: proxy, lines: []string{`for="[2001:db8::1]:_p1"`}, want: "2001:db8::1"},
		{name: "IPv4-mapped in brackets unmapped", peer: proxy, lines: []string{`for="[::ffff:198.51.100.7]"`}, want: "198.51.100.7"},
		{name: "client's spoofed element left of the real one ignored", peer: proxy, lines: []string{`for=6.6.6.6, for=198.51.100.7;proto=http`}, want: "198.51.100.7"},
		{name: "trusted hops skipped", peer: proxy, lines: []string{`for=198.51.100.7, for="10.0.0.2:80";by=_lb, for=192.168.0.3`}, want: "198.51.100.7"},
		{name: "elements across field lines", peer: proxy, lines: []string{`for=6.6.6.6`, `for=198.51.100.7`}, want: "198.51.100.7"},
		{name: "comma inside a quoted string is not a separator", peer: proxy, lines: []string{`by="a\"b,c";for=198.51.100.7`}, want: "198.51.100.7"},
		{name: "client's quoted commas left of the real element", peer: proxy, lines: []string{`for="6.6.6.6, for=1.2.3.4", for=198.51.100.7`}, want: "198.51.100.7"},
		{name: "client's unbalanced quote cannot swallow the appended element", peer: proxy, lines: []string{`for="6.6.6.6, for=198.51.100.7`}, want: "198.51.100.7"},
		// Stops at the last good hop.
		{name: "obfuscated identifier stops at the peer", peer: proxy, lines: []string{`for="_gazonk"`}, want: "10.0.0.1"},
		{name: "obfuscated identifier after a trusted hop stops there", peer: proxy, lines: []string{`for=6.6.6.6, for=_hidden, for=10.0.0.2`}, want: "10.0.0.2"},
		{name: "unknown stops", peer: proxy, lines: []string{`for=6.6.6.6, for=unknown`}, want: "10.0.0.1"},
		{name: "element without for stops", peer: proxy, lines: []string{`for=6.6.6.6, proto=https`}, want: "10.0.0.1"},
		{name: "for twice in one element is malformed", peer: proxy, lines: []string{`for=198.51.100.7;for=6.6.6.6`}, want: "10.0.0.1"},
		{name: "unbracketed IPv6 is malformed", peer: proxy, lines: []string{`for="2001:db8::1"`}, want: "10.0.0.1"},
		{name: "IPv4 in brackets is malformed", peer: proxy, lines: []string{`for="[198.51.100.7]"`}, want: "10.0.0.1"},
		{name: "space before = is malformed", peer: proxy, lines: []string{`for = 198.51.100.7`}, want: "10.0.0.1"},
		{name: "missing closing quote is malformed", peer: proxy, lines: []string{`for="[2001:db8::1]:80`}, want: "10.0.0.1"},
		{name: "bad escape in a quoted string is malformed", peer: proxy, lines: []string{"for=\"198.51.100.7\\\x01\""}, want: "10.0.0.1"},
		{name: "long port is malformed", peer: proxy, lines: []string{`for="198.51.100.7:123456"`}, want: "10.0.0.1"},
		// Ports: 1 to 5 digits up to 65535, or an obfuscated "_name";
		// anything else makes the element malformed, as in X-Forwarded-For.
		{name: "largest port", peer: proxy, lines: []string{`for="198.51.100.7:65535"`}, want: "198.51.100.7"},                       // in range
		{name: "five-digit port with leading zeros", peer: proxy, lines: []string{`for="198.51.100.7:00080"`}, want: "198.51.100.7"}, // 80, within 5 digits
		{name: "port above 65535 is malformed", peer: proxy, lines: []string{`for="1.2.3.13:99999"`}, want: "10.0.0.1"},              // five digits, out of range
		{name: "port 65536 is malformed", peer: proxy, lines: []string{`for="198.51.100.7:65536"`}, want: "10.0.0.1"},                // one past the largest
		{name: "unquoted out-of-range port is malformed", peer: proxy, lines: []string{`for=198.51.100.7:99999`}, want: "10.0.0.1"},  // the lenient unquoted form too
		{name: "IPv6 port out of range is malformed", peer: proxy, lines: []string{`for="[2001:db8::1]:70000"`}, want: "10.0.0.1"},   // bracketed form too
		{name: "empty port is malformed", peer: proxy, lines: []string{`for="198.51.100.7:"`}, want: "10.0.0.1"},                     // a colon and nothing
		{name: "empty IPv6 port is malformed", peer: proxy, lines: []string{`for="[2001:db8::1]:"`}, want: "10.0.0.1"},               // after the bracket
		{name: "named port is malformed", peer: proxy, lines: []string{`for="198.51.100.7:http"`}, want: "10.0.0.1"},                 // not digits, not obfuscated
		{name: "signed port is malformed", peer: proxy, lines: []string{`for="198.51.100.7:+80"`}, want: "10.0.0.1"},                 // digits only
		{name: "bad port after a trusted hop stops there", peer: proxy,
			lines: []string{`for=6.6.6.6, for="198.51.100.7:99999", for=10.0.0.2`}, want: "10.0.0.2"}, // the last good hop
		{name: "empty element stops at the trusted hop", peer: proxy, lines: []string{`for=198.51.100.7,,for=10.0.0.2`}, want: "10.0.0.2"},
		{name: "escaped characters in the node are unescaped", peer: proxy, lines: []string{`for="198.51.100.\7"`}, want: "198.51.100.7"},
		{name: "X-Forwarded-For syntax in Forwarded stops", peer: proxy, lines: []string{`198.51.100.7`}, want: "10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clientIP(tc.peer, tc.lines, true, testTrusted)
			checkAddr(t, got, tc.want)
		})
	}
}

func checkAddr(t *testing.T, got netip.Addr, want string) {
	t.Helper()
	if want == "" {
		if got.IsValid() {
			t.Fatalf("got %v, want the zero Addr", got)
		}
		return
	}
	if got != netip.MustParseAddr(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// FuzzClientIP: the resolver never panics; it returns the peer or a valid,
// normalized address; an untrusted peer's header is never read; and
// whatever a client writes, the entry a trusted proxy appends to its right
// (on the same line or on a line of its own) is what is found.
func FuzzClientIP(f *testing.F) {
	for _, s := range []struct {
		peer, header string
		forwarded    bool
	}{
		{"10.0.0.1:443", "198.51.100.7, 10.0.0.2", false},
		{"10.0.0.1:443", "6.6.6.6,,garbage", false},
		{"[fe80::1%eth0]:80", "::ffff:1.2.3.4", false},
		{"10.0.0.1:443", `for="[2001:db8:cafe::17]:4711";proto=https`, true},
		{"10.0.0.1:443", `by="a\"b,c";for=198.51.100.7, for=_x`, true},
		{"10.0.0.1:443", `for="unbalanced, for=1.2.3.4`, true},
		{"@", "for=1.2.3.4", true},
	} {
		f.Add(s.peer, s.header, s.forwarded)
	}
	f.Fuzz(func(t *testing.T, peerAddr, header string, forwarded bool) {
		lines := strings.Split(header, "\n")
		peer := parsePeer(peerAddr)
		got := clientIP(peerAddr, lines, forwarded, testTrusted)
		if got != peer {
			if !got.IsValid() || got.Zone() != "" || got.Is4In6() {
				t.Fatalf("clientIP(%q, %q, %v) = %v: not the peer %v nor a normalized address", peerAddr, lines, forwarded, got, peer)
			}
			if !isTrusted(peer, testTrusted) {
				t.Fatalf("clientIP(%q, %q, %v) = %v: an untrusted peer's header was read", peerAddr, lines, forwarded, got)
			}
		}
		appended := ", 198.51.100.7"
		if forwarded {
			appended = `, for="198.51.100.7:80"`
		}
		want := netip.MustParseAddr("198.51.100.7")
		if got := clientIP("10.0.0.1:1", []string{header + appended}, forwarded, testTrusted); got != want {
			t.Fatalf("after %q: got %v, want %v", header+appended, got, want)
		}
		if got := clientIP("10.0.0.1:1", append(lines, appended[2:]), forwarded, testTrusted); got != want {
			t.Fatalf("after lines %q: got %v, want %v", lines, got, want)
		}
	})
}

func TestNormPrefix(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"10.1.2.3/8", "10.0.0.0/8"},                   // masked
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},          // IPv4-mapped to IPv4
		{"::ffff:0.0.0.0/96", "0.0.0.0/0"},             // all of IPv4
		{"::/64", "::/64"},                             // too short to be IPv4-mapped: left alone
		{"2001:db8::1/32", "2001:db8::/32"},            // IPv6 masked
		{"::ffff:198.51.100.7/128", "198.51.100.7/32"}, // one mapped address
	} {
		if got := normPrefix(netip.MustParsePrefix(tc.in)); got != netip.MustParsePrefix(tc.want) {
			t.Errorf("normPrefix(%s) = %v, want %s", tc.in, got, tc.want)
		}
	}
}

// TestDefaults covers the real clock and sleeper without waiting: the clock
// reads the Unix epoch, and the sleeper returns at once for a context
// already done (or a 1ns timer).
func TestDefaults(t *testing.T) {
	before := time.Now().UnixNano()
	now := int64(sinceEpoch())
	if after := time.Now().UnixNano(); now < before || now > after {
		t.Fatalf("sinceEpoch() = %d, not within [%d, %d]", now, before, after)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleepCtx(cancelled, 1h) = %v, want context.Canceled", err)
	}
	if err := sleepCtx(context.Background(), time.Nanosecond); err != nil {
		t.Fatalf("sleepCtx(1ns) = %v", err)
	}
}

func TestCeilSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0},                             // nothing to wait
		{-time.Second, 0},                  // a past instant
		{time.Nanosecond, 1},               // any fraction is a whole second
		{999 * time.Millisecond, 1},        // just under one
		{time.Second, 1},                   // exact
		{time.Second + 1, 2},               // just over one
		{1<<63 - 2, 9_223_372_037},         // near the top: no overflow
		{1<<63 - 1, 9_223_372_037},         // MaxInt64 (algorithms.Never)
		{59*time.Second + 1, 60},           // a minute
		{60 * time.Second, 60},             // exactly a minute
		{1500 * time.Millisecond, 2},       // a window of 1.5s is advertised as 2
		{time.Duration(1e18) + 1, 1e9 + 1}, // large, with a fraction
	} {
		if got := ceilSeconds(tc.d); got != tc.want {
			t.Errorf("ceilSeconds(%d) = %d, want %d", tc.d, got, tc.want)
		}
	}
}
