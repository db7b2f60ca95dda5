package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/bench/tracefile"
	"github.com/ratebench/ratebench/report"
)

// resultFile is the name of a run folder's result.
const resultFile = "result.json"

// folderKind is what a command writes into an output folder, and so what
// an existing folder must already hold for the command to write there.
type folderKind int

const (
	runFolder      folderKind = iota // result.json and its report
	scenarioFolder                   // one run folder per cell
	compareFolder                    // compare.html and its charts
)

// outDir is an output folder, checked before a command runs: absent,
// empty, or holding an earlier output of the same kind (which the command
// then replaces, file by file, touching nothing else), and writable.
type outDir struct {
	path    string
	created []string       // folders the check made, innermost last
	old     *result.Result // the earlier result of a run folder, if any
}

// prepareOut checks the folder given with -out, or when dir is "" claims a
// fresh results/<timestamp>-<name> (with a -2, -3, ... suffix when a run
// started in the same second took it). Errors are usage errors: nothing
// has run, and nothing is left behind.
func prepareOut(dir, name string, kind folderKind) (*outDir, error) {
	if dir == "" {
		return claimDefault(name)
	}
	o := &outDir{path: dir}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := o.mkdirAll(dir); err != nil {
			o.abandon()
			return nil, usagef("-out %s: %v", dir, err)
		}
	case err != nil:
		return nil, usagef("-out %s: %v", dir, err)
	case !info.IsDir():
		return nil, usagef("-out %s is a file, not a folder", dir)
	default:
		if err := o.checkExisting(kind); err != nil {
			return nil, err
		}
	}
	if err := checkWritable(dir); err != nil {
		o.abandon()
		return nil, usagef("-out %s is not writable: %v", dir, err)
	}
	return o, nil
}

// claimDefault makes results/<timestamp>-<name>[-N]: os.Mkdir fails on a
// folder that exists, so two runs never share one.
func claimDefault(name string) (*outDir, error) {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == ':' || r == '\\' || r == '.' {
			return '-'
		}
		return r
	}, filepath.Base(name))
	o := &outDir{}
	if err := o.mkdirAll("results"); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	base := filepath.Join("results", time.Now().Format("20060102-150405")+"-"+name)
	for n := 1; ; n++ {
		dir := base
		if n > 1 {
			dir += "-" + strconv.Itoa(n)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			o.path = dir
			o.created = append(o.created, dir)
			return o, nil
		}
		if !errors.Is(err, fs.ErrExist) || n == 1000 {
			o.abandon()
			return nil, fmt.Errorf("results: %w", err)
		}
	}
}

// mkdirAll is os.MkdirAll that remembers the folders it made.
func (o *outDir) mkdirAll(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	slices.Reverse(missing)
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		o.created = append(o.created, d)
	}
	return nil
}

// checkExisting accepts an existing folder that is empty or holds an
// earlier output of the kind, and refuses any other.
func (o *outDir) checkExisting(kind folderKind) error {
	entries, err := os.ReadDir(o.path)
	if err != nil {
		return usagef("-out %s: %v", o.path, err)
	}
	if len(entries) == 0 {
		return nil
	}
	refuse := func(what string) error {
		return usagef("-out %s is not empty and holds no %s: choose a new folder", o.path, what)
	}
	switch kind {
	case compareFolder:
		if _, err := os.Stat(filepath.Join(o.path, report.CompareFile)); err != nil {
			return refuse("ratebench comparison")
		}
	case scenarioFolder:
		for _, e := range entries {
			if e.IsDir() && isResultFile(filepath.Join(o.path, e.Name(), resultFile)) {
				return nil
			}
		}
		return refuse("ratebench scenario results")
	default:
		old, err := result.ReadFile(filepath.Join(o.path, resultFile))
		if err != nil {
			return refuse("ratebench result")
		}
		o.old = old
	}
	return nil
}

func isResultFile(path string) bool {
	_, err := result.ReadFile(path)
	return err == nil
}

// checkWritable creates and removes a file in dir.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".ratebench-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err // the path is in the caller's message
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// abandon removes the folders the check made, innermost first, if they
// are still empty: the command did not run.
func (o *outDir) abandon() {
	for i := len(o.created) - 1; i >= 0; i-- {
		if os.Remove(o.created[i]) != nil {
			return // not empty, or gone
		}
	}
	o.created = nil
}

// sub returns the folder name inside o, checked as a run folder.
func (o *outDir) sub(name string) (*outDir, error) {
	return prepareOut(filepath.Join(o.path, name), "", runFolder)
}

// writeResult writes res as the folder's result.json, then removes the
// earlier result's report, trace and fit (its page, charts, CSV and .hgrm
// files, requests.csv, fit.json), which no longer describe it: the report
// and trace of res are put in place next.
func (o *outDir) writeResult(res *result.Result) error {
	if err := res.WriteFile(filepath.Join(o.path, resultFile)); err != nil {
		return err
	}
	if o.old == nil {
		return nil
	}
	for _, f := range append(report.Files(o.old), tracefile.Name, fit.File) {
		if err := os.Remove(filepath.Join(o.path, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	o.old = nil
	return nil
}
