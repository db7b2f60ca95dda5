//go:build !linux

package corpus

import (
	"os"
	"os/exec"
)

// haproxySoftStop is the signal that stops HAProxy: outside Linux, Kill,
// for SIGUSR1 (its graceful stop) is not on every system.
var haproxySoftStop os.Signal = os.Kill

// setProcAttr leaves cmd as it is: outside Linux a child process has no
// group of its own, and outlives a test that is killed.
func setProcAttr(cmd *exec.Cmd) {}

// killGroup kills cmd's process (its workers, if any, are left).
func killGroup(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
}
