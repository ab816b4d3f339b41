package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every path gpusim reads or writes may name a named pipe without hanging it: an input pipe
// is refused at once as no regular file, an output pipe nobody reads is refused at once, each
// exit 2 naming the path. Each blocked in open(2) forever, deaf to Ctrl-C. The commands run
// as child processes, so a hang is a kill after the deadline, not a stuck test binary.
func TestFIFOPathsDoNotHang(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// validate --data: a copy of testdata whose DLE table is a pipe.
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "dle"), 0o755); err != nil {
		t.Fatal(err)
	}
	h200, err := filepath.Abs("../../testdata/h200")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h200, filepath.Join(data, "h200")); err != nil {
		t.Fatal(err)
	}
	dle := filepath.Join(data, "dle", "dle_tf.csv")
	if err := syscall.Mkfifo(dle, 0o644); err != nil {
		t.Fatal(err)
	}
	// A model file whose custom-layer sidecar is a pipe.
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, []byte(`{"class_name": "Sequential", "config": {"name": "m", "layers": []}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sidecar := filepath.Join(dir, "m.layers.yaml")
	if err := syscall.Mkfifo(sidecar, 0o644); err != nil {
		t.Fatal(err)
	}
	notRegular := ": not a regular file (a named pipe)"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", fifo}, fifo + notRegular},
		{[]string{"run", "--set", "model=@" + fifo, "--set", "steps=2"}, fifo + notRegular},
		{[]string{"run", "--set", "hardware.gpu=@" + fifo, "--set", "steps=2"}, fifo + notRegular},
		{[]string{"run", "--set", "hardware.host.profile=@" + fifo, "--set", "steps=2"}, fifo + notRegular},
		{[]string{"list", "models", "--file", fifo}, fifo + notRegular},
		{[]string{"alloc", "replay", fifo, "--mode", "growth", "--limit", "1GiB"}, fifo + notRegular},
		{[]string{"validate", "--data", data}, dle + notRegular},
		{[]string{"validate", "--data", fifo}, fifo + notRegular},
		{[]string{"list", "models", "--file", model}, sidecar + notRegular},
		{[]string{"calibrate", "fit", fifo, "--scenario", "../../calibrate/testdata/keras-h200.yaml", "--no-memory"}, fifo + notRegular},
		{[]string{"compare", "merge", fifo, fifo}, fifo + notRegular},
		{[]string{"run", "--set", "steps=2", "--trace", fifo}, "write " + fifo + ": a named pipe with no reader"},
		{[]string{"alloc", "replay", "../../allocator/testdata/traces/growth-tiny-a.csv", "--mode", "growth", "--limit", "1GiB", "-o", fifo}, "write " + fifo + ": a named pipe with no reader"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], tc.args...)
		cmd.Env = append(os.Environ(), "GPUSIM_TEST_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		killed := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		switch {
		case killed:
			t.Errorf("gpusim %s: still running after 20 s (killed), want exit 2 at once", strings.Join(tc.args, " "))
		case !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want):
			t.Errorf("gpusim %s: %v, stderr %q; want exit 2 with %q", strings.Join(tc.args, " "), err, stderr.String(), tc.want)
		}
	}
}
