package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this binary's main as a child process (GPUSIM_TEST_MAIN=1), so that
// signals, exit codes and redirections are the real ones.
func TestMain(m *testing.M) {
	if os.Getenv("GPUSIM_TEST_MAIN") == "1" {
		os.Args = append([]string{"gpusim"}, os.Args[1:]...)
		main()
	}
	os.Exit(m.Run())
}

func gpusimCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GPUSIM_TEST_MAIN=1")
	return cmd
}

// Ctrl-C stops a 100k-step input-bound run with --trace (it ran on for minutes and wrote every
// file) within a second: exit 130 and no trace file.
func TestInterruptExits130WithoutOutputs(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.json")
	cmd := gpusimCmd("run", "input-bound", "--set", "steps=100000", "--trace", trace, "--plot", filepath.Join(dir, "plots"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // past start-up, inside the simulation
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v (stderr %q), want exit status 130", err, stderr.String())
	}
	// It stopped itself, not main's backstop (exitIfStuck says so); the time depends on the
	// machine's load and is only logged.
	if strings.Contains(stderr.String(), "did not stop within") {
		t.Errorf("run ignored the interrupt until the backstop ended it (%v)", took)
	}
	t.Logf("run stopped %v after SIGINT", took)
	if !strings.Contains(stderr.String(), "gpusim: interrupted") {
		t.Errorf("stderr %q, want 'gpusim: interrupted'", stderr.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left after the interrupt: %v", ents)
	}
}

// A full stdout is a failure naming it (it exited 0).
func TestFullStdoutExits1(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer f.Close()
	for _, args := range [][]string{{"list", "models"}, {"run", "--set", "steps=2"}, {"version"}} {
		cmd := gpusimCmd(args...)
		cmd.Stdout = f
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "/dev/full): no space left on device") {
			t.Errorf("gpusim %v > /dev/full: %v, stderr %q; want exit 1 naming /dev/full", args, err, stderr.String())
		}
	}
}

// Ctrl-C while compare loads a large sweep's configurations stops it at once (it loaded all
// 100,000 first, about 14 s, before it looked at the interrupt).
func TestInterruptCompareWhileLoading(t *testing.T) {
	vals := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = strconv.Itoa(i + 1)
		}
		return strings.Join(v, ",")
	}
	cmd := gpusimCmd("compare", "--vary", "batch="+vals(1000), "--vary", "steps="+vals(100), "--max-configs", "100000", "--progress", "never")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // inside the loading loop
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted compare: %v (stderr %q), want exit status 130", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "did not stop within") {
		t.Errorf("compare ignored the interrupt until the backstop ended it (%v)", took)
	}
	t.Logf("compare stopped %v after SIGINT", took)
}
