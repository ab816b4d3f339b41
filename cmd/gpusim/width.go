package main

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// widthUsage is the help of the --width flag of the commands that print wide tables.
const widthUsage = "terminal `COLUMNS` the text table must fit, else it is printed transposed (-1: $COLUMNS, else the terminal's width when stdout is one; 0: never transpose)"

// tableWidth is the width a text table must fit: the --width flag when not -1 (0: any), else
// $COLUMNS as the shell exports it, else the terminal's width when stdout is a terminal, else 0:
// output to a pipe or a file keeps one layout whatever the window.
func tableWidth(flag int, stdout io.Writer) (int, error) {
	if flag < -1 {
		return 0, usagef("--width %d: want a number of columns, 0 (never transpose) or -1 (the terminal's)", flag)
	}
	if flag >= 0 {
		return flag, nil
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c, nil
	}
	if cw, ok := stdout.(*checkedWriter); ok {
		stdout = cw.w
	}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			return w, nil
		}
	}
	return 0, nil
}
