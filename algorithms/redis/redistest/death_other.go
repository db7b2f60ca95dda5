//go:build !linux

package redistest

import (
	"errors"
	"os/exec"
)

// setDeathSignal does nothing off Linux: Stop must be called.
func setDeathSignal(*exec.Cmd) {}

// Pause is only implemented on Linux.
func (s *Server) Pause() error { return errUnsupported }

// Resume is only implemented on Linux.
func (s *Server) Resume() error { return errUnsupported }

var errUnsupported = errors.New("redistest: pause is only implemented on linux")
