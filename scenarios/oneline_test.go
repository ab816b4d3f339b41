package scenarios

import (
	"errors"
	"testing"
)

// A bad scenario is one error line, the exact text below: a key two checks reject (train and
// pipeline both check input.cache) is said once, several bad keys share the line, a second
// YAML document is an error, not silently ignored, and so is a process listing a GPU twice
// (its memory would count twice there).
func TestErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      string
	}{
		{"key checked twice", "input:\n  cache: bogus\n", `bad.yaml:2: input.cache: "bogus" is not one of none, memory, file`},
		{"two bad keys", "precision: fp99\nmemory:\n  mode: weird\n",
			`bad.yaml:1: precision: "fp99" is not one of float32, mixed_float16, mixed_bfloat16 (and 1 more: bad.yaml:3: memory.mode)`},
		{"three bad keys", "precision: fp99\nframework: torch\nmemory:\n  mode: weird\n",
			`bad.yaml:1: precision: "fp99" is not one of float32, mixed_float16, mixed_bfloat16 (and 2 more: bad.yaml:4: memory.mode; bad.yaml:2: framework)`},
		{"second document", "batch: 64\n---\nbatch: 32\n", "bad.yaml:3: a second YAML document: a scenario is one document (remove the --- and what follows, or merge the two)"},
		{"third document", "batch: 64\n---\n---\nsteps: 3\n", "bad.yaml:4: a second YAML document: a scenario is one document (remove the --- and what follows, or merge the two)"},
		{"a process's GPU twice", "processes:\n  - name: a\n    gpus: [0, 1, 0]\n    used_mib: 100\n",
			"bad.yaml:3: processes[0].gpus: GPU 0 listed twice (a process holds its memory on each GPU once)"},
		{"second document's syntax", "batch: 64\n---\nbatch: [\n", "bad.yaml:3: yaml syntax: did not find expected node content"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: Parse error = %v, want %q", tc.name, err, tc.want)
			continue
		}
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%s: error %T is not a *scenarios.Error", tc.name, err)
		}
	}
	s, err := Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	err = s.SetAll([]string{"input.cache=bogus"})
	if want := `--set input.cache=bogus: input.cache: "bogus" is not one of none, memory, file`; err == nil || err.Error() != want {
		t.Errorf("SetAll(input.cache=bogus) = %v, want %q", err, want)
	}
	// A trailing "---" (an empty second document) leaves nothing out.
	if _, err := Parse("ok.yaml", []byte("batch: 64\n---\n")); err != nil {
		t.Errorf("Parse with a trailing ---: %v", err)
	}
}
