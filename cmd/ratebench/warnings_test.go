package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// TestProbeWarnings: a probe keeps its runs' warnings but lateness, late
// by design, and the missing policy, which is what it looks for.
func TestProbeWarnings(t *testing.T) {
	runs := []result.Run{{Algorithm: "http", Offered: 10, Errors: 3,
		Live: &result.LiveStats{LatePct: 50, Dropped: 2, Scheduled: 10},
		HTTP: &result.HTTPStats{PolicySource: result.PolicyNone}}}
	want := []result.Warning{
		{Kind: result.WarnDropped, Run: "http", HTTP: true, N: 2, Of: 10},
		{Kind: result.WarnFailed, Run: "http", HTTP: true, N: 3, Of: 10},
	}
	if got := probeWarnings(runs); !reflect.DeepEqual(got, want) {
		t.Errorf("probeWarnings:\n got %+v\nwant %+v", got, want)
	}
}

// TestPrintWarnings: the terminal says each warning on a line of its own,
// as the page does, flags named.
func TestPrintWarnings(t *testing.T) {
	var b strings.Builder
	printWarnings(&b, []result.Warning{
		{Kind: result.WarnTableFull, Run: "gcra", N: 9},
		{Kind: result.WarnText, Text: "an older sentence"},
	})
	want := "warning: gcra: 9 requests of new keys were rejected because the key table was full of keys it could not forget; raise -max-keys\n" +
		"warning: an older sentence\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
