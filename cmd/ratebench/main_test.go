package main

import (
	"flag"
	"os"
	"testing"
)

// corpusParallel is how many parallel tests run at once unless -parallel
// says otherwise, on any machine: the corpus's probes (the package's only
// parallel tests) spend most of their time pacing and idle, so two share
// two cores; with four, each probe's fit (seconds of both cores) blurred
// the others' timing past their bounds.
const corpusParallel = "2"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", corpusParallel)
	}
	os.Exit(m.Run())
}
