package result

import (
	"runtime"
	"runtime/debug"
	"time"
)

// version is ratebench's version as written to result.json, unless the
// build says otherwise.
const version = "0.1.0"

// NewMeta describes this process for result.json.
func NewMeta(mode string, seed uint64, args []string) Meta {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return Meta{
		Version: v, Go: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Seed: seed, Mode: mode, StartedAt: time.Now().UTC(), Args: args,
	}
}
