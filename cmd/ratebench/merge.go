package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratebench/ratebench/bench/result"
)

func (e *env) mergeCommand() *command {
	c := &command{name: "merge", summary: "merge run folders made on several machines (sums, HDR merge) into -out and render it",
		fs: flag.NewFlagSet("merge", flag.ContinueOnError)}
	out := c.fs.String("out", "", "output folder (required; not one of the inputs, nor inside or above one)")
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
		inputs := make([]result.Input, len(dirs))
		for i, d := range dirs {
			if err := apart(d, *out); err != nil {
				return err
			}
			res, err := readResult(d)
			if err != nil {
				return err
			}
			inputs[i] = result.Input{Name: filepath.Clean(d), Result: res}
		}
		res, err := result.Merge(inputs)
		if err != nil {
			return usageError{err}
		}
		res.Meta.Args = e.args
		o, err := prepareOut(*out, "", runFolder)
		if err != nil {
			return err
		}
		return e.write(o, res, false)
	}
	return c
}

// apart refuses an output folder that is the input folder in, inside it
// or above it, however the two are written (symbolic links, "..", a
// relative path): writing there would overwrite or mix with the input.
func apart(in, out string) error {
	a, err := resolve(in)
	if err != nil {
		return usagef("%s: %v", in, err)
	}
	b, err := resolve(out)
	if err != nil {
		return usagef("-out %s: %v", out, err)
	}
	switch {
	case a == b:
		return usagef("-out %s is the input %s", out, in)
	case within(b, a):
		return usagef("-out %s is inside the input %s", out, in)
	case within(a, b):
		return usagef("-out %s holds the input %s", out, in)
	}
	return nil
}

// resolve returns the absolute path of p with every symbolic link of its
// longest existing prefix resolved; the part that does not exist yet is
// appended as written.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		} else if !os.IsNotExist(err) {
			return "", err
		}
		if filepath.Dir(dir) == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within reports whether path p lies inside folder dir (both resolved).
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
