package result

import (
	"slices"
	"testing"
)

// TestRecordedArgs: result.json names the program "ratebench", not the
// path it ran from, and keeps the arguments as given.
func TestRecordedArgs(t *testing.T) {
	for _, program := range []string{
		"/root/.cache/go-build/ab/abcdef0123/exe/ratebench", // go run
		"/tmp/tmp.w9XaUqHKUa/ratebench",                     // a temporary build
		"./ratebench", "ratebench", "rb",
	} {
		args := []string{program, "compare", "-out", "results/attack-vs-live", "live", "../results/attack"}
		m := NewMeta("sim", 1, args)
		want := []string{"ratebench", "compare", "-out", "results/attack-vs-live", "live", "../results/attack"}
		if !slices.Equal(m.Args, want) {
			t.Errorf("NewMeta(%q).Args = %q, want %q", args, m.Args, want)
		}
		if args[0] != program {
			t.Errorf("NewMeta changed its argument: %q", args)
		}
	}
	if got := RecordedArgs(nil); got != nil {
		t.Errorf("RecordedArgs(nil) = %q", got)
	}
}
