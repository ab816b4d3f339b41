package train

import (
	"math"
	"sort"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/train/visibility"
)

// Result is what a run measured. Times are seconds of virtual time, memory is bytes. Report
// renders it; the JSON keys of docs/design.md come from these fields.
type Result struct {
	// Scenario is Config.Name.
	Scenario string
	// Model, GPU and Precision echo the configuration.
	Model, GPU, Precision string
	// Replicas is the number of model replicas (1 for the default strategy).
	Replicas int
	// GPUs is the number of physical GPUs the training process sees (after
	// CUDA_VISIBLE_DEVICES); several replicas share one when logical devices split it.
	GPUs int
	// GlobalBatch is the batch per optimizer update; ReplicaBatches the per-replica share as
	// MirroredStrategy splits it; AccumulationSteps the micro-steps per update.
	GlobalBatch       int
	ReplicaBatches    []int
	AccumulationSteps int
	// StepsRequested is Config.Steps; StepTimes holds one entry per completed optimizer update.
	StepsRequested int
	StepTimes      []float64
	// FastForwarded counts the steps replayed instead of simulated event by event.
	FastForwarded int
	// Elapsed is the simulated time from the start to the last step's end (or the OOM).
	Elapsed float64
	// StepTime is the median of StepTimes (the lower middle value for an even count, so that
	// it is one step's time, the one Breakdown splits); 0 when no step completed.
	StepTime float64
	// Throughput is GlobalBatch / StepTime in samples per second.
	Throughput float64
	// GPUUtilization is the fraction of the run's time the GPUs executed kernels, averaged over
	// the replicas' GPUs.
	GPUUtilization float64
	// InputStallFraction is the fraction of the run's time the step waited for an input batch.
	InputStallFraction float64
	// AllReduceTime is the median all-reduce time per optimizer update (0 with one replica).
	AllReduceTime float64
	// ScalingEfficiency estimates Throughput / (Replicas * throughput of one replica running
	// its own per-replica batch alone) from the breakdown: the step without sync and
	// all-reduce over the step. 1 for a single replica. analysis.Scaling replaces it with the
	// ratio to a simulated one-GPU run.
	ScalingEfficiency float64
	// XLACompiles counts the compilations of the train step under XLA (the first step and
	// each new input shape); XLACompileTime is their total time (also in Breakdown's compile
	// share of the steps that compiled).
	XLACompiles    int
	XLACompileTime float64
	// SkippedSteps counts updates the loss scale optimizer skipped (inf/NaN gradients).
	SkippedSteps int
	// Breakdown splits the median step's time by category; the shares sum to its step time.
	Breakdown []Share
	// ByKind splits the same step by what the time went to: device time of each op kind
	// (conv, matmul, attention, elementwise, norm, cast, optimizer, ...), then launch overhead
	// (GPU idle while the host issues), input wait, sync, all-reduce and XLA compile; only
	// non-zero shares, summing to StepTime.
	ByKind []Share
	// OOM is set when an allocation failed; the run ended there, as TF raises.
	OOM *OOM
	// Devices has one entry per logical GPU of the training process, TF order: the replicas'
	// GPUs first, then the visible GPUs no replica uses (Idle), which TF still initializes.
	Devices []Device
	// Physical is every physical GPU of the host at the end of the run, as nvidia-smi shows
	// it: memory used by all processes (CUDA contexts and allocator pools).
	Physical []PhysicalGPU
	// Processes reports the other processes sharing the GPUs.
	Processes []ProcessResult
	// WorkspaceFallbacks counts cuDNN workspace requests that did not fit; TF does not fail
	// on them (the autotuner picks an algorithm that needs less).
	WorkspaceFallbacks int
	// AutotunedConvs counts the convolution shapes cuDNN profiled on their first run (without
	// XLA), AutotuneSkips the candidate algorithms it skipped because their scratch did not
	// fit. Their scratch is in each device's FirstStepPeakBytes, not SteadyPeakBytes.
	AutotunedConvs, AutotuneSkips int
	// Spans is the run's timeline for traces, bounded: every op of the first Config.TraceSteps
	// steps, and for every simulated step the step itself, its input wait and its all-reduce.
	// The fast-forwarded steps' spans are in Replayed; VisitSpans gives both in time order.
	Spans []Span
	// Replayed holds the fast-forwarded stretches of steps (their spans and per-step
	// utilization, O(1) per stretch).
	Replayed []ReplayedSteps
	// SpansDropped counts op spans left out after the first TraceSteps steps.
	SpansDropped int
	// Utilization is each GPU's busy fraction per simulated step (O(steps) samples); the
	// fast-forwarded steps' are in Replayed, and VisitUtilization gives both.
	Utilization []UtilPoint
	// InputBuffer is the tf.data prefetch buffer's level over time (downsampled by pipeline);
	// empty without an input pipeline.
	InputBuffer []LevelPoint
	// Events is the number of engine events the run processed.
	Events uint64
	// Notes are facts worth telling the user (an environment variable overriding a setting).
	Notes []string
	// Input is the tf.data pipeline's statistics at the end (nil without a pipeline; its
	// buffer level is in InputBuffer); Epochs the step times split by dataset epoch.
	Input  *InputStats
	Epochs []Epoch
	// GPUSeries is each GPU's utilization as nvidia-smi samples it (input.go).
	GPUSeries []UtilSeries
	// InputWaitPerStep is the mean time a replica waited for its batch per optimizer update,
	// seconds (0 when no step completed or the run ran out of memory).
	InputWaitPerStep float64
	// Warnings are configurations that run but likely do not do what the user wants
	// (BatchNormalization under gradient accumulation sees only the micro-batch).
	Warnings []string
	// DeviceTable maps every host GPU to the training process's devices: nvidia-smi index,
	// CUDA ordinal, TF physical and logical device, memory limit, and why a GPU is not used.
	DeviceTable []visibility.Row
	// AllReduce describes the gradient all-reduce of one update (nil with one replica).
	AllReduce *AllReduceInfo
	// Prefix is the run's first steps as a shorter run of the same configuration reports them.
	Prefix Prefix
}

// PrefixSteps is how many steps Result.Prefix covers: step 1 creates the variables, the
// optimizer slots and the autotuning scratch, step 2 is the first steady step.
const PrefixSteps = 2

// Prefix is what a run of the same configuration with Config.Steps = Steps reports of memory:
// its OOM (nil when those steps completed) and each Device's PeakBytesInUse. The steps a
// run simulates do not depend on how many follow them (every seeded schedule is drawn step by
// step, and nothing runs past the last step but the input pipeline, which is why
// Result.Prefix is set only for runs without one and without a host feed), so a long run answers for its
// short prefix (analysis's float32 baseline) without simulating it again
// (TestPrefixMatchesShortRun).
type Prefix struct {
	// Steps is min(Config.Steps, PrefixSteps); 0 when the run has an input pipeline or host feed.
	Steps          int
	OOM            *OOM
	PeakBytesInUse []int64 // one per Devices entry
}

// Span tracks, as report's trace names them.
const (
	TrackCompute   = "compute"
	TrackAllReduce = "all-reduce"
	TrackInput     = "input"
	TrackStep      = "step"
)

// Span is one interval of the timeline: an op, an all-reduce, an input wait or a whole step.
type Span struct {
	Device     int    // replica / logical GPU index
	Track      string // one of the Track constants
	Name       string
	Step       int     // 0-based optimizer update
	Start, Dur float64 // seconds
}

// UtilPoint is one GPU's busy fraction over one step starting at T.
type UtilPoint struct {
	Device  int
	T, Busy float64
}

// LevelPoint is the mean number of batches in the prefetch buffer over [T, T+Width).
type LevelPoint struct {
	T, Width, Mean float64
}

// VisitSpans calls fn for each span in time order (report.SpanSource).
func (r *Result) VisitSpans(fn func(device int, track, name string, step int, start, dur float64)) {
	r.visitSpans(func(s Span) { fn(s.Device, s.Track, s.Name, s.Step, s.Start, s.Dur) })
}

// VisitUtilization calls fn for each utilization sample of each GPU (report.SeriesSource):
// nvidia-smi's (GPUSeries) when the run lasted at least two of its windows, else one per step.
func (r *Result) VisitUtilization(fn func(device int, t, busy float64)) {
	if len(r.GPUSeries) > 0 && len(r.GPUSeries[0].Samples) >= 2 {
		for _, s := range r.GPUSeries {
			for k, v := range s.Samples {
				fn(s.Device, float64(k)*s.Period, v)
			}
		}
		return
	}
	r.visitUtilization(func(u UtilPoint) { fn(u.Device, u.T, u.Busy) })
}

// VisitInputBuffer calls fn for each sample of the prefetch buffer's level (report.SeriesSource).
func (r *Result) VisitInputBuffer(fn func(t, batches float64)) {
	for _, p := range r.InputBuffer {
		fn(p.T, p.Mean)
	}
}

// Share is one category of a step's time.
type Share struct {
	Category string // input, forward, backward, launch, sync, allreduce, optimizer
	Seconds  float64
}

// OOM is where and how the run ran out of memory.
type OOM struct {
	// Step is the optimizer update (1-based; 0 = while creating the variables), MicroStep the
	// micro-step within it, Op the op whose allocation failed, Tensor the tensor.
	Step, MicroStep int
	Op, Tensor      string
	Device          string // "/device:GPU:0"
	Allocator       string // "GPU_0_bfc"
	Requested       int64
	// Message is TF's user-facing error ("OOM when allocating tensor with shape[...] ...").
	Message string
	// Log is the allocator's log: "Allocator (GPU_0_bfc) ran out of memory ..." and its dump.
	Log string
	// Time is the virtual time of the failure in seconds.
	Time float64
	// Wait is how long the allocator waited for frees before failing (BFC's retry, up to
	// kMaxMillisToWait = 10 s), seconds; it ends at Time.
	Wait float64
	// Fragmentation is (free - largest free chunk) / free in the pool at the failure.
	Fragmentation float64
	// Regions is the BFC pool at the failure with each chunk's requested size (nil for the
	// other allocators, which keep no regions).
	Regions []allocator.RegionDump
}

// Device is one logical GPU of the training process.
type Device struct {
	Name      string // "/device:GPU:0"
	Allocator string // "GPU_0_bfc"
	// Physical is the nvidia-smi index of the card it lives on (after CUDA_VISIBLE_DEVICES).
	Physical int
	// Idle is set for a GPU the process initialized but runs no replica on (the default
	// strategy uses the first visible GPU only).
	Idle bool
	// PeakBytesInUse, PeakPoolBytes and BytesLimit are the allocator's statistics at the end.
	PeakBytesInUse, PeakPoolBytes, BytesLimit int64
	// FirstStepPeakBytes is the most in use up to the end of step 1 (variables, the first
	// step's one-time allocations), SteadyPeakBytes the most in use in the steps after (0 when the run
	// ended in step 1). PeakBytesInUse is the larger: what a max-batch search must fit.
	FirstStepPeakBytes, SteadyPeakBytes int64
	// BytesInUse and PoolBytes are the values at the end of the run.
	BytesInUse, PoolBytes int64
	// LargestFreeBlock is the largest free chunk at the end.
	LargestFreeBlock int64
	// Growth is the pool's growth history: one entry per change of the pool size, capped (see
	// GrowthDropped).
	Growth        []PoolChange
	GrowthDropped int
	// Timeline is the memory over time, downsampled to at most Config.TimelinePoints points.
	Timeline []MemPoint
	// StepProfile is the memory within one step, times relative to its start: step 2 (the
	// first with the optimizer slots, as every later step) when it completed, else step 1 up
	// to where the run ended. StepProfileStep says which.
	StepProfile     []MemPoint
	StepProfileStep int
	// BusyFraction is the fraction of the run's time this GPU executed kernels.
	BusyFraction float64
	// AccumulatorBytes is what the gradient accumulators hold (persistent, one per trainable
	// variable; 0 without accumulation).
	AccumulatorBytes int64
	// AllReduceStartBytes is the bytes in use when the last simulated update's all-reduce
	// started (after the backward pass: gradients alive, or in the accumulators), and
	// AllReducePeakBytes the most in use while its buffers were alive (0 with one replica).
	AllReduceStartBytes, AllReducePeakBytes int64
}

// PoolChange is one change of an allocator's pool size.
type PoolChange struct {
	Time      float64 // seconds
	Step      int     // optimizer update (0 = before step 1)
	PoolBytes int64   // pool size after the change
	// RegionBytes is the change: the size of the region added (negative when garbage
	// collection returned regions). With memory growth these double: 2 MiB, 4 MiB, 8 MiB, ...
	RegionBytes int64
	Request     int64 // the allocation that triggered it
}

// MemPoint summarizes one interval of a memory timeline.
type MemPoint struct {
	Time      float64 // start of the interval, seconds
	MaxInUse  int64   // highest bytes in use within the interval
	InUse     int64   // bytes in use at its end
	PoolBytes int64   // pool size at its end
}

// PhysicalGPU is one card of the host.
type PhysicalGPU struct {
	Index                 int // nvidia-smi index
	TotalBytes, UsedBytes int64
}

// ProcessResult is another process sharing the GPUs.
type ProcessResult struct {
	Name string
	// PoolBytes is what its allocators took from each of its GPUs.
	PoolBytes []int64
	// Err is set when the process could not start or allocate what it uses (it is reported,
	// not fatal: the training process still runs).
	Err string
}

// median returns the median of xs: for an even count the lower of the two middle values, so
// that it is one step's time and Breakdown splits exactly that step. 0 for no values.
func median(xs []float64) float64 {
	if i := medianIndex(xs); i >= 0 {
		return xs[i]
	}
	return 0
}

// medianIndex returns the index of a step whose time is the (lower) median.
func medianIndex(xs []float64) int {
	if len(xs) == 0 {
		return -1
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	return idx[(len(idx)-1)/2]
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
