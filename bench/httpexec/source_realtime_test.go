//go:build !race

package httpexec_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/call"
	"github.com/ratebench/ratebench/bench/httpexec"
)

// sourceRows keeps, for each key, the sources its trace rows name.
type sourceRows map[string]map[string]int

func (s sourceRows) Row(r call.Row) {
	if s[r.Key] == nil {
		s[r.Key] = map[string]int{}
	}
	s[r.Key][r.Source]++
}

// TestExecutorSourceAddrs: an attack with 3 source addresses and 6 keys
// sends each key from one address, the one its number gives, and uses
// every address: the server sees it so, and the trace says it.
func TestExecutorSourceAddrs(t *testing.T) {
	srcs := loopbackSources(t, 3)
	eachClient(t, func(t *testing.T, client string) {
		url, seen := remoteServer(t)
		lcfg := constant(600, 200*time.Millisecond, 6)
		rows := sourceRows{}
		lcfg.Trace = rows
		run, _ := attack(t, httpexec.Config{URL: url, Client: client, KeyHeader: "X-Key", SourceAddrs: srcs, Connections: 6}, lcfg)
		if run.Offered != 120 || run.Admitted != 120 || run.KeyCount != 6 {
			t.Fatalf("offered %d, admitted %d, errors %v, %d keys; want 120 admitted over 6 keys", run.Offered, run.Admitted, run.ErrorKinds, run.KeyCount)
		}
		got := seen()
		perSource := map[string]int{}
		for i := range 6 {
			key := "k" + strconv.Itoa(i)
			want := srcs[i%3].String()
			if len(got[key]) != 1 || got[key][want] != 20 {
				t.Errorf("the server saw %s from %v, want 20 requests from %s only", key, got[key], want)
			}
			if len(rows[key]) != 1 || rows[key][want] != 20 {
				t.Errorf("the trace has %s from %v, want 20 rows from %s", key, rows[key], want)
			}
			perSource[want] += got[key][want]
		}
		if len(perSource) != 3 || perSource["127.0.0.2"] != 40 || perSource["127.0.0.3"] != 40 || perSource["127.0.0.4"] != 40 {
			t.Errorf("requests per source %v, want 40 from each of %v", perSource, srcs)
		}
		if len(got) != 6 || len(rows) != 6 {
			t.Errorf("keys at the server %v, in the trace %v", got, rows)
		}
	})
}
