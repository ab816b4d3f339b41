package train

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/pipeline"
)

// Config is one simulated training run. System knobs describe what the user's TensorFlow
// program and machine would do; simulator knobs describe how gpusim simulates it. Build one
// with DefaultConfig and change fields; scenarios.Load does exactly that from YAML.
type Config struct {
	System
	Sim
}

// System holds the knobs of the simulated system: the model, the TF options and the hardware.
type System struct {
	// Model is a zoo model name in lower case (models.Names: "resnet50", "bert-base", ...).
	Model string
	// Batch is the global batch size per optimizer update, split across replicas the way
	// MirroredStrategy splits it and then into AccumulationSteps micro-batches.
	Batch int
	// Precision is the Keras mixed-precision policy: "float32", "mixed_float16" or
	// "mixed_bfloat16".
	Precision string
	// TF32 is tf.config.experimental.enable_tensor_float_32_execution; TF's default is true.
	TF32 bool
	// XLA is jit_compile=True on the train step: fused ops, fewer kernel launches.
	XLA bool
	// TFVersion is the TensorFlow release the run uses ("1.15", "2.4"); "" is a current one.
	// It decides the libraries and which XLA compiles the step: the run reads it through its
	// framework.Profile (Profile, below), as it does CuDNNVersion, KerasVersion and Framework.
	TFVersion string
	// CuDNNVersion is the cuDNN release ("7.6", "8.9"); "" is the one TFVersion was built
	// with (framework.TFReleases). TF32 needs cuDNN 8.0, Tensor Core convolutions cuDNN 7.0.
	CuDNNVersion string
	// ResourceVariables is TF1's tf.compat.v1.enable_resource_variables(): a TF 1.x graph's
	// variables are then resource variables instead of reference variables, so an optimizer
	// written as TF ops (bert-adamw, bert-lamb) assigns its results without copying them
	// (models.PlanOptions.ResourceVariables). TF 2 has resource variables only, so it matters
	// for TFVersion 1.x alone.
	ResourceVariables bool
	// L2Decay: the graph adds an L2 penalty of every trainable variable but batch norm's to
	// the loss (weight_decay * sum of tf.nn.l2_loss(v)), as NVIDIA's ConvNets model/resnet.py
	// does, rather than decaying in the optimizer or not at all (models.PlanOptions.L2Decay).
	L2Decay bool
	// StaticLossScale: mixed_float16 with a fixed loss scale (ConvNets --static_loss_scale,
	// utils/optimizers.py FixedLossScalerOptimizer): the gradients are unscaled, never checked
	// for inf/NaN, and no update is skipped (models.PlanOptions.StaticLossScale).
	StaticLossScale bool
	// Framework is what differentiates the step: "tensorflow" (default; TF's registered
	// gradients) or "jax" (Keras 3 on the JAX backend: JAX's gradients, which decide what XLA
	// keeps for backward; models.PlanOptions.JAX).
	Framework string
	// XLADistinctShapes is how many distinct input shapes the train step sees (sequence-length
	// buckets, a ragged last batch): under XLA each new shape compiles the step again (xla.go).
	// 0 or 1 means one shape: only the first step compiles.
	XLADistinctShapes int
	// Optimizer is the Keras optimizer name ("sgd", "momentum", "adam", ...); it decides the
	// slot variables allocated at the first update.
	Optimizer string
	// GPU is the hw profile name of every physical GPU ("a100-40gb", "h200", ...) or "@path"
	// to a profile file.
	GPU string
	// GPUProfile, when not nil, is the GPU profile itself (a calibration candidate built in
	// memory) and GPU only names it; nil means GPU is looked up (hw.LookupGPU).
	GPUProfile *hw.GPU
	// GPUCount is how many physical GPUs the host has (each host, with Nodes > 1).
	GPUCount int
	// Nodes is how many hosts train together (MultiWorkerMirroredStrategy, one worker per
	// host, or Horovod across hosts); 0 and 1 mean one host.
	Nodes int
	// HostCores is the host's schedulable CPU cores, used by the input pipeline (0 = the
	// pipeline's host: Input.Pipeline.Host.Cores).
	HostCores int
	// HostGatherRate is how fast the host gathers a shuffled batch out of numpy arrays into a
	// new array, bytes per second: Keras fit's array data adapter, page faults of the new
	// array included (FitFromArrays). 0 takes the H200 machine's measured rate
	// (JAXArraysGatherRate; ArraysGatherRate for TF's lumped feed). A VM's memory speed
	// varies from hour to hour (testdata/h200/keras/repeat): a recording that measured its
	// host sets it.
	HostGatherRate float64
	// Host is the hw host profile ("h200-vm", "dgx-a100", ...; "" = hw.DefaultHost()) whose
	// cores, RAM and disk bandwidth the tf.data pipeline runs on, where the input section
	// leaves pipeline's defaults.
	Host string
	// Topology is how the box's GPUs reach each other, overriding the host profile's
	// interconnect (or, without a host profile, the guess from the GPU): "nvswitch",
	// "nvlink" (point to point, DGX-1's hybrid cube mesh), "pcie" (P2P through the CPU's root
	// complex, nvidia-smi topo's PHB), or "pcie-pix", "pcie-pxb", "pcie-phb", "pcie-sys" to
	// name the worst hop of the ring; "" keeps the host's.
	Topology string
	// CUDAVisibleDevices is the CUDA_VISIBLE_DEVICES value the process starts with; nil means
	// unset (every GPU visible). Env["CUDA_VISIBLE_DEVICES"] sets it too.
	CUDAVisibleDevices *string
	// VisibleDevices is tf.config.set_visible_devices([gpus[i] for i in VisibleDevices], "GPU")
	// over the physical devices CUDA shows (indices of tf.config.list_physical_devices("GPU"));
	// nil means not called, an empty non-nil list hides every GPU.
	VisibleDevices []int
	// Device is a tf.device scope around the model and its training ("/GPU:1"); "" means none.
	// Only the default strategy honours it (MirroredStrategy places its own replicas).
	Device string
	// SoftPlacement is tf.config.set_soft_device_placement; nil means TF 2's default (on).
	SoftPlacement *bool
	// LayoutOptimizer is grappler's layout optimizer
	// (tf.config.optimizer.set_experimental_options({"layout_optimizer": ...})); nil means
	// TF's default (on), which runs float32 training convolutions NCHW. Off, the graph's
	// convolutions run in the model's format, Keras's channels_last: NHWC, no transposes
	// around TF32 ones. XLA lays its convolutions out itself either way (xlaConvNHWC).
	LayoutOptimizer *bool
	// Strategy is "default" (one replica on the first visible GPU), "mirrored"
	// (tf.distribute.MirroredStrategy: one process, one replica per logical GPU),
	// "multi_worker_mirrored" (tf.distribute.MultiWorkerMirroredStrategy: one process per host,
	// a replica per GPU, NCCL across hosts) or "horovod" (one process per GPU, Horovod's NCCL
	// all-reduce: how NVIDIA's DeepLearningExamples train).
	Strategy string
	// NumPacks is NcclAllReduce(num_packs): how many packs the gradients are split into for
	// all-reduce (TF's default is 1).
	NumPacks int
	// CrossDeviceOps is MirroredStrategy(cross_device_ops=...): "nccl" (NcclAllReduce),
	// "hierarchical_copy" (HierarchicalCopyAllReduce) or "reduction_to_one_device"; "" lets TF
	// choose (select_cross_device_ops: NCCL unless logical and physical GPU counts differ).
	CrossDeviceOps string
	// StrategyDevices is MirroredStrategy(devices=["/gpu:i", ...]): the logical GPUs that get a
	// replica (indices after CUDA_VISIBLE_DEVICES and set_visible_devices); nil means all.
	StrategyDevices []int
	// HorovodCompression is the gradients' dtype on the wire: "none" (all-reduced in their own
	// dtype) or "fp16" (float32 gradients cast to float16 before the all-reduce and back after,
	// half the bytes). Under Horovod it is hvd.DistributedOptimizer(compression=...)
	// (Compression.fp16; NVIDIA's BERT scripts pass it with --amp); under MirroredStrategy it
	// is tf_cnn_benchmarks' replicated all-reduce with --use_fp16, whose
	// --compact_gradient_transfer (on by default) casts each gradient to float16 for the NCCL
	// all-reduce (variable_mgr.py VariableMgrLocalReplicated.preprocess_device_grads:
	// compact_grads = use_fp16 and compact_gradient_transfer). "" is "none".
	HorovodCompression string
	// AccumulationSteps is how many micro-batches make one optimizer update (1 = none).
	AccumulationSteps int
	// StepsPerExecution is model.compile(steps_per_execution=N): Keras runs N steps per call
	// of its train function, so the host's per-step cost outside the ops (the GPU profile's
	// StepOverhead: the Python loop, callbacks, the iterator) is paid once per N steps. Under
	// Framework "jax" Keras still calls the jitted step once per batch, so the dispatch over
	// the state arrays is paid every step (dispatch.go).
	StepsPerExecution int
	// KerasVersion is the Keras that builds the model: 2 (tf.keras 2.x, TF up to 2.15 or
	// TF_USE_LEGACY_KERAS=1) or 3 (Keras 3, TF 2.16's default and the JAX backend's); 0 takes
	// it from TFVersion and Framework (framework.Profile.Keras).
	// Under XLA it decides what a batch norm compiles to: tf.keras 2.x calls
	// FusedBatchNormV3, which tf2xla turns into an HLO batch-norm op that BatchNormExpander
	// expands with both statistics from one pass over x; Keras 3's BatchNormalization calls
	// ops.moments (keras/src/backend/{tensorflow,jax}/nn.py: the mean, then the variance
	// around it, two passes) and an element-wise normalization (xla.go, opWork).
	KerasVersion int
	// FitFromArrays is model.fit(x, y) on in-memory (numpy) arrays with Input nil: the host
	// gathers each batch and copies it to the GPU, one batch ahead of the step (arrays.go).
	// False with Input nil is data already on the GPU.
	FitFromArrays bool
	// FitArraysSamples is how many samples the arrays of FitFromArrays hold (0: as many as
	// the run needs, no epoch ends). fit runs ceil(samples/batch) steps per epoch; at an
	// epoch's end the host waits for the last step and starts the next epoch's batches
	// afresh (arrays.go), and under JAX syncs every state array back to the model.
	FitArraysSamples int
	// InputOnDevice says each batch is already in GPU memory when the step starts (a dataset
	// kept on the GPU, a batch reused from the device, as the device-fed Keras recordings in
	// testdata/h200/keras ran): the step's input copy costs nothing. Without it a step with
	// Input nil still copies its batch from the host (synthetic tf.data on the host CPU).
	InputOnDevice bool
	// Memory holds the memory options of the training process.
	Memory Memory
	// Input is the tf.data input pipeline; nil means the batches are already on the GPU
	// (synthetic data), so the step never waits for input.
	Input *Input
	// Env holds TF and CUDA environment variables of the process (TF_FORCE_GPU_ALLOW_GROWTH,
	// TF_GPU_ALLOCATOR, CUDA_VISIBLE_DEVICES, TF_DEVICE_MIN_SYS_MEMORY_IN_MB, ...).
	Env map[string]string
	// Processes are other processes on the same host that start before this one and keep
	// running (a Jupyter kernel that still holds its pool, a second training job).
	Processes []Process
}

// Memory holds a process's GPU memory options, as TF names them.
type Memory struct {
	// Mode is a shorthand for which memory call the program makes: "preallocate" (none: TF's
	// default), "growth" (set_memory_growth(True)) or "limit" (a logical device with
	// memory_limit=LimitMiB). With Mode set, the limit fields apply only to "limit", so that
	// one LimitMiB serves a comparison of the three. Empty means decided by the fields below;
	// a Mode that contradicts Growth is an error.
	Mode string
	// Growth is tf.config.experimental.set_memory_growth on every visible GPU; nil = not called.
	Growth *bool
	// GrowthAfterLimit says the program calls set_memory_growth after
	// set_logical_device_configuration (LimitMiB or LogicalMiB); TF raises ValueError
	// (allocator.Options.GrowthAfterLogical). False is the other order, which TF accepts and in
	// which the logical configuration silently wins over growth. Without Growth (no
	// set_memory_growth call) or without a logical configuration the order changes nothing.
	GrowthAfterLimit bool
	// LimitMiB is set_logical_device_configuration(gpu, [LogicalDeviceConfiguration(
	// memory_limit=LimitMiB)]) on every visible GPU; 0 = not called.
	LimitMiB int64
	// LogicalMiB splits every visible GPU into several logical GPUs (virtual devices):
	// set_logical_device_configuration(gpu, [LogicalDeviceConfiguration(memory_limit=m) for m
	// in LogicalMiB]). Replicas on one card share its compute. Exclusive with LimitMiB.
	LogicalMiB []int64
	// Fraction is per_process_gpu_memory_fraction (0 = unset).
	Fraction float64
	// Allocator is "bfc" (default), "cuda_malloc_async" or "platform".
	Allocator string
	// GC is TF_ENABLE_GPU_GARBAGE_COLLECTION; nil = TF's default (true).
	GC *bool
}

// Input holds the tf.data knobs of the input pipeline.
type Input struct {
	// Prefetch is dataset.prefetch(n); Autotune for tf.data.AUTOTUNE, 0 for no prefetch.
	Prefetch int
	// ParallelCalls is map(num_parallel_calls=n); Autotune for AUTOTUNE, 0 for sequential.
	ParallelCalls int
	// Cache is "none", "memory" or "file".
	Cache string
	// Pipeline describes everything else about the data and the host: records, their size,
	// the map function's CPU cost, the element size, shuffle buffer, host cores and memory,
	// the host-to-device copy. A zero value means DefaultInput's (ImageNet JPEGs). The
	// host's fields are set or not: Host.Cores, Host.MemoryBytes, StorageBandwidth and
	// CacheFileBandwidth left 0 come from the host profile (Config.Host); a value set is kept,
	// whatever the profile. Its Batch, Prefetch, ParallelCalls and Cache are set from the run.
	Pipeline pipeline.Config
}

// DefaultInput returns a tf.data pipeline with no prefetch, sequential map and no cache (what
// a dataset does when the user configures nothing) over pipeline.DefaultConfig's dataset,
// with the host's fields unset: they come from the host profile.
func DefaultInput() Input {
	pc := pipeline.DefaultConfig()
	pc.Host.Cores, pc.Host.MemoryBytes = 0, 0
	pc.StorageBandwidth, pc.CacheFileBandwidth = 0, 0
	return Input{Cache: "none", Pipeline: pc}
}

// pipelineConfig is the tf.data configuration of the run on host h: the dataset batch is one
// global micro-batch (the strategy splits it over the replicas); the host's fields not set
// come from h (Config.HostCores, when set, is the host's cores).
func (in *Input) pipelineConfig(batch, accumulation, hostCores int, h hw.Host) pipeline.Config {
	pc := in.Pipeline
	if pc.Records == 0 {
		pc = DefaultInput().Pipeline
	}
	switch {
	case hostCores > 0:
		pc.Host.Cores = hostCores
	case pc.Host.Cores == 0:
		// The profile's cores with its threads per core (a core count set by hand says
		// nothing of them).
		pc.Host.Cores, pc.Host.ThreadsPerCore, pc.Host.SMTGain = h.Cores, h.ThreadsPerCore, h.SMTGain
	}
	if pc.Host.MemoryBytes == 0 {
		pc.Host.MemoryBytes = h.MemoryBytes
	}
	if pc.StorageBandwidth == 0 {
		pc.StorageBandwidth = h.DiskBandwidth
	}
	if pc.CacheFileBandwidth == 0 {
		pc.CacheFileBandwidth = h.DiskBandwidth
	}
	pc.Batch = (batch + accumulation - 1) / accumulation
	pc.Prefetch = pipeline.Tunable(in.Prefetch)
	pc.ParallelCalls = pipeline.Tunable(in.ParallelCalls)
	pc.Cache = in.Cache
	return pc
}

// Autotune stands for tf.data.AUTOTUNE in Input fields (TF uses -1 too).
const Autotune = -1

// Process is another process sharing the GPUs.
type Process struct {
	// Name labels the process in reports ("jupyter").
	Name string
	// Framework is "tensorflow" (default) or "jax".
	Framework string
	// GPUs are the physical GPU indices the process sees (nil = all).
	GPUs []int
	// Memory holds the process's memory options.
	Memory Memory
	// Env holds its environment variables.
	Env map[string]string
	// UsedBytes is what its tensors hold on each of its GPUs (allocated through its
	// allocator, so preallocation or growth decide how much the card loses).
	UsedBytes int64
}

// Sim holds the simulator's own knobs.
type Sim struct {
	// Name labels the run in reports (the scenario name).
	Name string
	// Steps is how many optimizer updates to simulate.
	Steps int
	// Seed derives every random stream of the run (input workers, loss-scale overflows).
	Seed uint64
	// TimelinePoints caps the samples kept per device memory timeline (downsampled so that a
	// long run holds O(steps) data at most).
	TimelinePoints int
	// UtilizationSamples caps the samples kept per GPU utilization series (Result.GPUSeries):
	// nvidia-smi's windows until a run has more, then windows merged pairwise as often as
	// needed (pipeline.UtilizationMeter).
	UtilizationSamples int
	// TraceSteps is how many steps keep every op in Result.Spans (later steps keep only their
	// step, input and all-reduce spans).
	TraceSteps int
	// FastForward lets Run replay steps that are provably identical to the previous one
	// instead of simulating them event by event.
	FastForward bool
	// SymmetricReplicas runs every replica's kernels at their mean time: no run-to-run
	// variation between GPUs (train/replicas.go stepJitterCV), so no replica waits for a
	// slower one and identical steps can be fast-forwarded. Off by default: real replicas
	// differ and the slowest sets the step.
	SymmetricReplicas bool
}

// DefaultConfig returns TF's defaults on one A100-40GB training ResNet-50 with batch 64.
func DefaultConfig() Config {
	return Config{
		System: System{
			Model:             "resnet50",
			Batch:             64,
			Precision:         "float32",
			TF32:              true, // enable_tensor_float_32_execution defaults to true (TF 2.4+)
			Optimizer:         "sgd",
			GPU:               "a100-40gb",
			GPUCount:          1,
			Strategy:          "default",
			NumPacks:          1, // tf.distribute.NcclAllReduce(num_packs=1)
			AccumulationSteps: 1,
			StepsPerExecution: 1,
			Memory:            Memory{Allocator: "bfc"},
		},
		Sim: Sim{
			Name:               "default",
			Steps:              100,
			Seed:               1,
			TimelinePoints:     400,
			UtilizationSamples: pipeline.DefaultMaxSamples,
			TraceSteps:         2,
			FastForward:        true,
		},
	}
}

// FieldError is a bad value of one configuration field, named by its Go path from Config
// ("Memory.LimitMiB", "Processes[0].UsedBytes", "Input.Pipeline.Records"); scenarios maps the
// path to its key and the file line that set it.
type FieldError struct {
	Field string
	Err   error
	// Mentions are the other fields, by Go path, that Err's message names ("limit needs
	// Memory.LimitMiB"), so that scenarios can write their keys in their place.
	Mentions []string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// fieldErrNaming is fieldErr for a message that names the fields mentions (Go paths).
func fieldErrNaming(field string, mentions []string, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...), Mentions: mentions}
}

// MultiReplica says the strategy runs one replica per GPU (every strategy but "default").
// Profile resolves the framework and releases the run uses (framework.Resolve): the one place
// TFVersion, CuDNNVersion, KerasVersion and Framework are read. cc is the GPU's compute
// capability (major*10+minor; 0 before a GPU is chosen). The error names the bad Go fields.
func (c *Config) Profile(cc int) (framework.Profile, error) {
	name, err := framework.ParseName(c.Framework)
	if err != nil {
		return framework.Profile{}, &FieldError{Field: "Framework", Err: err}
	}
	p, err := framework.Resolve(framework.Spec{Framework: name, TF: c.TFVersion, CuDNN: c.CuDNNVersion,
		Keras: c.KerasVersion, LegacyKeras: legacyKeras(c.Env), CC: cc})
	var errs framework.Errors
	if errors.As(err, &errs) {
		return p, specFieldErrors(errs)
	}
	return p, err
}

// specFields maps framework.Spec's fields to Config's.
var specFields = map[string]string{"TF": "TFVersion", "CuDNN": "CuDNNVersion", "Keras": "KerasVersion"}

// specFieldErrors turns framework's errors into FieldErrors (one error, or a joined list).
func specFieldErrors(errs framework.Errors) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = &FieldError{Field: specFields[e.Field], Err: e.Err}
	}
	if len(out) == 1 {
		return out[0]
	}
	return errors.Join(out...)
}

// legacyKeras reports whether env sets TF_USE_LEGACY_KERAS the way TF's package
// __init__ reads it (tensorflow/api_template.__init__.py: "true", "True" or "1").
func legacyKeras(env map[string]string) bool {
	switch env["TF_USE_LEGACY_KERAS"] {
	case "1", "true", "True":
		return true
	}
	return false
}

func (c *Config) MultiReplica() bool {
	switch c.Strategy {
	case "mirrored", "multi_worker_mirrored", "horovod":
		return true
	}
	return false
}

// OneRuntime says every replica is driven by one TF runtime in one process, so that its host
// threads dispatch the ops of all replicas: MirroredStrategy (and MultiWorkerMirroredStrategy
// within a host). Horovod runs one process per GPU.
func (c *Config) OneRuntime() bool {
	return c.Strategy == "mirrored" || c.Strategy == "multi_worker_mirrored"
}

// NodeCount is Nodes with 0 read as 1.
func (c *Config) NodeCount() int { return max(c.Nodes, 1) }

// Precisions, strategies, allocators and caches accepted by Validate.
var (
	precisions = []string{"float32", "mixed_float16", "mixed_bfloat16"}
	strategies = []string{"default", "mirrored", "multi_worker_mirrored", "horovod"}
	topologies = []string{"nvswitch", "nvlink", "pcie", "pcie-pix", "pcie-pxb", "pcie-phb", "pcie-sys"}
	allocators = []string{"bfc", "cuda_malloc_async", "platform"}
	caches     = []string{"none", "memory", "file"}
	modes      = []string{"preallocate", "growth", "limit"}
)

func oneOf(field, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fieldErr(field, "%q is not one of %s", v, strings.Join(allowed, ", "))
}

// Validate checks the fields that need no catalog (model and GPU names are checked by Run
// and by scenarios against the zoo and the hw table). Errors are *FieldError.
func (c *Config) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	c.validateJob(add)
	c.validateReplicas(add)
	if c.AccumulationSteps <= 0 {
		add(fieldErr("AccumulationSteps", "must be positive, got %d", c.AccumulationSteps))
	}
	c.validateVersions(add)
	if c.StepsPerExecution <= 0 {
		add(fieldErr("StepsPerExecution", "must be positive, got %d", c.StepsPerExecution))
	}
	add(c.Memory.validate("Memory"))
	if c.Input != nil {
		c.validateInput(add)
	}
	if _, err := framework.ParseName(c.Framework); err != nil {
		add(&FieldError{Field: "Framework", Err: err})
	}
	c.validateProcesses(add)
	if c.Steps <= 0 {
		add(fieldErr("Steps", "must be positive, got %d", c.Steps))
	}
	if c.TraceSteps < 0 {
		add(fieldErr("TraceSteps", "must not be negative, got %d", c.TraceSteps))
	}
	if c.TimelinePoints < 2 {
		add(fieldErr("TimelinePoints", "must be at least 2, got %d", c.TimelinePoints))
	}
	if c.UtilizationSamples < 2 {
		add(fieldErr("UtilizationSamples", "must be at least 2, got %d", c.UtilizationSamples))
	}
	return errors.Join(errs...)
}

// validateJob checks the model, batch, precision, GPU and where the batches come from.
func (c *Config) validateJob(add func(error)) {
	if c.Model == "" {
		add(fieldErr("Model", "must be set"))
	}
	if c.Batch <= 0 {
		add(fieldErr("Batch", "must be positive, got %d", c.Batch))
	}
	add(oneOf("Precision", c.Precision, precisions))
	if c.GPU == "" && c.GPUProfile == nil {
		add(fieldErr("GPU", "must be set"))
	}
	if c.InputOnDevice && (c.FitFromArrays || c.Input != nil) {
		add(fieldErrNaming("InputOnDevice", []string{"FitFromArrays", "Input"}, "the batches cannot be on the GPU already and come from host arrays or tf.data too (FitFromArrays or Input)"))
	}
	if c.FitArraysSamples < 0 {
		add(fieldErr("FitArraysSamples", "must not be negative, got %d", c.FitArraysSamples))
	}
	if c.FitArraysSamples > 0 && !c.FitFromArrays {
		add(fieldErr("FitArraysSamples", "needs FitFromArrays: it is the size of fit's numpy arrays"))
	}
	if c.XLADistinctShapes < 0 {
		add(fieldErr("XLADistinctShapes", "must not be negative, got %d", c.XLADistinctShapes))
	}
	if c.HostCores < 0 {
		add(fieldErr("HostCores", "must not be negative, got %d", c.HostCores))
	}
	if c.HostGatherRate < 0 || math.IsNaN(c.HostGatherRate) || math.IsInf(c.HostGatherRate, 0) {
		add(fieldErr("HostGatherRate", "must be a positive finite rate in bytes/s, got %g", c.HostGatherRate))
	}
}

// validateReplicas checks the GPUs, the strategy, the hosts and the all-reduce.
func (c *Config) validateReplicas(add func(error)) {
	if c.GPUCount <= 0 {
		add(fieldErr("GPUCount", "must be positive, got %d", c.GPUCount))
	}
	add(oneOf("Strategy", c.Strategy, strategies))
	if c.Topology != "" {
		add(oneOf("Topology", c.Topology, topologies))
	}
	if c.Nodes < 0 {
		add(fieldErr("Nodes", "must not be negative, got %d", c.Nodes))
	}
	if c.Nodes > 1 {
		switch c.Strategy {
		case "multi_worker_mirrored", "horovod":
		default:
			add(fieldErrNaming("Nodes", []string{"Strategy"}, "%d hosts need Strategy multi_worker_mirrored or horovod (MirroredStrategy and the default strategy run on one host), got %q", c.Nodes, c.Strategy))
		}
		if c.CUDAVisibleDevices != nil || len(c.Processes) > 0 || c.VisibleDevices != nil || len(c.Memory.LogicalMiB) > 0 {
			add(fieldErrNaming("Nodes", []string{"CUDAVisibleDevices", "VisibleDevices", "Memory.LogicalMiB", "Processes"},
				"%d hosts: CUDAVisibleDevices, VisibleDevices, Memory.LogicalMiB (logical devices) and Processes are simulated on one host only", c.Nodes))
		}
	}
	if c.NumPacks < 0 {
		// NcclAllReduce: "NCCL all-reduce requires num_packs >= 0"; 0 reduces gradient by gradient.
		add(fieldErr("NumPacks", "must not be negative, got %d", c.NumPacks))
	}
	if c.CrossDeviceOps != "" {
		add(oneOf("CrossDeviceOps", c.CrossDeviceOps, crossDeviceOps))
	}
	if c.HorovodCompression != "" {
		add(oneOf("HorovodCompression", c.HorovodCompression, []string{"none", "fp16"}))
		if c.HorovodCompression == "fp16" && c.Strategy != "horovod" && c.Strategy != "mirrored" {
			add(fieldErr("HorovodCompression", "fp16 casts the gradients for a multi-GPU all-reduce: it needs strategy horovod or mirrored, got %q", c.Strategy))
		}
	}
	if c.Device != "" && c.MultiReplica() {
		add(fieldErrNaming("Device", []string{"VisibleDevices", "CUDAVisibleDevices"}, "MirroredStrategy runs each replica under its own device scope, so an enclosing tf.device does not choose its GPUs; choose them with VisibleDevices or CUDAVisibleDevices"))
	}
}

// validateVersions checks the TensorFlow, cuDNN and Keras releases and that they go together
// (framework.Resolve, through Profile).
func (c *Config) validateVersions(add func(error)) {
	if _, err := framework.ParseName(c.Framework); err != nil {
		return // reported with the Framework field
	}
	_, err := c.Profile(0)
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			add(e)
		}
		return
	}
	add(err)
}

// validateInput checks the tf.data input section, its pipeline against the host's cores.
func (c *Config) validateInput(add func(error)) {
	in := c.Input
	if in.Prefetch < Autotune {
		add(fieldErr("Input.Prefetch", "must be a count or autotune, got %d", in.Prefetch))
	}
	if in.ParallelCalls < Autotune {
		add(fieldErr("Input.ParallelCalls", "must be a count or autotune, got %d", in.ParallelCalls))
	}
	add(oneOf("Input.Cache", in.Cache, caches))
	if in.Pipeline.Records != 0 {
		h, err := hw.LookupHost(c.Host)
		if c.Host == "" || err != nil {
			h = hw.DefaultHost() // an unknown profile is the run's error (InputPipeline)
		}
		pc := in.pipelineConfig(c.Batch, c.AccumulationSteps, c.HostCores, h)
		if err := pc.Validate(); err != nil {
			var fe *pipeline.FieldError
			if errors.As(err, &fe) {
				err = &FieldError{Field: "Input.Pipeline." + fe.Field, Err: fe.Err}
			}
			add(err)
		}
	}
}

// validateProcesses checks the other processes sharing the GPUs.
func (c *Config) validateProcesses(add func(error)) {
	for i, p := range c.Processes {
		f := fmt.Sprintf("Processes[%d]", i)
		add(p.Memory.validate(f + ".Memory"))
		if p.UsedBytes < 0 {
			add(fieldErr(f+".UsedBytes", "must not be negative"))
		}
		if _, err := framework.ParseName(p.Framework); err != nil {
			add(&FieldError{Field: f + ".Framework", Err: err})
		}
		for _, g := range p.GPUs {
			if g < 0 || g >= c.GPUCount {
				add(fieldErrNaming(f+".GPUs", []string{"GPUCount"}, "GPU %d does not exist (GPUCount is %d)", g, c.GPUCount))
			}
		}
	}
}

func (m *Memory) validate(prefix string) error {
	var errs []error
	if m.Mode != "" {
		if err := oneOf(prefix+".Mode", m.Mode, modes); err != nil {
			errs = append(errs, err)
		}
	}
	if m.LimitMiB < 0 {
		errs = append(errs, fieldErr(prefix+".LimitMiB", "must not be negative, got %d", m.LimitMiB))
	}
	for _, l := range m.LogicalMiB {
		if l <= 0 {
			errs = append(errs, fieldErr(prefix+".LogicalMiB", "every memory_limit must be positive, got %d", l))
			break
		}
	}
	if len(m.LogicalMiB) > 0 && m.LimitMiB > 0 {
		errs = append(errs, fieldErrNaming(prefix+".LogicalMiB", []string{prefix + ".LimitMiB", prefix + ".LogicalMiB"}, "set either %s.LimitMiB or %s.LogicalMiB", prefix, prefix))
	}
	if m.Fraction < 0 || m.Fraction > 1 {
		// TF accepts fractions above 1 (unified memory); gpusim does not simulate that.
		errs = append(errs, fieldErr(prefix+".Fraction", "must be in [0, 1], got %g", m.Fraction))
	}
	if m.Allocator != "" {
		if err := oneOf(prefix+".Allocator", m.Allocator, allocators); err != nil {
			errs = append(errs, err)
		}
	}
	switch m.Mode {
	case "growth":
		if m.Growth != nil && !*m.Growth {
			errs = append(errs, fieldErrNaming(prefix+".Mode", []string{prefix + ".Growth"}, "growth contradicts %s.Growth=false", prefix))
		}
	case "limit":
		if m.LimitMiB == 0 && len(m.LogicalMiB) == 0 {
			errs = append(errs, fieldErrNaming(prefix+".Mode", []string{prefix + ".LimitMiB"}, "limit needs %s.LimitMiB", prefix))
		}
	case "preallocate":
		if m.Growth != nil && *m.Growth {
			errs = append(errs, fieldErrNaming(prefix+".Mode", []string{prefix + ".Growth"}, "preallocate contradicts %s.Growth=true", prefix))
		}
	}
	return errors.Join(errs...)
}
