package httpexec_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ratebench/ratebench/bench/httpexec"
)

// TestParseSourceAddrs: ranges, lists and their mixes, and what is
// refused, each with a message naming the item at fault.
func TestParseSourceAddrs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    []string // the addresses; nil when an error is wanted
		wantErr string   // in the error's text
	}{
		{name: "one address", in: "127.0.0.2", want: []string{"127.0.0.2"}},
		{name: "full range", in: "127.0.0.2-127.0.0.4", want: []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}},
		{name: "last-octet range", in: "127.0.0.2-4", want: []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}},
		{name: "range of one", in: "127.0.0.7-127.0.0.7", want: []string{"127.0.0.7"}},
		{name: "range over an octet", in: "10.0.0.254-10.0.1.1", want: []string{"10.0.0.254", "10.0.0.255", "10.0.1.0", "10.0.1.1"}},
		{name: "list with IPv6", in: "127.0.0.2,127.0.0.3,::1", want: []string{"127.0.0.2", "127.0.0.3", "::1"}},
		{name: "mix and spaces", in: " 127.0.0.2-127.0.0.4 , 127.0.0.9", want: []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.9"}},
		{name: "IPv6 range", in: "fd00::fe-fd00::101", want: []string{"fd00::fe", "fd00::ff", "fd00::100", "fd00::101"}},
		{name: "IPv4-mapped taken as IPv4", in: "::ffff:127.0.0.2-127.0.0.3", want: []string{"127.0.0.2", "127.0.0.3"}},
		{name: "zoned IPv6", in: "fe80::1%lo", want: []string{"fe80::1%lo"}},

		{name: "empty", in: "", wantErr: "empty item"},
		{name: "empty item", in: "127.0.0.2,,127.0.0.3", wantErr: "empty item"},
		{name: "not an address", in: "localhost", wantErr: `"localhost" is not an IP address`},
		{name: "octet over 255", in: "127.0.0.300", wantErr: `"127.0.0.300" is not an IP address`},
		{name: "bad start", in: "127.0.0-127.0.0.5", wantErr: `range 127.0.0-127.0.0.5: "127.0.0" is not an IP address`},
		{name: "bad end", in: "127.0.0.2-127.0.0.x", wantErr: `"127.0.0.x" is not an IP address`},
		{name: "last octet over 255", in: "127.0.0.2-256", wantErr: "last octet 256 is over 255"},
		{name: "reversed", in: "127.0.0.9-127.0.0.2", wantErr: "range 127.0.0.9-127.0.0.2 ends before it starts"},
		{name: "reversed short", in: "127.0.0.9-2", wantErr: "range 127.0.0.9-2 ends before it starts"},
		{name: "mixed families", in: "127.0.0.1-::1", wantErr: "range 127.0.0.1-::1 mixes IPv4 and IPv6"},
		{name: "short form for IPv6", in: "fd00::1-5", wantErr: "short form A.B.C.D-N is for IPv4"},
		{name: "too large a range", in: "10.0.0.0-10.1.0.0", wantErr: "range 10.0.0.0-10.1.0.0 holds more than 65536 addresses"},
		{name: "too many in all", in: "10.0.0.0-10.0.255.255,10.1.0.0", wantErr: "more than 65536 addresses in all"},
		{name: "twice", in: "127.0.0.2-4,127.0.0.3", wantErr: "127.0.0.3 is given twice"},
		{name: "twice as mapped", in: "127.0.0.2,::ffff:127.0.0.2", wantErr: "127.0.0.2 is given twice"},
		{name: "unspecified", in: "0.0.0.0", wantErr: "0.0.0.0 is unspecified"},
		{name: "multicast", in: "ff02::1", wantErr: "ff02::1 is multicast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := httpexec.ParseSourceAddrs(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, httpexec.ErrBadRequest) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%q: %v, %v; want one line with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			var s []string
			for _, a := range got {
				s = append(s, a.String())
			}
			if strings.Join(s, ",") != strings.Join(tc.want, ",") {
				t.Errorf("%q: %v, want %v", tc.in, s, tc.want)
			}
		})
	}
	// The most a range may hold.
	if got, err := httpexec.ParseSourceAddrs("10.0.0.0-10.0.255.255"); err != nil || len(got) != httpexec.MaxSourceAddrs ||
		got[len(got)-1] != netip.MustParseAddr("10.0.255.255") {
		t.Errorf("a range of %d: %d addresses, %v", httpexec.MaxSourceAddrs, len(got), err)
	}
}

// TestSourceIndex: keys k<N> take the sources in turn; any other key
// always the same one.
func TestSourceIndex(t *testing.T) {
	for _, tc := range []struct {
		key  string
		n    int
		want int
	}{
		{"k0", 3, 0}, {"k1", 3, 1}, {"k2", 3, 2}, {"k3", 3, 0}, {"k5", 3, 2},
		{"k007", 3, 1},                      // the number, leading zeros and all
		{"k123456789012345678901234", 7, 6}, // longer than any integer: taken modulo n digit by digit
		{"k9", 1, 0}, {"anything", 1, 0}, {"k1", 0, 0},
	} {
		if got := httpexec.SourceIndex(tc.key, tc.n); got != tc.want {
			t.Errorf("SourceIndex(%q, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
	// Keys k0..k299 over 3 sources: 100 each.
	count := make([]int, 3)
	for i := range 300 {
		count[httpexec.SourceIndex("k"+strconv.Itoa(i), 3)]++
	}
	if count[0] != 100 || count[1] != 100 || count[2] != 100 {
		t.Errorf("k0..k299 over 3 sources: %v", count)
	}
	// Other keys are hashed: in range, stable, and spread.
	used := make([]int, 4)
	for _, key := range []string{"", "k", "kx", "k-1", "user-17", "alice", "bob", "carol", "dave", "eve", "K1", "k1 "} {
		i := httpexec.SourceIndex(key, 4)
		if i < 0 || i >= 4 || httpexec.SourceIndex(key, 4) != i {
			t.Fatalf("SourceIndex(%q, 4) = %d", key, i)
		}
		used[i]++
	}
	for i, n := range used {
		if n == 0 {
			t.Errorf("no key of 12 hashed to source %d of 4: %v", i, used)
		}
	}
}

// TestNewSourceAddrs: New refuses what ParseSourceAddrs would.
func TestNewSourceAddrs(t *testing.T) {
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name  string
		addrs []netip.Addr
		want  string
	}{
		{"zero", []netip.Addr{{}}, "zero netip.Addr"},
		{"twice", []netip.Addr{a("127.0.0.2"), a("127.0.0.2")}, "given twice"},
		{"unspecified", []netip.Addr{a("::")}, "unspecified"},
		{"too many", make([]netip.Addr, httpexec.MaxSourceAddrs+1), "at most 65536"},
	} {
		_, err := httpexec.New(httpexec.Config{URL: "http://127.0.0.1:1/", SourceAddrs: tc.addrs})
		if !errors.Is(err, httpexec.ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// loopbackSources returns 127.0.0.2, 127.0.0.3, ...: n addresses of the
// loopback interface other than 127.0.0.1, which Linux answers for all of
// 127.0.0.0/8 (other systems need them configured: skipped there).
func loopbackSources(t *testing.T, n int) []netip.Addr {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.2 and up are loopback addresses on Linux only, unless configured")
	}
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)})
	}
	return out
}

// remoteServer answers 200 and records, for each request, its key header
// (X-Key) and the IP it came from.
func remoteServer(t *testing.T) (url string, seen func() map[string]map[string]int) {
	t.Helper()
	var mu sync.Mutex
	by := map[string]map[string]int{} // key -> remote IP -> requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			t.Errorf("remote address %q: %v", r.RemoteAddr, err)
			return
		}
		k := r.Header.Get("X-Key")
		mu.Lock()
		defer mu.Unlock()
		if by[k] == nil {
			by[k] = map[string]int{}
		}
		by[k][ap.Addr().String()]++
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() map[string]map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]map[string]int, len(by))
		for k, m := range by {
			out[k] = make(map[string]int, len(m))
			for ip, n := range m {
				out[k][ip] = n
			}
		}
		return out
	}
}

// TestSourceAddrsDo: each key leaves from the source SourceIndex gives
// it, which Response.Source names and the server sees; each source keeps
// its own connection, and Check opens one from every source.
func TestSourceAddrsDo(t *testing.T) {
	srcs := loopbackSources(t, 3)
	for _, client := range clients {
		t.Run(strings.ReplaceAll(client, "/", "-"), func(t *testing.T) {
			url, seen := remoteServer(t)
			c, err := httpexec.New(httpexec.Config{URL: url, Client: client, KeyHeader: "X-Key", SourceAddrs: srcs, Connections: 3, Timeout: wait})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Check(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(c.Sources(), ","); got != "127.0.0.2,127.0.0.3,127.0.0.4" {
				t.Errorf("Sources() = %s", got)
			}
			for range 3 {
				for i := range 6 {
					key := "k" + strconv.Itoa(i)
					want := srcs[httpexec.SourceIndex(key, 3)].String()
					if r := c.Do(key, false); r.Status != 200 || r.Source != want {
						t.Fatalf("%s: %+v, want 200 from %s", key, r, want)
					}
				}
			}
			got := seen()
			used := map[string]bool{}
			for i := range 6 {
				key := "k" + strconv.Itoa(i)
				want := srcs[i%3].String()
				if len(got[key]) != 1 || got[key][want] != 3 {
					t.Errorf("%s came from %v, want 3 times from %s only", key, got[key], want)
				}
				used[want] = true
			}
			if len(used) != 3 {
				t.Errorf("sources used: %v", used)
			}
			// One after the other: one connection per source, kept.
			if got := c.Dials(); got != 3 {
				t.Errorf("%d dials, want one per source", got)
			}
		})
	}
	// Without SourceAddrs the system chooses, and Source is not looked up.
	url, _ := remoteServer(t)
	c, err := httpexec.New(httpexec.Config{URL: url, KeyHeader: "X-Key", Timeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := c.Do("k1", false); r.Status != 200 || r.Source != "" || c.Sources() != nil {
		t.Errorf("without SourceAddrs: %+v, sources %v", r, c.Sources())
	}
}

// TestCheckSources: Check fails on the first source that cannot reach
// the server, naming it and why, and connects to nothing for a source
// that cannot be bound.
func TestCheckSources(t *testing.T) {
	srcs := loopbackSources(t, 2)
	url, _ := recordingServer(t)
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name  string
		url   string
		addrs []netip.Addr
		want  []string // in the error; nil for none
	}{
		{name: "loopback", url: url, addrs: srcs},
		// TEST-NET-1 (RFC 5737): not an address of this host.
		{name: "not of this host", url: url, addrs: []netip.Addr{srcs[0], a("192.0.2.1"), srcs[1]},
			want: []string{"from source address 192.0.2.1", "cannot assign requested address"}},
		{name: "wrong family", url: url, addrs: []netip.Addr{a("::1")},
			want: []string{"from source address ::1", "an IPv6 source cannot reach 127.0.0.1, which has no IPv6 address"}},
		{name: "server refuses", url: closedPort(t), addrs: srcs,
			want: []string{"from source address 127.0.0.2", "connection refused"}},
	} {
		for _, client := range clients {
			c, err := httpexec.New(httpexec.Config{URL: tc.url, Client: client, SourceAddrs: tc.addrs, Timeout: wait})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Check(context.Background())
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("%s, %s: %v", tc.name, client, err)
			case tc.want != nil && (err == nil || !errors.Is(err, httpexec.ErrUnreachable) || strings.Contains(err.Error(), "\n")):
				t.Errorf("%s, %s: %v, want one line wrapping ErrUnreachable", tc.name, client, err)
			case tc.want != nil:
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s, %s: %q lacks %q", tc.name, client, err, w)
					}
				}
			}
			if c.Dials() != 0 {
				t.Errorf("%s, %s: Check counted %d dials", tc.name, client, c.Dials())
			}
			c.Close()
		}
	}
}
