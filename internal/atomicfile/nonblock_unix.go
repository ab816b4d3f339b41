//go:build unix

package atomicfile

import "syscall"

// nonBlock opens a named pipe at once instead of waiting for a reader (open(2), O_NONBLOCK).
const nonBlock = syscall.O_NONBLOCK
