package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/suggest"
)

// flagGroups are the headings of a command's -h, each with the flags it
// holds; a command shows the groups it has flags in, in this order, and
// its other flags last.
var flagGroups = []struct {
	title string
	names []string
}{
	{"algorithms and policy", []string{"algos", "algo", "limit", "window", "burst", "cost"}},
	{"workload", []string{"workload", "scenario", "rate", "rate-end", "duration", "windows", "keys", "seed", "burst-size", "burst-every",
		"on", "off", "zipf-s", "align", "edge-offset", "key-header", "method"}},
	{"engine", []string{"mode", "workers", "connections", "cpus", "max-inflight", "backend", "backend-timeout", "fail-open", "prefix",
		"redis-time", "replicas", "shard", "start-at", "clock-error", "max-start-lag", "client"}},
	{"bounds", []string{"max-arrivals", "max-keys", "on-full", "max-requests", "max-duration"}},
	{"output", []string{"out", "no-report", "trace", "no-trace", "check", "expect", "progress"}},
}

// aliasUsage is the usage of a flag that is another's second name (-algo
// for -algos): -h lists it on its twin's line.
const aliasUsage = "same as -"

// aliasVar defines name as a second name of the flag twin, already
// defined on fs.
func aliasVar(fs *flag.FlagSet, name, twin string) {
	fs.Var(fs.Lookup(twin).Value, name, aliasUsage+twin)
}

// printHelp writes c's help as the go command does: its usage line, what
// it does, examples, its flags by group, each with one default, and its
// notes.
func (c *command) printHelp(w io.Writer) {
	usage := c.usage
	if usage == "" {
		usage = "ratebench " + c.name + " [flags]"
	}
	fmt.Fprintf(w, "usage: %s\n\n%s: %s\n", usage, c.name, c.summary)
	if len(c.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, x := range c.examples {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
	aliases := map[string]string{} // flag: its second name
	var flags []*flag.Flag
	c.fs.VisitAll(func(f *flag.Flag) {
		if twin, ok := strings.CutPrefix(f.Usage, aliasUsage); ok {
			aliases[twin] = f.Name
			return
		}
		flags = append(flags, f)
	})
	shown := map[string]bool{}
	group := func(title string, fs []*flag.Flag) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, f := range fs {
			printFlag(w, f, aliases[f.Name])
			shown[f.Name] = true
		}
	}
	for _, g := range flagGroups {
		var in []*flag.Flag
		for _, name := range g.names {
			if i := slices.IndexFunc(flags, func(f *flag.Flag) bool { return f.Name == name }); i >= 0 {
				in = append(in, flags[i])
			}
		}
		group(g.title, in)
	}
	var rest []*flag.Flag
	for _, f := range flags {
		if !shown[f.Name] {
			rest = append(rest, f)
		}
	}
	title := "other flags"
	if len(shown) == 0 {
		title = "flags"
	}
	group(title, rest)
	if len(c.notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range c.notes {
			fmt.Fprintln(w, n)
		}
	}
}

// printFlag writes one flag as flag.PrintDefaults does, but with one
// default: the usage's own "(default: ...)" when it has one, else the
// flag's non-zero default.
func printFlag(w io.Writer, f *flag.Flag, alias string) {
	typ, usage := flag.UnquoteUsage(f)
	if _, ok := f.Value.(durationValue); ok {
		typ = "duration"
	}
	line := "  -" + f.Name
	if alias != "" {
		line += ", -" + alias
	}
	if typ != "" {
		line += " " + typ
	}
	if !strings.Contains(usage, "(default") && !slices.Contains([]string{"", "0", "0s", "false"}, f.DefValue) {
		if typ == "string" {
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		} else {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
	}
	fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
}

// flagError is err from parsing fs's flags in the user's words: an
// unknown flag gets the closest names fs has.
func flagError(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	hint := suggest.DidYouMean(name, names)
	if hint != "" {
		hint = strings.ReplaceAll(strings.ReplaceAll(hint, "mean ", "mean -"), " or ", " or -")
	}
	return fmt.Errorf("unknown flag -%s%s (-h lists the flags)", name, hint)
}

// lookupCommand returns the command called name, in any case, or an
// error with the closest names.
func (e *env) lookupCommand(name string) (*command, error) {
	cs := e.commands()
	names := make([]string, len(cs))
	for i, c := range cs {
		if strings.EqualFold(c.name, name) {
			return c, nil
		}
		names[i] = c.name
	}
	return nil, fmt.Errorf("unknown command %q%s; commands: %s (ratebench help lists them)", name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
}

// helpCommand is `ratebench help [CMD]`: the commands, or CMD's -h.
func (e *env) helpCommand() *command {
	c := &command{name: "help", summary: "show the commands, or with a command's name its usage, examples and flags",
		usage: "ratebench help [COMMAND]", examples: []string{"ratebench help", "ratebench help probe"},
		fs: flag.NewFlagSet("help", flag.ContinueOnError)}
	c.run = func(_ context.Context, args []string) error {
		switch len(args) {
		case 0:
			e.help()
			return nil
		case 1:
			cmd, err := e.lookupCommand(args[0])
			if err != nil {
				return usageError{err}
			}
			cmd.printHelp(e.stdout)
			return nil
		}
		return usagef("want at most one command: %s", c.usage)
	}
	return c
}

// versionCommand is `ratebench version`: the module version and the
// commit it was built from, read from the build info.
func (e *env) versionCommand() *command {
	c := &command{name: "version", summary: "print ratebench's version, the commit it was built from and the Go that built it",
		examples: []string{"ratebench version"},
		noArgs:   true, fs: flag.NewFlagSet("version", flag.ContinueOnError)}
	c.run = func(_ context.Context, args []string) error {
		info, ok := debug.ReadBuildInfo()
		if !ok {
			return errors.New("this binary holds no build information")
		}
		fmt.Fprintln(e.stdout, versionLine(info))
		return nil
	}
	return c
}

// versionLine is "ratebench VERSION (commit C, DATE[, modified]) GO":
// VERSION the module's (result.json's and "(devel)" for a build from a
// checkout), the
// commit as git stamps it into `go build` from a checkout ("commit
// unknown" for go run and go test, which do not).
func versionLine(info *debug.BuildInfo) string {
	setting := func(key string) string {
		for _, s := range info.Settings {
			if s.Key == key {
				return s.Value
			}
		}
		return ""
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = version() + " (devel)" // a build from a checkout: result.json's version
	}
	commit := "commit unknown"
	if rev := setting("vcs.revision"); rev != "" {
		commit = "commit " + rev[:min(12, len(rev))]
		if t := setting("vcs.time"); t != "" {
			commit += ", " + t
		}
		if setting("vcs.modified") == "true" {
			commit += ", modified"
		}
	}
	return fmt.Sprintf("ratebench %s (%s) %s", v, commit, info.GoVersion)
}

// version is ratebench's version as result.json records it.
func version() string { return result.NewMeta("", 0, nil).Version }
