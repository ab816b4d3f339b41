package calibrate

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gpusim/gpusim/internal/atomicfile"
	"github.com/gpusim/gpusim/internal/jsonerr"

	"github.com/gpusim/gpusim/internal/limitread"
)

// TraceVersion is the version of the trace file format written by this package.
const TraceVersion = 1

// Trace is a recorded job: the GPUs at the start, NVML samples at a fixed interval, and every
// output line of the command, all timed in nanoseconds since Start.
type Trace struct {
	Version    int        `json:"version"`
	Command    []string   `json:"command"`
	Start      time.Time  `json:"start"`
	IntervalNS int64      `json:"interval_ns"`
	Inventory  *Inventory `json:"inventory,omitempty"`
	// Baseline is one sample taken before the command started: memory other processes hold.
	Baseline []DeviceSample `json:"baseline"`
	PID      int            `json:"pid"`
	// ExitCode is the command's exit status (-1 if it was killed by a signal or never ran).
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"` // the signal forwarded to the command, if any
	// Complete is false in the checkpoints written while the command runs.
	Complete bool     `json:"complete"`
	EndNS    int64    `json:"end_ns"`
	Samples  []Sample `json:"samples"`
	Lines    []Line   `json:"lines"`
	// SampleErrors counts samples NVML failed to take; FirstSampleError is the first message.
	SampleErrors     int    `json:"sample_errors,omitempty"`
	FirstSampleError string `json:"first_sample_error,omitempty"`
}

// Sample is one reading of every device.
type Sample struct {
	TNS     int64          `json:"t_ns"`
	Devices []DeviceSample `json:"devices"`
}

// DeviceSample is one device's dynamic state.
type DeviceSample struct {
	Index             int          `json:"index"`
	MemUsed           uint64       `json:"mem_used"`
	MemFree           uint64       `json:"mem_free"`
	MemReserved       uint64       `json:"mem_reserved"`
	GPUUtil           int          `json:"gpu_util"` // percent of the last NVML window with a kernel running
	MemUtil           int          `json:"mem_util"`
	SMClockMHz        int          `json:"sm_clock_mhz"`
	PowerW            float64      `json:"power_w"`
	PCIeTxBytesPerSec float64      `json:"pcie_tx_bytes_per_s"`
	PCIeRxBytesPerSec float64      `json:"pcie_rx_bytes_per_s"`
	Processes         []Process    `json:"processes,omitempty"`
	UtilSamples       []UtilSample `json:"util_samples,omitempty"`
}

// UtilSample is one of NVML's own utilization samples (nvmlDeviceGetSamples).
type UtilSample struct {
	TimeUnixMicro int64   `json:"t_unix_us"`
	Percent       float64 `json:"percent"`
}

// Line is one line the command wrote.
type Line struct {
	TNS    int64  `json:"t_ns"`
	Stream string `json:"stream"` // stdout or stderr
	Text   string `json:"text"`
}

// Interval returns the sampling interval.
func (t *Trace) Interval() time.Duration { return time.Duration(t.IntervalNS) }

// maxTraceBytes bounds a trace, after gzip: a recording takes about 5 kB per second of the
// job at the default 100 ms interval, so 1 GiB holds more than two days of it. A longer input
// (or one that never ends, /dev/zero, a gzip bomb) is an error instead of filling memory.
const maxTraceBytes = 1 << 30

// LoadTrace reads a trace file, gzip-compressed or not. Errors name the file and, for a
// malformed or truncated one, the line and key (jsonerr).
func LoadTrace(path string) (*Trace, error) {
	return LoadTraceContext(context.Background(), path)
}

// LoadTraceContext is LoadTrace whose read (up to a gigabyte, decompressed) stops when ctx
// is done.
func LoadTraceContext(ctx context.Context, path string) (*Trace, error) {
	f, err := limitread.Open(path, maxTraceBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(ctxReader{ctx, f})
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: truncated: the gzip stream ends early", path)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	data, err := io.ReadAll(io.LimitReader(r, maxTraceBytes+1))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: truncated: the gzip stream ends early", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxTraceBytes {
		return nil, fmt.Errorf("%s: longer than %d bytes, more than a trace holds", path, maxTraceBytes)
	}
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, jsonerr.Wrap(path, data, err, "")
	}
	if t.Version != TraceVersion {
		return nil, fmt.Errorf("%s: version: %d, want %d", path, t.Version, TraceVersion)
	}
	if err := t.checkTimes(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &t, nil
}

// checkTimes checks what Record writes of every trace: a positive sampling interval and
// samples in time order from 0; the memory analysis reads the samples as a time series.
func (t *Trace) checkTimes() error {
	if t.IntervalNS <= 0 {
		return fmt.Errorf("interval_ns: %d: want a positive sampling interval", t.IntervalNS)
	}
	for i, s := range t.Samples {
		if s.TNS < 0 {
			return fmt.Errorf("samples[%d].t_ns: %d: want a time since the start (>= 0)", i, s.TNS)
		}
		if i > 0 && s.TNS < t.Samples[i-1].TNS {
			return fmt.Errorf("samples[%d].t_ns: %d, before samples[%d]'s %d: want the samples in time order", i, s.TNS, i-1, t.Samples[i-1].TNS)
		}
	}
	return nil
}

// Write encodes the trace as JSON.
func (t *Trace) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(t)
}

// WriteFile writes the trace to path atomically: a temp file in the same folder, then a rename,
// so a reader never sees half a trace.
func (t *Trace) WriteFile(path string) error {
	return WriteFileAtomic(path, t.Write)
}

// WriteFileAtomic writes path through a temp file in the same folder and a rename
// (atomicfile.Write).
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}

// ctxReader fails every read once ctx is done.
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
