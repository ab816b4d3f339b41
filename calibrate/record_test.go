package calibrate

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scriptedReader is a Reader whose device memory rises by 1 GiB at each sample.
type scriptedReader struct {
	mu sync.Mutex
	n  int
}

func (r *scriptedReader) Inventory() (*Inventory, error) {
	return &Inventory{DriverVersion: "test", GPUs: []GPUInfo{{Name: "fake"}}}, nil
}

func (r *scriptedReader) Sample() ([]DeviceSample, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return []DeviceSample{{Index: 0, MemUsed: uint64(r.n) << 30}}, nil
}

func (r *scriptedReader) Close() error { return nil }

func TestRecordLines(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace.json")
	var stdout bytes.Buffer
	tr, err := Record(context.Background(), &scriptedReader{}, RecordConfig{
		Command:  []string{"sh", "-c", `echo step_time=0.1; printf 'bar 1\rbar 2\r\n'; echo oops >&2; exit 4`},
		Interval: time.Hour, // only the samples at start and end
		Output:   out,
		Stdout:   &stdout,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range tr.Lines {
		got = append(got, l.Stream+":"+l.Text)
	}
	want := []string{"stdout:step_time=0.1", "stdout:bar 1", "stdout:bar 2", "stderr:oops"}
	if d := cmp.Diff(want, sortedByStream(got)); d != "" {
		t.Errorf("Record lines mismatch (-want +got):\n%s", d)
	}
	if tr.ExitCode != 4 || !tr.Complete {
		t.Errorf("Record exit code %d complete %v, want 4 true", tr.ExitCode, tr.Complete)
	}
	if got, want := stdout.String(), "step_time=0.1\nbar 1\rbar 2\r\n"; got != want {
		t.Errorf("echoed stdout = %q, want %q", got, want)
	}
	// Baseline, then one sample at the start and one after the exit.
	if len(tr.Baseline) != 1 || len(tr.Samples) != 2 || tr.Samples[1].Devices[0].MemUsed != 3<<30 {
		t.Errorf("Record samples = %+v after baseline %+v, want 2 samples ending at 3 GiB", tr.Samples, tr.Baseline)
	}
	back, err := LoadTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(tr, back); d != "" {
		t.Errorf("trace file differs from the returned trace (-returned +file):\n%s", d)
	}
}

// sortedByStream keeps each stream's order but puts stdout first: the two pipes are read by
// separate goroutines, so only the order within a stream is defined.
func sortedByStream(lines []string) []string {
	var out, errs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "stdout:") {
			out = append(out, l)
		} else {
			errs = append(errs, l)
		}
	}
	return append(out, errs...)
}

// cancelOn cancels a context when a line containing word is written.
type cancelOn struct {
	word   string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.word) {
		c.cancel()
	}
	return len(p), nil
}

func TestRecordInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(t.TempDir(), "trace.json")
	tr, err := Record(ctx, &scriptedReader{}, RecordConfig{
		Command:  []string{"sh", "-c", `trap 'echo got-int; exit 3' INT; echo ready; while :; do sleep 0.01; done`},
		Interval: 5 * time.Millisecond,
		Output:   out,
		Stdout:   &cancelOn{word: "ready", cancel: cancel},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Signal != "SIGINT" || tr.ExitCode != 3 {
		t.Errorf("after Ctrl-C: signal %q exit %d, want SIGINT 3", tr.Signal, tr.ExitCode)
	}
	var texts []string
	for _, l := range tr.Lines {
		texts = append(texts, l.Text)
	}
	if d := cmp.Diff([]string{"ready", "got-int"}, texts); d != "" {
		t.Errorf("lines after Ctrl-C mismatch (-want +got):\n%s", d)
	}
	back, err := LoadTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Complete || len(back.Samples) != len(tr.Samples) {
		t.Errorf("trace file: complete %v, %d samples, want true, %d", back.Complete, len(back.Samples), len(tr.Samples))
	}
}

func TestRecordKillAfterGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, err := Record(ctx, &scriptedReader{}, RecordConfig{
		Command:  []string{"sh", "-c", `trap '' INT; echo ready; while :; do sleep 0.01; done`},
		Interval: time.Hour,
		Grace:    50 * time.Millisecond,
		Stdout:   &cancelOn{word: "ready", cancel: cancel},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Signal != "SIGKILL" || tr.ExitCode != -1 || !tr.Complete {
		t.Errorf("job ignoring SIGINT: signal %q exit %d complete %v, want SIGKILL -1 true", tr.Signal, tr.ExitCode, tr.Complete)
	}
}

func TestRecordNoCommand(t *testing.T) {
	if _, err := Record(context.Background(), &scriptedReader{}, RecordConfig{}); err == nil {
		t.Error("Record with no command: no error")
	}
	if _, err := Record(context.Background(), &scriptedReader{}, RecordConfig{Command: []string{"/nonexistent/cmd"}}); err == nil {
		t.Error("Record of a missing program: no error")
	}
}

// The trace file is checkpointed while the job runs: the job itself waits for the first
// checkpoint and prints whether it is marked incomplete.
func TestRecordCheckpoint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace.json")
	script := `while [ ! -f "$0" ]; do sleep 0.01; done; grep -c '"complete": false' "$0"`
	tr, err := Record(context.Background(), &scriptedReader{}, RecordConfig{
		Command:    []string{"sh", "-c", script, out},
		Interval:   time.Hour,
		Output:     out,
		Checkpoint: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Lines) != 1 || tr.Lines[0].Text != "1" || tr.ExitCode != 0 {
		t.Errorf("job reading the checkpoint printed %+v (exit %d), want one line \"1\"", tr.Lines, tr.ExitCode)
	}
	back, err := LoadTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Complete {
		t.Error("final trace file is marked incomplete")
	}
}
