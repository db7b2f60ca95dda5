package main

import (
	"fmt"
	"io"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
)

// printWarnings says each of ws on a line of its own to w, as the page
// says it (report.WarningText), naming the flags that would help.
func printWarnings(w io.Writer, ws []result.Warning) {
	for _, x := range ws {
		fmt.Fprintf(w, "warning: %s\n", report.WarningText(x))
	}
}

// probeWarnings are the warnings of a probe's runs but lateness and the
// missing policy: its bursts are late by design, the fit reads the
// instants requests were really sent, and the policy is what it finds.
func probeWarnings(runs []result.Run) []result.Warning {
	var out []result.Warning
	for _, w := range result.Warnings(runs) {
		if w.Kind != result.WarnLate && w.Kind != result.WarnNoPolicy {
			out = append(out, w)
		}
	}
	return out
}
