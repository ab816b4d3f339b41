package calibrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// RecordConfig says what to run and how to record it.
type RecordConfig struct {
	// Command is the program and its arguments.
	Command []string
	// Env, if not nil, is the command's environment (default: this process's).
	Env []string
	// Interval is the NVML sampling interval (default 100 ms).
	Interval time.Duration
	// Stdout and Stderr receive the command's output as it comes (nil: discarded); the trace
	// keeps every line either way.
	Stdout, Stderr io.Writer
	// Output, if set, is the trace file: rewritten atomically every Checkpoint while the command
	// runs (Complete=false) and once at the end.
	Output string
	// Checkpoint is the interval between checkpoint writes (default 10 s; <0: none).
	Checkpoint time.Duration
	// Grace is how long the command has to exit after the forwarded SIGINT before it is killed
	// (default 10 s).
	Grace time.Duration
	// Clock returns the current time (default time.Now).
	Clock func() time.Time
}

// maxLine bounds one captured line; longer lines are cut (the rest is dropped, not lost silently:
// the cut line ends with " [truncated]").
const maxLine = 64 << 10

// Record runs cfg.Command, samples r every cfg.Interval and captures the command's output lines.
// When ctx is cancelled (Ctrl-C), SIGINT is forwarded to the command's process group, the
// command gets cfg.Grace to exit, and the trace holds everything sampled until then. The trace is
// returned (and written to cfg.Output) even when the command fails; the error is non-nil only if
// the command could not be started or the trace could not be written.
func Record(ctx context.Context, r Reader, cfg RecordConfig) (*Trace, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("record: no command")
	}
	cfg = recordDefaults(cfg)
	rec, err := newRecorder(r, cfg)
	if err != nil {
		return nil, err
	}
	cmd := rec.command(cfg)
	rec.start = rec.clock()
	rec.trace.Start = rec.start.UTC()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("record: start %s: %w", cfg.Command[0], err)
	}
	rec.trace.PID = cmd.Process.Pid

	waitErr, err := rec.watch(ctx, r, cmd, cfg)
	if err != nil {
		return nil, err
	}
	rec.finish(r, cmd)
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("record: wait: %w", waitErr)
	}
	if cfg.Output != "" {
		if err := rec.trace.WriteFile(cfg.Output); err != nil {
			return rec.trace, fmt.Errorf("record: %w", err)
		}
	}
	return rec.trace, nil
}

// recordDefaults fills cfg's unset interval, checkpoint period, grace and clock.
func recordDefaults(cfg RecordConfig) RecordConfig {
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.Checkpoint == 0 {
		cfg.Checkpoint = 10 * time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return cfg
}

// newRecorder starts a trace with r's inventory and a baseline sample taken before the command.
func newRecorder(r Reader, cfg RecordConfig) (*recorder, error) {
	inv, err := r.Inventory()
	if err != nil {
		return nil, fmt.Errorf("record: inventory: %w", err)
	}
	base, err := r.Sample()
	if err != nil {
		return nil, fmt.Errorf("record: baseline sample: %w", err)
	}
	return &recorder{
		trace: &Trace{
			Version:    TraceVersion,
			Command:    append([]string(nil), cfg.Command...),
			IntervalNS: int64(cfg.Interval),
			Inventory:  inv,
			Baseline:   base,
			ExitCode:   -1,
		},
		clock: cfg.Clock,
	}, nil
}

// command is cfg.Command in its own process group, its output lines captured into rec.
func (rec *recorder) command(cfg RecordConfig) *exec.Cmd {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = cfg.Env
	cmd.Stdout = &lineWriter{rec: rec, stream: "stdout", echo: cfg.Stdout}
	cmd.Stderr = &lineWriter{rec: rec, stream: "stderr", echo: cfg.Stderr}
	cmd.WaitDelay = cfg.Grace // a grandchild holding the pipes open must not hang the recording
	setProcessGroup(cmd)
	return cmd
}

// watch samples r every cfg.Interval and checkpoints the trace until the started cmd exits;
// a cancelled ctx forwards SIGINT, then SIGKILL after cfg.Grace. It returns cmd's Wait error,
// and an error only when a checkpoint could not be written.
func (rec *recorder) watch(ctx context.Context, r Reader, cmd *exec.Cmd, cfg RecordConfig) (waitErr, err error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	var checkpoint <-chan time.Time
	if cfg.Output != "" && cfg.Checkpoint > 0 {
		ct := time.NewTicker(cfg.Checkpoint)
		defer ct.Stop()
		checkpoint = ct.C
	}
	var kill <-chan time.Time
	cancelled := ctx.Done()
	rec.sample(r)
	for {
		select {
		case <-ticker.C:
			rec.sample(r)
		case <-checkpoint:
			if err := rec.snapshot().WriteFile(cfg.Output); err != nil {
				return nil, fmt.Errorf("record: checkpoint: %w", err)
			}
		case <-cancelled:
			cancelled = nil
			rec.setSignal("SIGINT")
			interruptGroup(cmd.Process)
			kill = time.After(cfg.Grace)
		case <-kill:
			kill = nil
			rec.setSignal("SIGKILL")
			killGroup(cmd.Process)
		case waitErr = <-done:
			return waitErr, nil
		}
	}
}

// setSignal records the last signal sent to the command.
func (rec *recorder) setSignal(name string) {
	rec.mu.Lock()
	rec.trace.Signal = name
	rec.mu.Unlock()
}

// finish takes the last sample, flushes the output lines and completes the trace of the exited cmd.
func (rec *recorder) finish(r Reader, cmd *exec.Cmd) {
	rec.sample(r)
	cmd.Stdout.(*lineWriter).flush()
	cmd.Stderr.(*lineWriter).flush()
	rec.mu.Lock()
	rec.trace.ExitCode = cmd.ProcessState.ExitCode()
	rec.trace.Complete = true
	rec.trace.EndNS = int64(rec.clock().Sub(rec.start))
	rec.mu.Unlock()
}

// recorder holds the trace being recorded; the line writers and the sampling loop share it.
type recorder struct {
	mu    sync.Mutex
	trace *Trace
	start time.Time
	clock func() time.Time
}

func (rec *recorder) since() int64 { return int64(rec.clock().Sub(rec.start)) }

func (rec *recorder) sample(r Reader) {
	t := rec.since()
	devs, err := r.Sample()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if err != nil {
		if rec.trace.SampleErrors == 0 {
			rec.trace.FirstSampleError = err.Error()
		}
		rec.trace.SampleErrors++
		return
	}
	rec.trace.Samples = append(rec.trace.Samples, Sample{TNS: t, Devices: devs})
}

func (rec *recorder) addLine(stream, text string) {
	t := rec.since()
	rec.mu.Lock()
	rec.trace.Lines = append(rec.trace.Lines, Line{TNS: t, Stream: stream, Text: text})
	rec.mu.Unlock()
}

// snapshot copies the trace's header and slices so that it can be written while recording goes on.
func (rec *recorder) snapshot() *Trace {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	t := *rec.trace
	t.Samples = append([]Sample(nil), t.Samples...)
	t.Lines = append([]Line(nil), t.Lines...)
	t.EndNS = int64(rec.clock().Sub(rec.start))
	return &t
}

// lineWriter splits a stream into lines at '\n' or '\r' (Keras redraws its progress bar with
// '\r'), timestamps each when its end arrives, and echoes the raw bytes.
type lineWriter struct {
	rec    *recorder
	stream string
	echo   io.Writer
	buf    []byte
	cut    bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if w.echo != nil {
		w.echo.Write(p) // a failing terminal must not stop the recording
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexAny(rest, "\r\n")
		if i < 0 {
			w.append(rest)
			break
		}
		w.append(rest[:i])
		w.emit()
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) append(b []byte) {
	if room := maxLine - len(w.buf); len(b) > room {
		b, w.cut = b[:room], true
	}
	w.buf = append(w.buf, b...)
}

func (w *lineWriter) emit() {
	if len(w.buf) == 0 && !w.cut {
		return // "\r\n" and blank redraws carry nothing
	}
	s := string(w.buf)
	if w.cut {
		s += " [truncated]"
	}
	w.rec.addLine(w.stream, s)
	w.buf, w.cut = w.buf[:0], false
}

func (w *lineWriter) flush() { w.emit() }
