// Package limitread reads a whole input file up to a size bound, so that a path naming a
// device that never ends (/dev/zero, /dev/full) or a file far larger than its kind ever is
// fails with an error instead of filling memory.
package limitread

import (
	"fmt"
	"io"
	"os"
)

// ReadFile reads path as os.ReadFile does, but at most max bytes: a longer input (or one that
// never ends) is an error naming the path and the bound.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: longer than %d bytes, more than such a file holds", path, max)
	}
	return data, nil
}
