package resulttest

import (
	"reflect"
	"regexp"
	"strings"

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
