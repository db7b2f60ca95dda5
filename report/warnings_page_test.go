package report

import (
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/result/resulttest"
)

// TestPageWarnings: the page says a result's warnings, records and the
// sentences of older files alike, in order.
func TestPageWarnings(t *testing.T) {
	r := resulttest.Fixture()
	r.Meta.Warnings = []result.Warning{
		{Kind: result.WarnDropped, Run: "gcra", N: 5, Of: 100, MaxInFlight: 7},
		{Kind: result.WarnText, Text: "an older sentence"},
	}
	page, err := renderHTML(r, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `<ul class="warn"><li>gcra: 5 of 100 arrivals (5.00%) dropped at -max-inflight 7</li><li>an older sentence</li></ul>`
	if !strings.Contains(string(page), want) {
		t.Errorf("report.html lacks %q", want)
	}
}
