package main

import (
	"errors"
	"flag"
	"strconv"
	"time"
)

// durationValue is a flag.Value for a time.Duration whose errors say what
// is wrong: flag's own says only "parse error", also for "-duration 10",
// where the unit is what is missing.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err == nil {
		*v.d = d
		return nil
	}
	if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
		return errors.New("a duration needs a unit, e.g. " + s + "s or " + s + "ms")
	}
	return errors.New("not a duration, e.g. 10s, 500ms or 1m30s")
}

// durationVar defines a duration flag on fs with the errors of
// durationValue.
func durationVar(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p}, name, usage)
}

// isSet reports whether the flag name was given on fs's command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
