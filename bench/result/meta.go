package result

import (
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

// version is ratebench's version as written to result.json, unless the
// build says otherwise.
const version = "0.1.0"

// Program is the name result.json records for the program in Meta.Args.
const Program = "ratebench"

// NewMeta describes this process for result.json; args are its command
// line (os.Args), recorded by RecordedArgs.
func NewMeta(mode string, seed uint64, args []string) Meta {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return Meta{
		Version: v, Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Seed: seed, Mode: mode, StartedAt: time.Now().UTC(), Args: RecordedArgs(args),
	}
}

// RecordedArgs is a command line (os.Args) as result.json records it: the
// program as Program, whatever path it ran from (a temporary build, or go
// run's build cache), and the arguments as given, relative paths left
// relative. args is not changed; nil stays nil.
func RecordedArgs(args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := slices.Clone(args)
	out[0] = Program
	return out
}
