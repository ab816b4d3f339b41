package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/hw"
)

// TestAtValues: a --set value that starts with '@' (reserved in YAML) is a string, so
// hardware.gpu=@FILE loads a profile file; in a scenario file the same line is a YAML error that
// names file:line and the key and suggests quotes.
func TestAtValues(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "mine.yaml")
	g, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	g.Name = "mine"
	f, err := os.Create(prof)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteProfile(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"hardware.gpu=@" + prof, "hardware.gpu= @" + prof, `hardware.gpu="@` + prof + `"`} {
		s, err := Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetAll([]string{kv}); err != nil {
			t.Errorf("SetAll(%q) = %v, want no error", kv, err)
			continue
		}
		if got, want := s.Config.GPU, "@"+prof; got != want {
			t.Errorf("SetAll(%q): hardware.gpu = %q, want %q", kv, got, want)
		}
	}
	// A missing file is the profile loader's error, not YAML's.
	s, _ := Resolve("")
	err = s.SetAll([]string{"hardware.gpu=@" + filepath.Join(dir, "none.yaml")})
	if err == nil || strings.Contains(err.Error(), "cannot start any token") || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("SetAll(hardware.gpu=@missing) = %v, want the profile loader's error naming the file", err)
	}
	// A quoted value in a file works.
	s, err = Parse("ok.yaml", []byte("hardware:\n  gpu: \"@"+prof+"\"\n"))
	if err != nil || s.Config.GPU != "@"+prof {
		t.Errorf("Parse(quoted @file) = %v, gpu %q", err, s.Config.GPU)
	}

	for _, tc := range []struct{ doc, want string }{
		{"model: resnet50\nhardware:\n  count: 1\n  gpu: @x.yaml\n", `bad.yaml:4: hardware.gpu: a YAML value cannot start with "@" (a reserved character): quote it, gpu: "@x.yaml"`},
		{"# c\nhardware: {count: 1}\nname: `x` # tick\n", "bad.yaml:3: name: a YAML value cannot start with \"`\" (a reserved character): quote it, name: \"`x`\""},
		{"processes:\n  - name: a\n    gpus:\n      - @0\n", `bad.yaml:4: processes.gpus: a YAML value cannot start with "@"`},
	} {
		_, err := Parse("bad.yaml", []byte(tc.doc))
		var se *Error
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want a *scenarios.Error containing %q", tc.doc, err, tc.want)
		}
	}
}
