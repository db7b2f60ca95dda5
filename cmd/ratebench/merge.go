package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"

	"github.com/ratebench/ratebench/report"
)

func (e *env) mergeCommand() *command {
	c := &command{name: "merge", summary: "merge run folders made on several machines (sums, HDR merge) into -out and render it",
		fs: flag.NewFlagSet("merge", flag.ContinueOnError)}
	out := c.fs.String("out", "", "output folder (required; not one of the inputs)")
	c.run = func(ctx context.Context, args []string) error {
		dirs, err := positional(c.fs, args)
		if err != nil {
			return err
		}
		if len(dirs) < 2 {
			return usagef("want at least two folders: ratebench merge DIR... -out DIR")
		}
		if *out == "" {
			return usagef("-out is required: ratebench merge DIR... -out DIR")
		}
		inputs := make([]report.Input, len(dirs))
		for i, d := range dirs {
			if samePath(d, *out) {
				return usagef("-out %s is one of the inputs", *out)
			}
			res, err := readResult(d)
			if err != nil {
				return err
			}
			inputs[i] = report.Input{Name: filepath.Clean(d), Result: res}
		}
		res, err := report.Merge(inputs)
		if err != nil {
			return usageError{err}
		}
		res.Meta.Args = e.args
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		if err := res.WriteFile(filepath.Join(*out, "result.json")); err != nil {
			return err
		}
		return e.render(*out, res, false)
	}
	return c
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
