// Package outdir decides where a command writes: an output folder given
// by the user, checked before anything runs (absent, empty, or holding
// an earlier output of the same kind, and writable), or a fresh
// results/<timestamp>-<name>; and, when a run folder's new result is
// written, which of the earlier result's files to remove. A command that
// fails before it runs leaves nothing behind (Dir.Abandon).
package outdir

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

// ResultFile is the name of a run folder's result.
const ResultFile = "result.json"

// Kind is what a command writes into an output folder, and so what an
// existing folder must already hold for the command to write there.
type Kind int

// The kinds of output folder: Run, Scenario, Compare.
const (
	Run      Kind = iota // result.json and its report
	Scenario             // one run folder per cell
	Compare              // compare.html and its charts
)

// Error is a folder Prepare refuses: bad input, with nothing written.
// Its text starts with the folder's path.
type Error struct {
	msg string
}

// Error implements error.
func (e *Error) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &Error{fmt.Sprintf(format, args...)}
}

// Dir is an output folder, checked by Prepare: absent (then made),
// empty, or holding an earlier output of the same kind (which the
// command then replaces, file by file, touching nothing else), and
// writable. Not safe for concurrent use.
type Dir struct {
	// Path is the folder, as given or claimed.
	Path    string
	created []string       // folders the check made, innermost last
	old     *result.Result // the earlier result of a run folder, if any
}

// Prepare checks the folder dir, or when dir is "" claims a fresh
// results/<timestamp>-<name> (with a -2, -3, ... suffix when a run
// started in the same second took it; os.Mkdir fails on a folder that
// exists, so two runs never share one). A folder it refuses is an
// *Error; on any error nothing is left behind.
func Prepare(dir, name string, kind Kind) (*Dir, error) {
	if dir == "" {
		return claimDefault(name)
	}
	o := &Dir{Path: dir}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := o.mkdirAll(dir); err != nil {
			o.Abandon()
			return nil, refuse("%s: %v", dir, err)
		}
	case err != nil:
		return nil, refuse("%s: %v", dir, err)
	case !info.IsDir():
		return nil, refuse("%s is a file, not a folder", dir)
	default:
		if err := o.checkExisting(kind); err != nil {
			return nil, err
		}
	}
	if err := checkWritable(dir); err != nil {
		o.Abandon()
		return nil, refuse("%s is not writable: %v", dir, err)
	}
	return o, nil
}

// claimDefault makes results/<timestamp>-<name>[-N].
func claimDefault(name string) (*Dir, error) {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == ':' || r == '\\' || r == '.' {
			return '-'
		}
		return r
	}, filepath.Base(name))
	o := &Dir{}
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
			o.Path = dir
			o.created = append(o.created, dir)
			return o, nil
		}
		if !errors.Is(err, fs.ErrExist) || n == 1000 {
			o.Abandon()
			return nil, fmt.Errorf("results: %w", err)
		}
	}
}

// mkdirAll is os.MkdirAll that remembers the folders it made.
func (o *Dir) mkdirAll(dir string) error {
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
func (o *Dir) checkExisting(kind Kind) error {
	entries, err := os.ReadDir(o.Path)
	if err != nil {
		return refuse("%s: %v", o.Path, err)
	}
	if len(entries) == 0 {
		return nil
	}
	notOurs := func(what string) error {
		return refuse("%s is not empty and holds no %s: choose a new folder", o.Path, what)
	}
	switch kind {
	case Compare:
		if _, err := os.Stat(filepath.Join(o.Path, report.CompareFile)); err != nil {
			return notOurs("ratebench comparison")
		}
	case Scenario:
		for _, e := range entries {
			if e.IsDir() && isResultFile(filepath.Join(o.Path, e.Name(), ResultFile)) {
				return nil
			}
		}
		return notOurs("ratebench scenario results")
	default:
		old, err := result.ReadFile(filepath.Join(o.Path, ResultFile))
		if err != nil {
			return notOurs("ratebench result")
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

// Abandon removes the folders Prepare made, innermost first, if they are
// still empty: the command did not run.
func (o *Dir) Abandon() {
	for i := len(o.created) - 1; i >= 0; i-- {
		if os.Remove(o.created[i]) != nil {
			return // not empty, or gone
		}
	}
	o.created = nil
}

// Sub prepares the folder name inside o as a run folder (see Prepare).
func (o *Dir) Sub(name string) (*Dir, error) {
	return Prepare(filepath.Join(o.Path, name), "", Run)
}

// WriteResult writes res as the folder's result.json, then removes the
// earlier result's report, trace and fit (its page, charts, CSV and
// .hgrm files, requests.csv, fit.json), which no longer describe it: the
// report and trace of res are for the caller to put in place next.
func (o *Dir) WriteResult(res *result.Result) error {
	if err := res.WriteFile(filepath.Join(o.Path, ResultFile)); err != nil {
		return err
	}
	if o.old == nil {
		return nil
	}
	for _, f := range append(report.Files(o.old), tracefile.Name, fit.File) {
		if err := os.Remove(filepath.Join(o.Path, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	o.old = nil
	return nil
}

// Resolve returns the absolute path of p with every symbolic link of its
// longest existing prefix resolved; the part that does not exist yet is
// appended as written.
func Resolve(p string) (string, error) {
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

// Within reports whether path p lies inside folder dir, both resolved
// (see Resolve).
func Within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// WriteFit writes the fit f as dir's fit.json and, when res is not nil,
// res as its result.json beside it: both are written to temporary names
// first and then renamed, so that the folder never holds a verdict in
// one and not the other.
func WriteFit(dir string, f *fit.Result, res *result.Result) error {
	if res == nil {
		return f.WriteFile(dir)
	}
	tmp, err := os.MkdirTemp(dir, ".fit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := f.WriteFile(tmp); err != nil {
		return err
	}
	if err := res.WriteFile(filepath.Join(tmp, ResultFile)); err != nil {
		return err
	}
	for _, name := range []string{ResultFile, fit.File} {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// CompareDir is where a comparison of the folders a and b goes by
// default: compare-<A>-vs-<B> in a's parent folder, beside the inputs
// rather than inside one. A folder named "." or ".." is named by its
// absolute path.
func CompareDir(a, b string) string {
	absolute := func(p string) string {
		p = filepath.Clean(p)
		if base := filepath.Base(p); base == "." || base == ".." {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
		return p
	}
	a, b = absolute(a), absolute(b)
	return filepath.Join(filepath.Dir(a), "compare-"+filepath.Base(a)+"-vs-"+filepath.Base(b))
}
