package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
