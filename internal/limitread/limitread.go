// Package limitread opens input files so that reading them can neither wait forever nor fill
// memory. Open refuses anything but a regular file without blocking on it: a named pipe (whose
// open waits for a writer), a terminal or other device (/dev/tty waits for typing, /dev/zero
// never ends), a socket or a directory. Both Open and ReadFile stop at a size bound, so a file
// far larger than its kind ever is fails with an error naming the path instead.
package limitread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is what Open's error wraps when the path names something other than a
// regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLong is what a read's error wraps when the input is longer than its bound.
var ErrTooLong = errors.New("longer than such a file is")

// File is an open input file that fails a read past its size bound.
type File struct {
	f    *os.File
	path string
	left int64 // bytes that may still be read
	max  int64
}

// Open opens path for reading. The open itself never waits (O_NONBLOCK, then fstat on the
// open descriptor, so the check and the open see the same file): a path that is not a
// regular file is an error "PATH: not a regular file (a named pipe)", and so is a regular
// file larger than max bytes. Reads fail with ErrTooLong once more than max bytes have been
// read (a file that grows while it is read).
func Open(path string, max int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s): gpusim reads files, not pipes, devices or sockets", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > max {
		f.Close()
		return nil, tooLong(path, max)
	}
	return &File{f: f, path: path, left: max, max: max}, nil
}

func tooLong(path string, max int64) error {
	return fmt.Errorf("%s: %w: more than %d bytes", path, ErrTooLong, max)
}

// kind names a file mode that is not a regular file's.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}

// Read reads from the file; past max bytes it fails with ErrTooLong.
func (f *File) Read(p []byte) (int, error) {
	if f.left < 0 {
		return 0, tooLong(f.path, f.max)
	}
	if int64(len(p)) > f.left+1 {
		p = p[:f.left+1]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	if f.left < 0 {
		return n - 1, tooLong(f.path, f.max)
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Name is the path the file was opened as.
func (f *File) Name() string { return f.path }

// ReadFile reads path as os.ReadFile does, through Open: a path that is not a regular file,
// or a file longer than max bytes, is an error naming the path.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
