package outdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratebench/ratebench/bench/fit"
	"github.com/ratebench/ratebench/bench/result"
	"github.com/ratebench/ratebench/report"
	"github.com/ratebench/ratebench/report/outdir"
)

// writeFiles makes dir and writes the files named, each with its name as
// its content; a "result.json" is a valid result.
func writeFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	for _, n := range names {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755))
		if filepath.Base(n) == outdir.ResultFile {
			must(t, smallResult(1).WriteFile(filepath.Join(dir, n)))
			continue
		}
		must(t, os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644))
	}
}

// smallResult is a valid result of one run, of the seed given.
func smallResult(seed uint64) *result.Result {
	return &result.Result{Meta: result.NewMeta("sim", seed, nil), Policy: result.PolicyJSON{Limit: 10, WindowNS: 1e9, Burst: 10},
		Runs: []result.Run{{Algorithm: "gcra", Offered: 1, Admitted: 1}}}
}

// TestPrepare: a folder that is absent is made (however deep), an empty
// one or one holding an earlier output of the kind is taken, and any
// other is refused with an *Error that names it, nothing made.
func TestPrepare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string // in the folder before; nil: no folder
		file    bool     // the path is a file
		kind    outdir.Kind
		deep    bool   // the folder is two levels below any that exists
		wantErr string // in the *Error; "" to accept
	}{
		{name: "absent", kind: outdir.Run},
		{name: "absent and deep", kind: outdir.Run, deep: true},
		{name: "empty", files: []string{}, kind: outdir.Run},
		{name: "an earlier result", files: []string{outdir.ResultFile, "notes.txt"}, kind: outdir.Run},
		{name: "an earlier scenario", files: []string{"constant/" + outdir.ResultFile}, kind: outdir.Scenario},
		{name: "an earlier comparison", files: []string{report.CompareFile}, kind: outdir.Compare},
		{name: "a file", file: true, kind: outdir.Run, wantErr: "is a file, not a folder"},
		{name: "someone's photos as a run folder", files: []string{"cat.png"}, kind: outdir.Run, wantErr: "holds no ratebench result"},
		{name: "someone's photos as a scenario folder", files: []string{"cat.png"}, kind: outdir.Scenario, wantErr: "holds no ratebench scenario results"},
		{name: "a result as a comparison folder", files: []string{outdir.ResultFile}, kind: outdir.Compare, wantErr: "holds no ratebench comparison"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "out")
			if tc.deep {
				dir = filepath.Join(base, "a", "b", "out")
			}
			switch {
			case tc.file:
				must(t, os.WriteFile(dir, nil, 0o644))
			case tc.files != nil:
				writeFiles(t, dir, tc.files...)
			}
			o, err := outdir.Prepare(dir, "", tc.kind)
			if tc.wantErr != "" {
				var oe *outdir.Error
				if o != nil || !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), dir) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("dir %v, err %v: want an *Error naming %s with %q", o, err, dir, tc.wantErr)
				}
				return
			}
			if err != nil || o.Path != dir {
				t.Fatalf("dir %v, err %v: want %s", o, err, dir)
			}
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				t.Fatalf("%s is not a folder: %v", dir, err)
			}
			o.Abandon()
			_, err = os.Stat(filepath.Join(base, "a"))
			if _, derr := os.Stat(dir); (derr == nil) != (tc.files != nil) || tc.deep && err == nil {
				t.Errorf("after Abandon the folder exists: %v, the made parent %v; want only a folder that was there before", derr == nil, err == nil)
			}
		})
	}
}

// TestWriteResult: a new result in an earlier result's folder removes
// the earlier one's report files and trace, and leaves the user's own
// files alone.
func TestWriteResult(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	writeFiles(t, dir, outdir.ResultFile, report.HTMLFile, "requests.csv", "fit.json", "notes.txt")
	o, err := outdir.Prepare(dir, "", outdir.Run)
	must(t, err)
	must(t, o.WriteResult(smallResult(2)))
	entries, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"notes.txt", outdir.ResultFile}) {
		t.Errorf("the folder holds %q, want the user's notes and the new result", names)
	}
	res, err := result.ReadFile(filepath.Join(dir, outdir.ResultFile))
	if err != nil || res.Meta.Seed != 2 {
		t.Errorf("result.json: %v, seed %v; want the new result's", err, res)
	}
}

// TestDefaultFoldersAreUnique: two claims in the same second take two
// fresh folders under results/, stepping around folders that exist.
func TestDefaultFoldersAreUnique(t *testing.T) {
	t.Chdir(t.TempDir())
	// Take the names of this second and the next, as a run started just
	// before would have: the claims must step around them.
	now := time.Now()
	for _, at := range []time.Time{now, now.Add(time.Second)} {
		must(t, os.MkdirAll(filepath.Join("results", at.Format("20060102-150405")+"-poisson"), 0o755))
	}
	a, err := outdir.Prepare("", "poisson", outdir.Run)
	must(t, err)
	b, err := outdir.Prepare("", "replay:a/b.csv", outdir.Run)
	must(t, err)
	if a.Path == b.Path || !strings.HasSuffix(a.Path, "-poisson-2") || !strings.HasSuffix(b.Path, "-b-csv") {
		t.Fatalf("claimed %s and %s: want two fresh folders, the first with a -2 suffix, the second named for the file", a.Path, b.Path)
	}
}

// TestResolveWithin: a folder reached through a symbolic link or spelled
// with ".." resolves to the same path, and one inside another is Within
// it, whether it exists yet or not.
func TestResolveWithin(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	in := filepath.Join(base, "in")
	must(t, os.Mkdir(in, 0o755))
	link := filepath.Join(base, "link")
	must(t, os.Symlink(in, link))
	for _, tc := range []struct {
		name   string
		path   string
		want   string
		within bool // Within(in)
	}{
		{name: "the folder", path: in, want: in},
		{name: "through a link", path: link, want: in},
		{name: "spelled with ..", path: filepath.Join(in, "..", "in"), want: in},
		{name: "not yet made, inside through a link", path: filepath.Join(link, "x", "y"), want: filepath.Join(in, "x", "y"), within: true},
		{name: "a sibling with the same prefix", path: filepath.Join(base, "in2"), want: filepath.Join(base, "in2")},
	} {
		got, err := outdir.Resolve(tc.path)
		if err != nil || got != tc.want || outdir.Within(got, in) != tc.within {
			t.Errorf("%s: Resolve %q, %v, within %v; want %q, within %v", tc.name, got, err, outdir.Within(got, in), tc.want, tc.within)
		}
	}
}

// TestWriteFit: the fit alone, or the fit and the result it belongs
// with, land under their names and nothing else is left in the folder.
func TestWriteFit(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  *result.Result
		want []string // the folder's files after
	}{
		{name: "the fit alone", want: []string{"fit.json"}},
		{name: "the fit and its result", res: smallResult(3), want: []string{"fit.json", outdir.ResultFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, outdir.WriteFit(dir, &fit.Result{Requests: 42}, tc.res))
			entries, err := os.ReadDir(dir)
			must(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("the folder holds %q, want %q", names, tc.want)
			}
			f, err := fit.ReadResult(dir)
			if err != nil || f.Requests != 42 {
				t.Errorf("fit.json: %v, %+v; want the fit written", err, f)
			}
			if tc.res != nil {
				if res, err := result.ReadFile(filepath.Join(dir, outdir.ResultFile)); err != nil || res.Meta.Seed != 3 {
					t.Errorf("result.json: %v; want the result written", err)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCompareDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, a, b, want string
	}{
		{name: "siblings", a: "results/before", b: "results/after", want: filepath.Join("results", "compare-before-vs-after")},
		{name: "trailing slashes", a: "results/before/", b: "other/after/", want: filepath.Join("results", "compare-before-vs-after")},
		{name: "the current folder", a: ".", b: "../x", want: filepath.Join(filepath.Dir(wd), "compare-"+filepath.Base(wd)+"-vs-x")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := outdir.CompareDir(tc.a, tc.b); got != tc.want {
				t.Errorf("CompareDir(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
