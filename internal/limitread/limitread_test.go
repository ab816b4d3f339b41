package limitread

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(path, 5); err != nil || string(got) != "12345" {
		t.Errorf("ReadFile(5 bytes, max 5) = %q, %v", got, err)
	}
	if _, err := ReadFile(path, 4); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "more than 4 bytes") {
		t.Errorf("ReadFile(5 bytes, max 4) = %v, want 'more than 4 bytes'", err)
	}
}

// A file that grows past the bound after Open is cut off at the bound (the size Open saw
// was within it).
func TestReadGrowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("123"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, []byte("123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if !errors.Is(err, ErrTooLong) || len(got) > 4 {
		t.Errorf("read of a file grown to 9 bytes, max 4: %q, %v; want at most 4 bytes and ErrTooLong", got, err)
	}
}

// A named pipe with no writer, a device, a socket and a directory are refused at once, by
// kind (a named pipe blocked in open(2) forever, /dev/zero read until the bound).
func TestOpenRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ path, want string }{
		{fifo, fifo + ": not a regular file (a named pipe)"},
		{"/dev/zero", "/dev/zero: not a regular file (a character device)"},
		{dir, dir + ": not a regular file (a directory)"},
		{sock, "no such device or address"}, // open(2) refuses a socket itself: ENXIO
	} {
		if _, err := os.Stat(tc.path); err != nil {
			continue // no /dev/zero here
		}
		f, err := Open(tc.path, 1<<20)
		if err == nil {
			f.Close()
			t.Errorf("Open(%s) succeeded", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s) = %v, want %q", tc.path, err, tc.want)
		}
		if _, err := ReadFile(tc.path, 1<<20); err == nil {
			t.Errorf("ReadFile(%s) succeeded", tc.path)
		}
	}
}
