package resulttest

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ratebench/ratebench/bench/result"
)

// flag matches a command-line flag, as "-max-inflight".
var flag = regexp.MustCompile(`(^|\s)-[a-z]`)

// Sentences returns the values of w's string fields that read as
// sentences (four words or more) or name a flag: a record holds numbers
// and names, and package report phrases them. FirstError, the backend's
// own words, and Text, an older file's sentence, are not looked at.
func Sentences(w result.Warning) []string {
	var out []string
	check := func(s string) {
		if len(strings.Fields(s)) >= 4 || flag.MatchString(s) {
			out = append(out, s)
		}
	}
	v := reflect.ValueOf(w)
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if name == "FirstError" || name == "Text" {
			continue
		}
		switch {
		case f.Kind() == reflect.String:
			check(f.String())
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for j := range f.Len() {
				check(f.Index(j).String())
			}
		}
	}
	return out
}

// SourceMatches returns, for each non-test Go file of the current folder
// (a package's own, when called from its tests), the first match of re,
// as "file: match"; none when no file matches. A test fails on any.
func SourceMatches(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := re.Find(data); m != nil {
			found = append(found, f+": "+string(m))
		}
	}
	return found
}

// FlagName matches a string literal that names one of the command line's
// flags: only the command line knows them, so the engines and result.json
// state what happened and leave the advice to it.
var FlagName = regexp.MustCompile(`"[^"]*-(rate|workers|max-inflight|connections|backend-timeout|on-full|max-keys)\b`)
