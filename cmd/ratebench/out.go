package main

import (
	"errors"

	"github.com/ratebench/ratebench/report/outdir"
)

// resultFile is the name of a run folder's result.
const resultFile = outdir.ResultFile

// The kinds of output folder.
const (
	runFolder      = outdir.Run
	scenarioFolder = outdir.Scenario
	compareFolder  = outdir.Compare
)

// outDir is an output folder, checked before a command runs.
type outDir = outdir.Dir

// prepareOut is outdir.Prepare, a folder it refuses a usage error naming
// -out: nothing has run, and nothing is left behind.
func prepareOut(dir, name string, kind outdir.Kind) (*outDir, error) {
	return outErr(outdir.Prepare(dir, name, kind))
}

// subOut prepares the run folder name inside o, as prepareOut does.
func subOut(o *outDir, name string) (*outDir, error) {
	return outErr(o.Sub(name))
}

func outErr(o *outDir, err error) (*outDir, error) {
	if oe := (*outdir.Error)(nil); errors.As(err, &oe) {
		return nil, usagef("-out %v", err)
	}
	return o, err
}
