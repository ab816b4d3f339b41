package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scenario file that sets nothing (empty, comments only, a lone document marker, or cut off
// inside its header comment) is one error line naming the file, not a run of the defaults.
func TestEmptyScenarioFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty.yaml":    "",
		"comments.yaml": "# capacity plan for the 24 GB card\n# batch 256, memory growth\n",
		"marker.yaml":   "---\n",
		"cut.yaml":      "# a scenario whose keys were lost in tra",
	} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(f)
		if err == nil {
			t.Errorf("%s: loaded, want an error", name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, f+":1: ") || !strings.Contains(msg, "sets no keys") || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line %q", name, msg, f+":1: the scenario sets no keys ...")
		}
	}
	// One key is enough.
	f := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(f, []byte("# plan\nbatch: 64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(f); err != nil || s.Config.Batch != 64 {
		t.Errorf("one key: %v, %v; want batch 64", s, err)
	}
}
