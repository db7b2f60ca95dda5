package corpus

import (
	"os"
	"os/exec"
	"syscall"
)

// haproxySoftStop is HAProxy's graceful stop: it stops listening,
// finishes the requests in hand and exits.
var haproxySoftStop os.Signal = syscall.SIGUSR1

// setProcAttr puts cmd in a process group of its own, so that a program
// that does not stop is killed with its workers, and has the kernel send
// it SIGTERM when the process that started it dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
