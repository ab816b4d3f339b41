package limitread

import (
	"os"
	"path/filepath"
	"strings"
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
	if _, err := ReadFile(path, 4); err == nil || !strings.Contains(err.Error(), "longer than 4 bytes") {
		t.Errorf("ReadFile(5 bytes, max 4) = %v, want 'longer than 4 bytes'", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero", 1<<20); err == nil {
			t.Error("ReadFile(/dev/zero) succeeded")
		}
	}
}
