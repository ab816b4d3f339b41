package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A six-configuration compare is too wide for an 80-column terminal: with COLUMNS=80 it is
// printed transposed, within 80 columns; --width 0 and output to a pipe keep the wide table.
func TestCompareTransposedWhenWide(t *testing.T) {
	args := []string{"compare", "--vary", "batch=32,64,96,128,160,192", "--set", "steps=2"}
	t.Setenv("COLUMNS", "80")
	out, stderr, code := allocRun(t, args...)
	if code != 0 {
		t.Fatalf("gpusim %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	if !strings.HasPrefix(out, "batch=32 (base)\n") || !strings.Contains(out, "\nbatch=192\n") {
		t.Errorf("COLUMNS=80: not one block per configuration:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("COLUMNS=80: line of %d columns: %q", n, l)
		}
	}
	wide, _, _ := allocRun(t, append(args, "--width", "0")...)
	if !strings.HasPrefix(strings.TrimLeft(wide, " "), "│") || !strings.Contains(wide, "batch=192") {
		t.Errorf("--width 0: not the side-by-side table:\n%s", wide)
	}
	t.Setenv("COLUMNS", "")
	if piped, _, _ := allocRun(t, args...); piped != wide {
		t.Errorf("no COLUMNS, stdout not a terminal: got\n%s\nwant the side-by-side table", piped)
	}
	if _, _, code := allocRun(t, append(args, "--width", "-5")...); code != 2 {
		t.Errorf("--width -5: exit %d, want 2", code)
	}
}
