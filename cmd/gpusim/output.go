package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/gpusim/gpusim/internal/atomicfile"
)

// checkedWriter remembers the first write error of the writer it wraps (the process's stdout),
// so that a full disk or a closed pipe is a failure naming the path even where a command
// ignores what fmt.Fprintf returns. Once a write failed every later one fails at once.
type checkedWriter struct {
	w    io.Writer
	name string
	err  error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "write /dev/stdout: ...": the name is c.name
		}
		c.err = fmt.Errorf("write %s: %w", c.name, err)
	}
	return n, c.err
}

// stdoutName is what stdout is, for errors: the file or device it was redirected to where
// /proc says so (/dev/full, out.txt), else "stdout".
func stdoutName() string {
	if p, err := os.Readlink("/proc/self/fd/1"); err == nil && strings.HasPrefix(p, "/") {
		return "stdout (" + p + ")"
	}
	return "stdout"
}

// writeOutput writes an output file: "-" is stdout; any other path goes through atomicfile
// (a regular file replaced atomically, a FIFO or device written through).
// Ctrl-C fails its next write, so an interrupted file is never renamed into place.
func writeOutput(ctx context.Context, stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(ctxWriter{ctx, stdout})
	}
	return atomicfile.Write(path, func(w io.Writer) error { return write(ctxWriter{ctx, w}) })
}

// ctxWriter fails every write once ctx is done: a long stream of output (alloc replay's rows)
// stops at the next buffer flush after Ctrl-C.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// ctxReader fails every read once ctx is done: a long parse (alloc replay's trace) stops at
// its next read after Ctrl-C.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
