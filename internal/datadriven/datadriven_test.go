package datadriven

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# a comment
echo a=1 b
x
y
----
x y

# blank lines in the output
lines
----
----
one

two
----
----
`

func TestParseFormatRoundTrip(t *testing.T) {
	parts, err := parse("f", sample)
	if err != nil {
		t.Fatal(err)
	}
	var cases []*Case
	for _, p := range parts {
		if p.c != nil {
			cases = append(cases, p.c)
		}
	}
	if len(cases) != 2 {
		t.Fatalf("%d cases, want 2", len(cases))
	}
	c := cases[0]
	if v, _ := c.Arg("a"); c.Cmd != "echo" || v != "1" || c.Input != "x\ny" || c.Expected != "x y\n" || c.Pos != "f:2" {
		t.Errorf("case 1 = %+v", c)
	}
	if cases[1].Expected != "one\n\ntwo\n" {
		t.Errorf("case 2 output %q", cases[1].Expected)
	}
	if got := format(parts); got != sample {
		t.Errorf("format(parse(f)) =\n%s\nwant\n%s", got, sample)
	}
}

func TestRunFileUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("echo\nhello\nworld\n----\nstale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	echo := func(t *testing.T, c *Case) string { return strings.ReplaceAll(c.Input, "\n", "\n\n") }
	RunFile(t, path, true, echo)
	data, _ := os.ReadFile(path)
	if want := "echo\nhello\nworld\n----\n----\nhello\n\nworld\n----\n----\n"; string(data) != want {
		t.Errorf("updated file %q, want %q", data, want)
	}
	RunFile(t, path, false, echo) // the rewritten file passes
}
