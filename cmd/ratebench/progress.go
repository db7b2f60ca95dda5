package main

import (
	"flag"
	"slices"
	"strings"

	"github.com/ratebench/ratebench/report/bars"
)

// progressFlag is -progress: how a run shows its progress on standard
// error (see bars.New).
type progressFlag struct{ mode string }

func (p *progressFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&p.mode, "progress", "auto", "progress on stderr: auto (bars on a terminal, else a line every few seconds), bars, lines "+
		"(for a terminal that another process writes to, e.g. a serve in the background), or off")
}

// check refuses a -progress that is none of bars.Modes.
func (p progressFlag) check() error {
	if !slices.Contains(bars.Modes, p.mode) {
		return usagef("-progress %q: want %s", p.mode, strings.Join(bars.Modes, ", "))
	}
	return nil
}
