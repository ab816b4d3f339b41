//go:build !unix

package limitread

// nonBlock is 0 where open has no O_NONBLOCK; Open's fstat check still refuses what is not
// a regular file.
const nonBlock = 0
