package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Write writes write's output to path. A regular file (or a path that does not exist yet) is
// written atomically: the output streams to a temporary file next to it, which is renamed over
// path once complete, so a reader never sees half of it and a failed or interrupted write
// leaves the old content. A symbolic link is followed: its target is written the same way and
// the link stays. Anything else — a FIFO, a device such as /dev/null or /dev/stdout, a socket
// — cannot be replaced by a rename without destroying what it is, so it is opened and written
// through; a FIFO that no process reads is an error (ErrNoReader), not a wait for a reader.
// Every error says "write PATH: ...".
func Write(path string, write func(io.Writer) error) error {
	target, err := resolve(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	switch fi, err := os.Stat(target); {
	case err == nil && fi.IsDir():
		return fmt.Errorf("write %s: is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		return through(path, target, fi.Mode(), write)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := atomic(target, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// resolve follows path's symbolic links to the file they name; a dangling link names the
// file it would create.
func resolve(path string) (string, error) {
	for range 40 { // Linux's MAXSYMLINKS
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", errors.New("too many levels of symbolic links")
}

// ErrNoReader is what Write's error wraps for a named pipe that no process is reading.
var ErrNoReader = errors.New("a named pipe with no reader (gpusim does not wait for one)")

func through(path, target string, mode fs.FileMode, write func(io.Writer) error) error {
	flag := os.O_WRONLY | os.O_TRUNC
	if mode&fs.ModeNamedPipe != 0 {
		// open(2) of a pipe for writing waits for a reader, forever and deaf to Ctrl-C if none
		// comes; O_NONBLOCK fails at once instead (ENXIO) and writes to one that is read.
		flag |= nonBlock
	}
	f, err := os.OpenFile(target, flag, 0)
	if errors.Is(err, syscall.ENXIO) && mode&fs.ModeNamedPipe != 0 {
		return fmt.Errorf("write %s: %w", path, ErrNoReader)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = write(bare{f})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func atomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	// os.CreateTemp makes the file 0600; written results are meant to be read by others.
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := write(bare{tmp}); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// bare drops the file name from write errors (an *fs.PathError naming the temporary file or
// repeating the path): Write names the path once.
type bare struct{ f *os.File }

func (b bare) Write(p []byte) (int, error) {
	n, err := b.f.Write(p)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return n, err
}

// WriteBytes writes data to path as Write does.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}
