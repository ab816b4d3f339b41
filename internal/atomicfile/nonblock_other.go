//go:build !unix

package atomicfile

// nonBlock is 0 where open has no O_NONBLOCK.
const nonBlock = 0
