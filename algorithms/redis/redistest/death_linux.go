package redistest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill the server when the test process
// dies, so that a crashed or killed test leaves no server behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// Pause stops the server's process (SIGSTOP): it holds its connections
// and answers nothing, so calls time out, until Resume.
func (s *Server) Pause() error {
	if s.cmd == nil {
		return errNotRunning
	}
	return s.cmd.Process.Signal(syscall.SIGSTOP)
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error {
	if s.cmd == nil {
		return errNotRunning
	}
	return s.cmd.Process.Signal(syscall.SIGCONT)
}
