//go:build unix

package limitread

import "syscall"

// nonBlock opens a named pipe at once instead of waiting for a writer (open(2), O_NONBLOCK).
const nonBlock = syscall.O_NONBLOCK
