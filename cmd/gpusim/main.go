// Command gpusim simulates how TensorFlow 2.x trains on GPUs. See `gpusim --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/gpusim/gpusim/internal/atomicfile"
	"github.com/gpusim/gpusim/internal/limitread"
)

// version, when set at build time with -ldflags "-X main.version=...", overrides the version
// read from the build's own information (version.go).
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go exitIfStuck(ctx, stop)
	stdout := &checkedWriter{w: os.Stdout, name: stdoutName()}
	err := run(ctx, stdout, os.Stderr, os.Args[1:])
	interrupted := ctx.Err() != nil // before stop, which cancels ctx too
	stop()
	if interrupted {
		// Ctrl-C: every command returns within a second (train.Run checks its context every
		// few thousand events) and writes no partial file (atomicfile); 128+SIGINT as a shell
		// reports an interrupted command.
		fmt.Fprintln(os.Stderr, "gpusim: interrupted")
		os.Exit(130)
	}
	if err == nil && stdout.err != nil {
		err = stdout.err // a command that ignored a failed write to stdout
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gpusim: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// interruptGrace is how long a command has to stop after Ctrl-C before exitIfStuck ends it:
// longer than serve's drain of its requests in flight (5 s), far longer than any loop that
// checks its context takes.
const interruptGrace = 10 * time.Second

// exitIfStuck backs up the context checks in every long loop: once Ctrl-C cancels ctx, a
// second Ctrl-C ends the process at once (stop restores SIGINT's default action), and a
// command still running interruptGrace later (a loop that does not look at ctx, a write to
// a pipe nobody drains) is ended as interrupted rather than left deaf to Ctrl-C.
func exitIfStuck(ctx context.Context, stop func()) {
	<-ctx.Done()
	stop()
	time.Sleep(interruptGrace)
	fmt.Fprintf(os.Stderr, "gpusim: interrupted (the command did not stop within %v)\n", interruptGrace)
	os.Exit(130)
}

// command is one subcommand. Each lives in its own file and registers itself in init.
type command struct {
	name    string
	summary string
	// run gets the arguments after the subcommand's name. It returns a usageError (exit 2) for
	// bad usage or bad input, any other error for a runtime failure (exit 1).
	run func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

// commands is filled by the init functions of the subcommand files and never changed after.
var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("gpusim: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// usageError marks bad usage or bad input: the process exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// asUsage wraps err (if not nil) so that it exits 2.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// exitCodeError lets a command choose its exit status with a message already printed.
type exitCodeError struct{ code int }

func (e exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error) int {
	var ue usageError
	var ec exitCodeError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		return ec.code
	case errors.As(err, &ue), errors.Is(err, limitread.ErrNotRegular), errors.Is(err, atomicfile.ErrNoReader):
		// A path that names a pipe, a device or a socket is bad input wherever it is given.
		return 2
	default:
		return 1
	}
}

func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run(ctx, stdout, stderr, []string{"--help"})
			}
		}
		printUsage(stdout)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		return usagef("unknown command %q (see gpusim --help)", args[0])
	}
	return c.run(ctx, stdout, stderr, args[1:])
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `gpusim simulates how TensorFlow 2.x trains on GPUs: memory, speed, input, multi-GPU.

Usage:
  gpusim <command> [arguments]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Examples:
  gpusim run                                   # the embedded default scenario
  gpusim run resnet50-a100 --set batch=512 -o json
  gpusim alloc replay trace.csv --mode growth --limit 750780416
  gpusim list models

Run "gpusim <command> --help" for a command's flags.
`)
}
