package main

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/ratebench/ratebench/bench/result"
)

func (e *env) reportCommand() *command {
	c := &command{name: "report", summary: "re-render DIR's charts, CSV, .hgrm and report.html from DIR/result.json, without re-running",
		fs: flag.NewFlagSet("report", flag.ContinueOnError)}
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		if len(dirs) != 1 {
			return usagef("want one folder: ratebench report DIR")
		}
		res, err := readResult(dirs[0])
		if err != nil {
			return err
		}
		return e.render(dirs[0], res)
	}
	return c
}

// readResult reads DIR/result.json; a missing or invalid one is a usage
// error of one line.
func readResult(dir string) (*result.Result, error) {
	res, err := result.ReadFile(filepath.Join(dir, "result.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s has no result.json", dir)
	case err != nil:
		return nil, usagef("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return res, nil
}

// positional parses fs over args, also after positional arguments (as in
// `merge A B -out C`), and returns the positional ones; everything after
// "--" is positional.
func positional(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err}
		}
		rest := fs.Args()
		if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}
