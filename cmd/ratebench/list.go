package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/workload"
)

func (e *env) listCommand() *command {
	c := &command{name: "list", summary: "list algorithms, peers and workloads with their theory",
		examples: []string{"ratebench list", "ratebench list | grep bucket      # the buckets and their worst case in any span W"},
		noArgs:   true, fs: flag.NewFlagSet("list", flag.ContinueOnError)}
	c.run = func(_ context.Context, args []string) error {
		tw := tabwriter.NewWriter(e.stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ALGORITHM\tWORST CASE IN ANY SPAN W\tDESCRIPTION")
		for _, a := range all.Entries() {
			name := a.Name
			if a.Peer {
				name += " (peer)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", name, a.TheoryText, a.Describe)
		}
		fmt.Fprintln(tw, "\nWORKLOAD\t\tDESCRIPTION")
		for _, w := range workload.Names() {
			fmt.Fprintf(tw, "%s\t\t%s\n", w, workload.Describe(w))
		}
		return tw.Flush()
	}
	return c
}
