package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Autotune stands for tf.data.AUTOTUNE, which TF spells -1 too (tf.data.AUTOTUNE ==
// tf.data.experimental.AUTOTUNE == -1, dataset_ops.py).
const Autotune Tunable = -1

// Tunable is a count that may also be Autotune: map(num_parallel_calls=...) and prefetch(...).
// As text it reads and writes "autotune" or a non-negative integer.
type Tunable int

// String returns "autotune" or the number.
func (t Tunable) String() string {
	if t == Autotune {
		return "autotune"
	}
	return strconv.Itoa(int(t))
}

// UnmarshalText accepts "autotune" (any case, also "tf.data.AUTOTUNE") or an integer >= 0.
func (t *Tunable) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch strings.ToLower(s) {
	case "autotune", "tf.data.autotune", "tf.data.experimental.autotune", "-1":
		*t = Autotune
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want an integer >= 0 or \"autotune\", got %q", s)
	}
	*t = Tunable(n)
	return nil
}

// MarshalText writes the String form.
func (t Tunable) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Dist is a distribution of a duration in seconds: a map function's CPU cost per element.
type Dist struct {
	// Kind is "const" (the default), "normal" (truncated at zero), "lognormal", "exponential"
	// or "uniform" (Mean ± Stddev·√3).
	Kind string `yaml:"kind"`
	// Mean is the mean in seconds.
	Mean float64 `yaml:"mean"`
	// Stddev is the standard deviation in seconds (ignored by const and exponential).
	Stddev float64 `yaml:"stddev"`
}

// Const returns a distribution that always gives s seconds.
func Const(s float64) Dist { return Dist{Kind: "const", Mean: s} }

// Sample draws one value in seconds (never negative).
func (d Dist) Sample(r *rand.Rand) float64 {
	switch d.Kind {
	case "", "const":
		return d.Mean
	case "normal":
		return math.Max(0, d.Mean+d.Stddev*r.NormFloat64())
	case "lognormal":
		if d.Mean <= 0 {
			return 0
		}
		// Parameters of the underlying normal from the mean and variance of the lognormal.
		s2 := math.Log1p(d.Stddev * d.Stddev / (d.Mean * d.Mean))
		if math.IsInf(s2, 1) {
			// A mean so far below the spread (1e-303 s against milliseconds) that the
			// variance overflows: the median, mean/sqrt(1+cv^2), is 0 in float64.
			return 0
		}
		mu := math.Log(d.Mean) - s2/2
		return math.Exp(mu + math.Sqrt(s2)*r.NormFloat64())
	case "exponential":
		return d.Mean * r.ExpFloat64()
	case "uniform":
		h := d.Stddev * math.Sqrt(3)
		return math.Max(0, d.Mean-h+2*h*r.Float64())
	}
	panic("pipeline: unknown distribution " + d.Kind)
}

func (d Dist) validate() error {
	switch d.Kind {
	case "", "const", "normal", "lognormal", "exponential", "uniform":
	default:
		return fmt.Errorf("kind %q: want const, normal, lognormal, exponential or uniform", d.Kind)
	}
	if d.Mean < 0 || d.Stddev < 0 || math.IsNaN(d.Mean) || math.IsNaN(d.Stddev) || math.IsInf(d.Mean, 0) {
		return fmt.Errorf("mean %v, stddev %v: want finite values >= 0", d.Mean, d.Stddev)
	}
	return nil
}

// Host is the machine the pipeline runs on. train fills it from its hw.Host profile.
type Host struct {
	// Cores is the number of schedulable CPU cores (port::NumSchedulableCPUs): the size of
	// tf.data's runner thread pool and AUTOTUNE's CPU budget.
	Cores int `yaml:"cores"`
	// BusyCores are cores taken by other host work (the Python training loop, other
	// processes); map workers share the rest. AUTOTUNE does not know about them: TF budgets
	// all schedulable cores.
	BusyCores int `yaml:"busy_cores"`
	// ThreadsPerCore is the hardware threads of one physical core (2 with Intel's
	// Hyper-Threading or AMD's SMT; 0 or 1: none): Cores counts threads, as
	// NumSchedulableCPUs does.
	ThreadsPerCore int `yaml:"threads_per_core"`
	// SMTGain is how much more a core does with both its threads busy than with one: two calls
	// on one core run together at 1+SMTGain times one call's speed (CPU).
	SMTGain float64 `yaml:"smt_gain"`
	// MemoryBytes is host RAM. AUTOTUNE's RAM budget is half of it (kRamBudgetShare = 0.5,
	// tensorflow/core/framework/model.h), and the prefetch autotuner never grows a buffer
	// past the free memory (PrefetchAutotuner::RecordConsumption).
	MemoryBytes int64 `yaml:"memory_bytes"`
}

// Config holds the tf.data knobs of one pipeline:
//
//	source(Records of RecordBytes at StorageBandwidth) -> map(MapCost, ParallelCalls)
//	  -> cache(Cache) -> shuffle(ShuffleBuffer) -> batch(Batch) -> prefetch(Prefetch)
//	  -> copy to the GPU (H2D)
//
// Durations are in seconds, bandwidths in bytes per second. A zero bandwidth means free.
type Config struct {
	// Records is the dataset's cardinality: elements per epoch.
	Records int `yaml:"records"`
	// RecordBytes is what one element reads from storage.
	RecordBytes int64 `yaml:"record_bytes"`
	// StorageBandwidth is the storage's sequential read rate; reads are serial, as a
	// TFRecordDataset's reader is.
	StorageBandwidth float64 `yaml:"storage_bandwidth"`
	// ReadLatency is a fixed cost per record read (a request to remote storage).
	ReadLatency float64 `yaml:"read_latency"`

	// MapCost is the CPU time of the map function on one element.
	MapCost Dist `yaml:"map_cost"`
	// ParallelCalls is map(num_parallel_calls=...): 0 runs the map sequentially on the thread
	// that pulls (no num_parallel_calls); Autotune starts at min(16, Cores) and is tuned.
	ParallelCalls Tunable `yaml:"parallel_calls"`
	// Threads caps the map calls that run at once in this process: the thread pool that runs
	// them. A TF1 session runs a dataset's functions on its inter-op pool
	// (ConfigProto.inter_op_parallelism_threads: IteratorContext::Params takes the op's
	// runner, tensorflow/core/framework/dataset.h), tf.data's private_threadpool_size sets a
	// pool of its own; 0 means no cap beyond the host's cores (TF2's default runner).
	Threads int `yaml:"threads"`
	// ElementBytes is one element after map: what the cache stores and batch copies.
	ElementBytes int64 `yaml:"element_bytes"`

	// Cache is "none", "memory" (dataset.cache()) or "file" (dataset.cache(filename)).
	// The first epoch fills it; later epochs read from it.
	Cache string `yaml:"cache"`
	// CacheBeforeMap puts the cache between source and map (cache the raw records), so later
	// epochs skip the read but still pay the map. The default caches mapped elements.
	CacheBeforeMap bool `yaml:"cache_before_map"`
	// CacheFileBandwidth is the read rate of a file cache (local disk).
	CacheFileBandwidth float64 `yaml:"cache_file_bandwidth"`

	// ShuffleBuffer is shuffle(buffer_size): elements held in host RAM. Each epoch the buffer
	// fills before the first element comes out.
	ShuffleBuffer int `yaml:"shuffle_buffer"`
	// Batch is batch(batch_size).
	Batch int `yaml:"batch"`
	// DropRemainder is batch(drop_remainder=True).
	DropRemainder bool `yaml:"drop_remainder"`
	// Prefetch is prefetch(buffer_size) in batches: 0 = no prefetch; Autotune grows the buffer
	// from 1 when the consumer finds it empty (PrefetchAutotuner).
	Prefetch Tunable `yaml:"prefetch"`

	// Pinned says whether batches are copied from pinned host memory.
	Pinned bool `yaml:"pinned"`
	// H2DBandwidth and H2DLatency model a pinned host-to-device copy: latency + bytes/bandwidth.
	H2DBandwidth float64 `yaml:"h2d_bandwidth"`
	H2DLatency   float64 `yaml:"h2d_latency"`
	// PageableBandwidth and PageableLatency model a copy from pageable memory (staged by the
	// driver through a pinned buffer).
	PageableBandwidth float64 `yaml:"pageable_bandwidth"`
	PageableLatency   float64 `yaml:"pageable_latency"`
	// PrefetchToDevice copies each batch as it enters the prefetch buffer
	// (tf.data.experimental.prefetch_to_device) instead of when the step takes it.
	PrefetchToDevice bool `yaml:"prefetch_to_device"`
	// Replicas is how many GPUs each global batch is split over (MirroredStrategy's
	// distributed dataset): each copies its share, ceil(batch/replicas) elements, over its own
	// link at the same time. 0 or 1 is one GPU.
	Replicas int `yaml:"replicas"`
	// DeliverOverhead is host time the consumer spends receiving each batch before the copy
	// (the iterator call; a PyTorch DataLoader's unpickling).
	DeliverOverhead float64 `yaml:"deliver_overhead"`

	// Repeat is dataset.repeat(): one iterator runs across epochs. False is Keras fit's way:
	// a new iterator per epoch, so every epoch starts with empty buffers.
	Repeat bool `yaml:"repeat"`

	// Host is the machine.
	Host Host `yaml:"host"`
}

// Measured on the H200 machine (tools/input/dataloader_bench.py; "h2d" in
// pipeline/testdata/h200/dataloader.json and dataloader-fixedwork.json): 1.5 MiB and 64 MiB
// copies of each run fitted to latency + bytes/bandwidth, the two runs averaged.
const (
	h200PinnedBandwidth   = 55.0e9 // 34-36 GB/s at 1.5 MiB, 54.1-54.6 GB/s at 64 MiB
	h200PinnedLatency     = 16e-6
	h200PageableBandwidth = 18.4e9 // 11.3-13.9 GB/s at 1.5 MiB, 16.5-20.0 GB/s at 64 MiB
	h200PageableLatency   = 40e-6
)

// DefaultConfig returns an ImageNet pipeline on the H200 machine lent to this project
// (16 cores, 128 GiB: docs/sources.md) with TF's defaults: sequential map, no
// prefetch, no cache, pageable memory (tf.data allocates its outputs with the plain CPU
// allocator: tensorflow/tensorflow#44836, #43905). The dataset is ILSVRC-2012's 1,281,167
// JPEGs of 108 KB on average (ILSVRC2012_img_train.tar is 138 GB) read from NVMe at 7 GB/s
// (hw.Host "h200-vm"). The map decodes and augments each image in 3 ms of one core, spread
// lognormally with a standard deviation of a third: on the H200 host's Xeon a decode, random
// resized crop, resize and flip of an ImageNet-sized JPEG took 2.4 ms (sd 0.43) on one core
// and 3.2 ms per image per core with all 16 cores busy (testdata/h200/jpeg; the JPEGs were
// synthetic, 78 KB against ImageNet's 108 KB).
// Elements are 224x224x3 uint8 (150,528 B): the cast and normalisation run on the GPU, in
// the model (keras Rescaling/Normalization layers). Batch 128.
func DefaultConfig() Config {
	const jpegBytes = 108 << 10
	return Config{
		Records:            1281167,
		RecordBytes:        jpegBytes,
		StorageBandwidth:   7e9,
		MapCost:            Dist{Kind: "lognormal", Mean: 3e-3, Stddev: 1e-3},
		ElementBytes:       224 * 224 * 3,
		Cache:              "none",
		CacheFileBandwidth: 7e9,
		Batch:              128,
		H2DBandwidth:       h200PinnedBandwidth,
		H2DLatency:         h200PinnedLatency,
		PageableBandwidth:  h200PageableBandwidth,
		PageableLatency:    h200PageableLatency,
		Host:               Host{Cores: 16, MemoryBytes: 128 << 30},
	}
}

// FieldError is a bad value of one Config field, named by its Go path ("Host.Cores").
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports the first bad field as a *FieldError.
func (c Config) Validate() error {
	bad := func(field string, format string, a ...any) error {
		return &FieldError{Field: field, Err: fmt.Errorf(format, a...)}
	}
	switch {
	case c.Records <= 0:
		return bad("Records", "%d: want > 0", c.Records)
	case c.RecordBytes < 0:
		return bad("RecordBytes", "%d: want >= 0", c.RecordBytes)
	case c.ElementBytes < 0:
		return bad("ElementBytes", "%d: want >= 0", c.ElementBytes)
	case c.Batch <= 0:
		return bad("Batch", "%d: want > 0", c.Batch)
	case c.ShuffleBuffer < 0:
		return bad("ShuffleBuffer", "%d: want >= 0", c.ShuffleBuffer)
	case c.ParallelCalls < Autotune:
		return bad("ParallelCalls", "%d: want >= 0 or autotune", c.ParallelCalls)
	case c.Prefetch < Autotune:
		return bad("Prefetch", "%d: want >= 0 or autotune", c.Prefetch)
	case c.Threads < 0:
		return bad("Threads", "%d: want >= 0", c.Threads)
	case c.Replicas < 0:
		return bad("Replicas", "%d: want >= 0", c.Replicas)
	case c.Host.Cores <= 0:
		return bad("Host.Cores", "%d: want > 0", c.Host.Cores)
	case c.Host.BusyCores < 0 || c.Host.BusyCores >= c.Host.Cores:
		return bad("Host.BusyCores", "%d: want 0 <= busy_cores < cores (%d)", c.Host.BusyCores, c.Host.Cores)
	case c.Host.ThreadsPerCore < 0 || c.Host.ThreadsPerCore > 2:
		return bad("Host.ThreadsPerCore", "%d: want 0, 1 or 2", c.Host.ThreadsPerCore)
	case c.Host.ThreadsPerCore == 2 && c.Host.Cores%2 != 0:
		return bad("Host.ThreadsPerCore", "2 threads per core on %d cores: want an even count", c.Host.Cores)
	case !(c.Host.SMTGain >= 0 && c.Host.SMTGain <= 1):
		return bad("Host.SMTGain", "%v: want 0 <= smt_gain <= 1", c.Host.SMTGain)
	case c.Host.MemoryBytes <= 0:
		return bad("Host.MemoryBytes", "%d: want > 0", c.Host.MemoryBytes)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"StorageBandwidth", c.StorageBandwidth}, {"ReadLatency", c.ReadLatency},
		{"CacheFileBandwidth", c.CacheFileBandwidth}, {"H2DBandwidth", c.H2DBandwidth},
		{"H2DLatency", c.H2DLatency}, {"PageableBandwidth", c.PageableBandwidth},
		{"PageableLatency", c.PageableLatency}, {"DeliverOverhead", c.DeliverOverhead},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return bad(f.name, "%v: want a finite value >= 0", f.v)
		}
	}
	if err := c.MapCost.validate(); err != nil {
		return bad("MapCost", "%v", err)
	}
	switch c.Cache {
	case "", "none", "memory", "file":
	default:
		return bad("Cache", "%q: want none, memory or file", c.Cache)
	}
	return nil
}
