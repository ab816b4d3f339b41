package scenarios

import (
	"errors"
	"testing"
)

// NoFiles refuses a value that names a file by the value YAML parsed, whatever its spelling,
// and names the --set that gave it; without NoFiles, FileRefs still reports it.
func TestNoFilesRefusesParsedFileReferences(t *testing.T) {
	for _, tc := range []struct{ set, key, path string }{
		{`model="\x40net.json"`, "model", "net.json"},
		{`hardware.gpu=" @gpu.yaml"`, "hardware.gpu", "gpu.yaml"},
		{"hardware.host.profile=|-\n  @box.yaml", "hardware.host.profile", "box.yaml"},
	} {
		sc, err := Builtin("default")
		if err != nil {
			t.Fatal(err)
		}
		sc.NoFiles = true
		err = sc.Set(tc.set)
		var se *Error
		if !errors.Is(err, ErrFileRef) || !errors.As(err, &se) || se.Field != tc.key || se.Place != "--set "+tc.set {
			t.Errorf("Set(%q) with NoFiles = %v, want %s: %v at --set", tc.set, err, tc.key, ErrFileRef)
		}
		sc.NoFiles = false
		refs := FileRefs(&sc.Config)
		if len(refs) != 1 || refs[0] != (FileRef{tc.key, tc.path}) {
			t.Errorf("FileRefs after %q = %v, want [{%s %s}]", tc.set, refs, tc.key, tc.path)
		}
	}
}
