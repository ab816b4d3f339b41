package report

// This file renders one train.Result (gpusim run): JSON here, text in result_text.go, CSV in
// result_csv.go.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/gpusim/gpusim/analysis"
)

// ResultJSON is the -o json object of gpusim run. The first keys are docs/design.md's contract;
// the rest may grow.
type ResultJSON struct {
	Scenario   string  `json:"scenario"`
	OOM        bool    `json:"oom"`
	OOMMessage string  `json:"oom_message"`
	StepTimeS  float64 `json:"step_time_s"`
	// StepTimeSInterval and ThroughputSamplesPerSInterval are the figures' 80% prediction
	// intervals (absent after an OOM), IntervalBasis what they rest on
	// (analysis/uncertainty.go).
	StepTimeSInterval             *analysis.Interval `json:"step_time_s_interval,omitempty"`
	ThroughputSamplesPerS         float64            `json:"throughput_samples_per_s"`
	ThroughputSamplesPerSInterval *analysis.Interval `json:"throughput_samples_per_s_interval,omitempty"`
	IntervalBasis                 string             `json:"interval_basis,omitempty"`
	GPUUtilization                float64            `json:"gpu_utilization"`
	InputStallFraction            float64            `json:"input_stall_fraction"`
	AllReduceTimeS                float64            `json:"allreduce_time_s"`
	SkippedSteps                  int                `json:"skipped_steps"`
	Devices                       []DeviceJSON       `json:"devices"`

	Replicas           int            `json:"replicas"`
	GPUs               int            `json:"gpus"`
	ScalingEfficiency  float64        `json:"scaling_efficiency"`
	Model              string         `json:"model"`
	GPU                string         `json:"gpu"`
	Precision          string         `json:"precision"`
	GlobalBatch        int            `json:"global_batch"`
	ReplicaBatches     []int          `json:"replica_batches"`
	AccumulationSteps  int            `json:"accumulation_steps"`
	Steps              int            `json:"steps"`
	StepsCompleted     int            `json:"steps_completed"`
	FastForwardedSteps int            `json:"fast_forwarded_steps"`
	StepTimesS         []float64      `json:"step_times_s"`
	SimulatedTimeS     float64        `json:"simulated_time_s"`
	Breakdown          []ShareJSON    `json:"breakdown"`
	OOMDetail          *OOMJSON       `json:"oom_detail,omitempty"`
	Physical           []PhysicalJSON `json:"physical_gpus"`
	Processes          []ProcessJSON  `json:"processes,omitempty"`
	Notes              []string       `json:"notes,omitempty"`
	WorkspaceFallbacks int            `json:"workspace_fallbacks"`
	AutotunedConvs     int            `json:"autotuned_convs"`
	AutotuneSkips      int            `json:"autotune_skips"`
	Events             uint64         `json:"events"`
	// The input pipeline and the diagnosis (result_input.go).
	Input              *InputJSON       `json:"input,omitempty"`
	Epochs             []EpochJSON      `json:"epochs,omitempty"`
	UtilizationSamples []UtilSeriesJSON `json:"gpu_utilization_samples,omitempty"`
	Diagnosis          *DiagnosisJSON   `json:"diagnosis,omitempty"`
	// Devices, all-reduce, scaling and warnings (result_multigpu.go).
	MultiGPUJSON
	// Breakdown by op kind, XLA compiles, mixed-precision memory (result_speed.go).
	SpeedJSON
}

// DeviceJSON is one logical GPU of the training process.
type DeviceJSON struct {
	Name                   string           `json:"name"`
	PeakBytesInUse         int64            `json:"peak_bytes_in_use"`
	PeakBytesInUseInterval *[2]int64        `json:"peak_bytes_in_use_interval,omitempty"`
	FirstStepPeakBytes     int64            `json:"first_step_peak_bytes"`
	SteadyPeakBytes        int64            `json:"steady_peak_bytes"`
	PeakPoolBytes          int64            `json:"peak_pool_bytes"`
	BytesLimit             int64            `json:"bytes_limit"`
	Allocator              string           `json:"allocator"`
	Idle                   bool             `json:"idle,omitempty"`
	Physical               int              `json:"physical_gpu"`
	BytesInUse             int64            `json:"bytes_in_use"`
	PoolBytes              int64            `json:"pool_bytes"`
	LargestFreeBlockBytes  int64            `json:"largest_free_block_bytes"`
	BusyFraction           float64          `json:"busy_fraction"`
	PoolGrowth             []PoolChangeJSON `json:"pool_growth"`
	PoolGrowthDropped      int              `json:"pool_growth_dropped,omitempty"`
	Timeline               []MemPointJSON   `json:"memory_timeline"`
	StepProfile            []MemPointJSON   `json:"step_memory_profile"`
	StepProfileStep        int              `json:"step_memory_profile_step"`
	AccumulatorBytes       int64            `json:"accumulator_bytes"`
	AllReduceStartBytes    int64            `json:"allreduce_start_bytes"`
	AllReducePeakBytes     int64            `json:"allreduce_peak_bytes"`
}

// PoolChangeJSON is one change of the pool size: with memory growth the pool grows by regions
// that double (2 MiB, 4 MiB, ...), visible here.
type PoolChangeJSON struct {
	TimeS        float64 `json:"time_s"`
	Step         int     `json:"step"`
	PoolBytes    int64   `json:"pool_bytes"`
	RegionBytes  int64   `json:"region_bytes"`
	RequestBytes int64   `json:"request_bytes"`
}

// MemPointJSON is one downsampled interval of the memory timeline.
type MemPointJSON struct {
	TimeS         float64 `json:"time_s"`
	MaxBytesInUse int64   `json:"max_bytes_in_use"`
	BytesInUse    int64   `json:"bytes_in_use"`
	PoolBytes     int64   `json:"pool_bytes"`
}

// ShareJSON is one category of the median step.
type ShareJSON struct {
	Category string  `json:"category"`
	Seconds  float64 `json:"seconds"`
}

// OOMJSON says where the run ran out of memory.
type OOMJSON struct {
	Step          int     `json:"step"`
	MicroStep     int     `json:"micro_step"`
	Op            string  `json:"op"`
	Tensor        string  `json:"tensor"`
	Device        string  `json:"device"`
	Allocator     string  `json:"allocator"`
	RequestBytes  int64   `json:"request_bytes"`
	TimeS         float64 `json:"time_s"`
	Fragmentation float64 `json:"fragmentation"`
	Log           string  `json:"allocator_log"`
}

// PhysicalJSON is one card as nvidia-smi shows it at the end of the run.
type PhysicalJSON struct {
	Index      int   `json:"index"`
	TotalBytes int64 `json:"total_bytes"`
	UsedBytes  int64 `json:"used_bytes"`
}

// ProcessJSON is another process on the GPUs.
type ProcessJSON struct {
	Name      string  `json:"name"`
	PoolBytes []int64 `json:"pool_bytes"`
	Error     string  `json:"error,omitempty"`
}

// NewResultJSON converts a result to its JSON form.
func NewResultJSON(res *analysis.Result) ResultJSON {
	j := ResultJSON{
		Scenario: res.Scenario, OOM: res.OOM != nil, StepTimeS: res.StepTime,
		ThroughputSamplesPerS: finite(res.Throughput), GPUUtilization: finite(res.GPUUtilization),
		InputStallFraction: finite(res.InputStallFraction), AllReduceTimeS: res.AllReduceTime,
		SkippedSteps: res.SkippedSteps, Replicas: res.Replicas, GPUs: res.GPUs, ScalingEfficiency: finite(res.ScalingEfficiency),
		Model: res.Model, GPU: res.GPU, Precision: res.Precision, GlobalBatch: res.GlobalBatch,
		ReplicaBatches: res.ReplicaBatches, AccumulationSteps: res.AccumulationSteps,
		Steps: res.StepsRequested, StepsCompleted: len(res.StepTimes), FastForwardedSteps: res.FastForwarded,
		StepTimesS: res.StepTimes, SimulatedTimeS: res.Elapsed, Notes: res.Notes, Events: res.Events, WorkspaceFallbacks: res.WorkspaceFallbacks,
		AutotunedConvs: res.AutotunedConvs, AutotuneSkips: res.AutotuneSkips,
		Devices: []DeviceJSON{}, Breakdown: []ShareJSON{},
	}
	j.GPUUtilization, j.InputStallFraction = reportedUtilization(res.Result) // 0 with steps_completed 0
	if iv := res.Intervals; iv != nil && iv.SpeedBasis != "" {
		st, tp := iv.StepTime, iv.Throughput
		j.StepTimeSInterval, j.ThroughputSamplesPerSInterval, j.IntervalBasis = &st, &tp, iv.SpeedBasis
	}
	if j.StepTimesS == nil {
		j.StepTimesS = []float64{}
	}
	if o := res.OOM; o != nil {
		j.OOMMessage = o.Message
		j.OOMDetail = &OOMJSON{Step: o.Step, MicroStep: o.MicroStep, Op: o.Op, Tensor: o.Tensor, Device: o.Device,
			Allocator: o.Allocator, RequestBytes: o.Requested, TimeS: o.Time, Fragmentation: finite(o.Fragmentation), Log: o.Log}
	}
	for _, d := range res.Devices {
		dj := DeviceJSON{Name: d.Name, PeakBytesInUse: d.PeakBytesInUse, FirstStepPeakBytes: d.FirstStepPeakBytes, SteadyPeakBytes: d.SteadyPeakBytes, PeakPoolBytes: d.PeakPoolBytes,
			BytesLimit: d.BytesLimit, Allocator: d.Allocator, Idle: d.Idle, Physical: d.Physical, BytesInUse: d.BytesInUse, PoolBytes: d.PoolBytes,
			LargestFreeBlockBytes: d.LargestFreeBlock, BusyFraction: reportedBusy(res.Result, d),
			PoolGrowthDropped: d.GrowthDropped, PoolGrowth: []PoolChangeJSON{}, Timeline: []MemPointJSON{}}
		for _, g := range d.Growth {
			dj.PoolGrowth = append(dj.PoolGrowth, PoolChangeJSON{TimeS: g.Time, Step: g.Step, PoolBytes: g.PoolBytes, RegionBytes: g.RegionBytes, RequestBytes: g.Request})
		}
		for _, p := range d.Timeline {
			dj.Timeline = append(dj.Timeline, MemPointJSON{TimeS: p.Time, MaxBytesInUse: p.MaxInUse, BytesInUse: p.InUse, PoolBytes: p.PoolBytes})
		}
		dj.StepProfile, dj.StepProfileStep = []MemPointJSON{}, d.StepProfileStep
		for _, p := range d.StepProfile {
			dj.StepProfile = append(dj.StepProfile, MemPointJSON{TimeS: p.Time, MaxBytesInUse: p.MaxInUse, BytesInUse: p.InUse, PoolBytes: p.PoolBytes})
		}
		if iv := res.Intervals; iv != nil && len(j.Devices) < len(iv.Peak) && !d.Idle {
			p := iv.Peak[len(j.Devices)]
			dj.PeakBytesInUseInterval = &[2]int64{int64(p[0]), int64(p[1])}
		}
		j.Devices = append(j.Devices, dj)
	}
	for _, s := range res.Breakdown {
		j.Breakdown = append(j.Breakdown, ShareJSON{Category: s.Category, Seconds: s.Seconds})
	}
	j.Physical = []PhysicalJSON{}
	for _, g := range res.Physical {
		j.Physical = append(j.Physical, PhysicalJSON{Index: g.Index, TotalBytes: g.TotalBytes, UsedBytes: g.UsedBytes})
	}
	for _, p := range res.Processes {
		j.Processes = append(j.Processes, ProcessJSON{Name: p.Name, PoolBytes: p.PoolBytes, Error: p.Err})
	}
	inputJSON(&j, res)
	multiGPUJSON(&j, res)
	speedJSON(&j, res)
	return j
}

// WriteResultJSON writes res as one indented JSON object, as encoding/json's Encoder with a
// two-space indent writes it. The step times (one a step: a million for a 1M-step run, most of
// the output) are formatted as they are written instead of held twice as JSON text (the
// encoder's compact and indented copies of the whole object).
func WriteResultJSON(w io.Writer, res *analysis.Result) error {
	j := NewResultJSON(res)
	steps := j.StepTimesS
	if len(steps) > 0 {
		j.StepTimesS = nil // "null": the array is written in its place below
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("write result json: %w", err)
	}
	out := buf.Bytes()
	if len(steps) == 0 {
		if _, err := w.Write(out); err != nil {
			return fmt.Errorf("write result json: %w", err)
		}
		return nil
	}
	// A top-level key at the start of its own line: a string value holds no raw newline.
	const key, null = "\n  \"step_times_s\": ", "null"
	i := bytes.Index(out, []byte(key+null))
	if i < 0 {
		return fmt.Errorf("write result json: step_times_s not in the encoded object")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(out[:i+len(key)])
	bw.WriteByte('[')
	num := make([]byte, 0, 32)
	for k, x := range steps {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("write result json: json: unsupported value: %s", strconv.FormatFloat(x, 'g', -1, 64))
		}
		if k > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		num = appendJSONFloat(num[:0], x)
		bw.Write(num)
	}
	bw.WriteString("\n  ]")
	bw.Write(out[i+len(key)+len(null):])
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write result json: %w", err)
	}
	return nil
}

// appendJSONFloat appends x as encoding/json writes a float64 (encode.go, floatEncoder): the
// shortest decimal that reads back as x, in exponent form below 1e-6 and from 1e21, with a
// two-digit negative exponent cut to one (e-07 as e-7).
func appendJSONFloat(b []byte, x float64) []byte {
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
