//go:build !race

package deploy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLocal runs local.sh end to end once ratebench attack has -shard and
// -start-at.
func TestLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ratebench and attacks for a few seconds")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ratebench")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help, _ := exec.Command(bin, "attack", "-h").CombinedOutput()
	if !bytes.Contains(help, []byte("-shard")) || !bytes.Contains(help, []byte("-start-at")) {
		t.Skip("ratebench attack has no -shard and -start-at yet")
	}
	out := filepath.Join(dir, "run")
	cmd := exec.Command("bash", "local.sh", "-rate", "200", "-duration", "2s")
	cmd.Env = append(os.Environ(), "RATEBENCH="+bin, "OUT="+out, "N=2", "START_IN=2")
	if b, err := cmd.CombinedOutput(); err != nil {
		logs, _ := filepath.Glob(filepath.Join(out, "logs", "*"))
		for _, l := range logs {
			b = append(b, read(t, l)...)
		}
		t.Fatalf("local.sh: %v\n%s", err, b)
	}
	for _, f := range []string{"shard-0/result.json", "shard-1/requests.csv", "merged/result.json", "merged/report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
