package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		write    func(io.Writer) error
		wantErr  error
		wantData string
	}{
		{"ok", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"failed write keeps the old file", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, boom, "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Write error = %v, want %v", err, tc.wantErr)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.wantData {
				t.Errorf("content = %q, want %q", got, tc.wantData)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fi.Mode().Perm(), os.FileMode(0o644); got != want {
				t.Errorf("mode = %v, want %v", got, want)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".out.txt.tmp*"))
			if len(left) != 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func TestWriteBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.bin")
	want := []byte{0, 1, 2, 255}
	if err := WriteBytes(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("content = %v, want %v", got, want)
	}
}

func TestWriteMissingDir(t *testing.T) {
	if err := WriteBytes(filepath.Join(t.TempDir(), "no", "such", "f"), nil); err == nil {
		t.Error("WriteBytes into a missing folder: got nil error, want one")
	}
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// A symbolic link stays a link: its target gets the content (it was replaced by a file).
func TestWriteFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("new.json", dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, dangling} {
		if err := Write(p, writeString("new")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s after Write: %v, %v; want still a symlink", p, fi.Mode(), err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != "new" {
			t.Errorf("%s reads %q, %v; want %q", p, got, err, "new")
		}
	}
}

// A FIFO and a device are written through, not replaced by a regular file; a FIFO nobody
// reads and a full device are errors naming the path.
func TestWriteThroughSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// No reader yet: an error at once (open(2) waited for one forever).
	if err := Write(fifo, writeString("x")); !errors.Is(err, ErrNoReader) || !strings.HasPrefix(err.Error(), "write "+fifo+": a named pipe with no reader") {
		t.Errorf("Write(FIFO nobody reads) = %v, want ErrNoReader naming the path", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|nonBlock, 0) // a reader, without waiting for a writer
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write(fifo, writeString("through")); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != "through" {
		t.Errorf("FIFO reader got %q, %v, want %q", b, err, "through")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("FIFO after Write: %v, %v; want still a named pipe", fi.Mode(), err)
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		err := Write("/dev/full", writeString("x"))
		if err == nil || !strings.Contains(err.Error(), "write /dev/full: ") {
			t.Errorf("Write(/dev/full) = %v, want an error naming /dev/full", err)
		}
		if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Errorf("/dev/full after Write: %v, %v; want still a device", fi.Mode(), err)
		}
	}
	if err := Write(dir, writeString("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Write(dir) = %v, want 'is a directory'", err)
	}
}
