package hw

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A profile file whose base: names itself, or two naming each other, is one error on the
// base: line (it recursed until Go's stack overflowed and the process died with a trace).
func TestProfileBaseFileCycle(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	self := write("self.yaml", "name: x\nbase: \"@"+filepath.Join(dir, "self.yaml")+"\"\n")
	a := write("a.yaml", "base: \"@"+filepath.Join(dir, "b.yaml")+"\"\n")
	write("b.yaml", "base: \"@"+a+"\"\n")
	hself := write("hself.yaml", "base: \"@"+filepath.Join(dir, "hself.yaml")+"\"\n")
	ha := write("ha.yaml", "base: \"@"+filepath.Join(dir, "hb.yaml")+"\"\n")
	write("hb.yaml", "base: \"@"+ha+"\"\n")
	for _, tc := range []struct {
		load func(string) error
		path string
		want string
	}{
		{func(p string) error { _, err := LookupGPU("@" + p); return err }, self, self + ":2: base: \"@" + self + "\" is not a built-in gpu"},
		{func(p string) error { _, err := LookupGPU("@" + p); return err }, a, a + ":1: base: \"@" + filepath.Join(dir, "b.yaml") + "\" is not a built-in gpu"},
		{func(p string) error { _, err := LookupHost("@" + p); return err }, hself, hself + ":1: base: \"@" + hself + "\" is not a built-in host"},
		{func(p string) error { _, err := LookupHost("@" + p); return err }, ha, ha + ":1: base: \"@" + filepath.Join(dir, "hb.yaml") + "\" is not a built-in host"},
	} {
		err := tc.load(tc.path)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("load %s: %v, want one line starting %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}
