//go:build !unix

package calibrate

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func interruptGroup(p *os.Process) { p.Signal(os.Interrupt) }

func killGroup(p *os.Process) { p.Kill() }
