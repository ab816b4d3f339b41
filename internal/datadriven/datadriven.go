// Package datadriven runs test files of directives and their expected output, in the style of
// cockroachdb's datadriven package (used by kvserver/asim and etcd's raft tests): each test
// case is a command line, optional input lines, a "----" separator and the expected output.
// A test that changes the output is reviewed as a diff of the file, rewritten with -update.
//
//	# comments and blank lines between cases are kept
//	run mirrored-4xa100
//	steps=20
//	----
//	step_time_s: 0.0734
//
// An output that contains blank lines is written between two separators:
//
//	run default
//	----
//	----
//	gpusim run: default
//
//	  resnet50 on ...
//	----
//	----
//
// It is a small, dependency-free reimplementation: github.com/cockroachdb/datadriven would
// pull in cockroachdb/errors and its dependency tree for a 200-line parser.
package datadriven

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Case is one test case of a file.
type Case struct {
	// Pos is "file:line" of the command.
	Pos string
	// Cmd is the command's first word; Args the rest of its line, split at spaces
	// ("key=value" or bare words).
	Cmd  string
	Args []string
	// Input is the lines between the command and the separator, joined with "\n".
	Input string
	// Expected is the output the file holds.
	Expected string
}

// Arg returns the value of key=value among c.Args ("" and false when absent).
func (c *Case) Arg(key string) (string, bool) {
	for _, a := range c.Args {
		if k, v, ok := strings.Cut(a, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// part is a piece of a file: text kept as it is, or a case.
type part struct {
	text string
	c    *Case
}

const sep = "----"

func parse(file, data string) ([]part, error) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	var parts []part
	var text []string
	flush := func() {
		if len(text) > 0 {
			parts = append(parts, part{text: strings.Join(text, "\n") + "\n"})
			text = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			text = append(text, l)
			continue
		}
		flush()
		f := strings.Fields(l)
		c := &Case{Pos: fmt.Sprintf("%s:%d", file, i+1), Cmd: f[0], Args: f[1:]}
		var in []string
		for i++; i < len(lines) && lines[i] != sep; i++ {
			in = append(in, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: no %q after the command", c.Pos, sep)
		}
		c.Input = strings.Join(in, "\n")
		var out []string
		if i+1 < len(lines) && lines[i+1] == sep {
			// Output with blank lines: up to the closing pair of separators.
			for i += 2; ; i++ {
				if i+1 >= len(lines) {
					return nil, fmt.Errorf("%s: output not closed by %q twice", c.Pos, sep)
				}
				if lines[i] == sep && lines[i+1] == sep {
					i++
					break
				}
				out = append(out, lines[i])
			}
		} else {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				out = append(out, lines[i])
			}
			i-- // the blank line is text
		}
		c.Expected = strings.Join(out, "\n")
		if len(out) > 0 {
			c.Expected += "\n"
		}
		parts = append(parts, part{c: c})
	}
	flush()
	return parts, nil
}

func format(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.c == nil {
			b.WriteString(p.text)
			continue
		}
		c := p.c
		b.WriteString(strings.Join(append([]string{c.Cmd}, c.Args...), " ") + "\n")
		if c.Input != "" {
			b.WriteString(c.Input + "\n")
		}
		b.WriteString(sep + "\n")
		out := c.Expected
		if strings.Contains(strings.TrimSuffix(out, "\n"), "\n\n") || strings.HasPrefix(out, "\n") {
			b.WriteString(sep + "\n" + out + sep + "\n" + sep + "\n")
			continue
		}
		b.WriteString(out)
	}
	return b.String()
}

// RunFile runs every case of path through run, which returns the case's actual output. The
// output must equal the expected one; with update, the file is rewritten with the outputs
// instead (review the diff).
func RunFile(t *testing.T, path string, update bool, run func(t *testing.T, c *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := parse(path, string(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if p.c == nil {
			continue
		}
		c := p.c
		got := run(t, c)
		if got != "" && !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if update {
			c.Expected = got
			continue
		}
		if got != c.Expected {
			t.Errorf("%s: %s %s: output differs (go test -run %s -update rewrites the file)\n--- want\n%s--- got\n%s",
				c.Pos, c.Cmd, strings.Join(c.Args, " "), t.Name(), c.Expected, got)
		}
	}
	if update {
		if err := os.WriteFile(path, []byte(format(parts)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
