//go:build unix

package calibrate

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in its own process group, so that a terminal's Ctrl-C
// reaches gpusim alone and gpusim forwards exactly one SIGINT to the job and its children.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func interruptGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGINT) }

func killGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }
