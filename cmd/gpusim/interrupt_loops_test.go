package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeKerasChain writes the Keras 3 JSON of a Functional chain of n Dense layers.
func writeKerasChain(t *testing.T, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, `{"class_name": "Functional", "config": {"name": "chain", "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 8], "name": "in"}, "name": "in", "inbound_nodes": []}`)
	prev := "in"
	for i := range n {
		name := fmt.Sprintf("d%d", i)
		fmt.Fprintf(w, `, {"class_name": "Dense", "config": {"name": %q, "units": 8}, "name": %q, "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 8], "keras_history": [%q, 0, 0]}}], "kwargs": {}}]}`, name, name, prev)
		prev = name
	}
	fmt.Fprintf(w, `], "input_layers": [["in", 0, 0]], "output_layers": [[%q, 0, 0]]}}`, prev)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeAllocTrace writes an alloc replay trace of n alloc/free pairs.
func writeAllocTrace(t *testing.T, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "op,id,bytes")
	for i := range n {
		fmt.Fprintf(w, "alloc,%d,%d\nfree,%d,%d\n", i, 256*(1+i%64), i, 256*(1+i%64))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Ctrl-C in the middle of each long loop stops the command at once, exit 130: a Keras JSON
// import of 40,000 layers (it ran to its end, 36 s), an alloc replay's parse of a
// 4M-operation trace (28 s), a calibration fit's search.
func TestInterruptLongInputLoops(t *testing.T) {
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain.json")
	writeKerasChain(t, chain, 40000)
	trace := filepath.Join(dir, "trace.csv")
	writeAllocTrace(t, trace, 2_000_000)
	for _, args := range [][]string{
		{"list", "models", "--file", chain},
		{"alloc", "replay", trace, "--mode", "growth", "--limit", "1GiB", "-o", filepath.Join(dir, "out.csv")},
		// A fit's search: each candidate's simulation looks at the context (train.Run).
		{"calibrate", "fit", "../../calibrate/testdata/torch-resnet50-b64.json.gz", "../../calibrate/testdata/torch-resnet50-b128.json.gz",
			"--scenario", "../../calibrate/testdata/torch-h200.yaml", "--no-memory", "--profile-out", filepath.Join(dir, "p.yaml")},
	} {
		cmd := gpusimCmd(args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // inside the loop
		sent := time.Now()
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		took := time.Since(sent)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("gpusim %s, interrupted: %v (stderr %q), want exit status 130", args[0], err, stderr.String())
			continue
		}
		// The loop stopped itself, not main's backstop (exitIfStuck, which says so): how long that
		// took depends on the machine's load, and is only logged.
		if strings.Contains(stderr.String(), "did not stop within") {
			t.Errorf("gpusim %s ignored the interrupt until the backstop ended it (%v): stderr %q", args[0], took, stderr.String())
		}
		t.Logf("gpusim %s stopped %v after SIGINT", args[0], took)
	}
	for _, out := range []string{"out.csv", "p.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, out)); err == nil {
			t.Errorf("an interrupted command left %s", out)
		}
	}
}
