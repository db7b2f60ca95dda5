package bench_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoHeavyDeps: a program that imports bench to drive its own limiter
// pulls in no backend client, no scenario format and no package testing.
func TestNoHeavyDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool to list the imports with: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"redis", "sqlite", "yaml", "fasthttp"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("bench depends on %s", dep)
			}
		}
		if dep == "testing" {
			t.Errorf("bench depends on package testing")
		}
	}
}
