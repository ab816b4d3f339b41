package scenarios

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// limit is the range a numeric scenario key accepts. The lower bound is TF's own where TF has
// one (a batch of at least 1, prefetch and num_parallel_calls >= 0 or AUTOTUNE); the upper
// bound is TF's where it has one, else gpusim's: the largest value it simulates in bounded
// time and memory with int64 arithmetic that cannot overflow, far above any real machine.
type limit struct {
	min, max float64
	unit     string // printed after the bounds ("MiB"); "" for counts
	why      string // where the upper bound comes from
}

// Bounds shared by several keys.
const (
	// maxGPUs: an NVLink Switch System joins up to 256 GPUs in one NVLink domain (NVIDIA DGX
	// GH200), the most that gpusim's one-host, NVSwitch model of a machine can stand for.
	maxGPUs = 256
	// maxMiB: 16 TiB, a hundred times the largest GPU memory (H200 141 GB); MiB << 20 stays far
	// inside int64 bytes.
	maxMiB = 1 << 24
	// maxCores: Linux's largest NR_CPUS (8192, arch/x86/Kconfig MAXSMP).
	maxCores = 8192
	// maxProtoBytes: a tf.train.Example is a protocol buffer, at most 2 GiB - 1 (protobuf's
	// kint32max message size).
	maxProtoBytes = math.MaxInt32
	// maxMs: one minute of CPU time per element in the map function or its spread.
	maxMs = 60_000
)

// limits holds the range of every numeric key. A list's items are "key[]"; the keys of a
// processes entry are "processes[].key" (its memory keys share memory.*'s limits).
var limits = map[string]limit{
	"batch":                         {1, 1 << 24, "", "gpusim's bound (2^24): batch x a zoo model's bytes per sample stays inside int64"},
	"xla_distinct_shapes":           {0, 1 << 16, "", "gpusim's bound: each shape compiles the step once more"},
	"seed":                          {0, math.MaxInt64, "", "tf.random.set_seed takes an int64"},
	"steps":                         {1, 10_000_000, "", "gpusim's bound: the run keeps a summary per step (10M steps is 250 epochs of ImageNet at batch 32)"},
	"hardware.count":                {1, maxGPUs, "", "the largest NVLink domain (NVLink Switch System), the most one simulated host can stand for"},
	"hardware.nodes":                {0, 1024, "", "gpusim's bound: 1,024 hosts of 8 GPUs, the size of the largest DGX SuperPOD deployments; every replica is simulated"},
	"hardware.host.cores":           {1, maxCores, "", "Linux's largest NR_CPUS"},
	"hardware.host.gather_rate":     {1e6, 1e12, "", "gpusim's bound: 1 MB/s to 1 TB/s, above any host's memory bandwidth"},
	"strategy.num_packs":            {0, 1 << 16, "", "gpusim's bound: more packs than any zoo model has gradients"},
	"strategy.devices[]":            {0, maxGPUs - 1, "", "a logical GPU index below the 256-GPU bound of hardware.count"},
	"tf.visible_devices[]":          {0, maxGPUs - 1, "", "a physical GPU index below the 256-GPU bound of hardware.count"},
	"accumulation_steps":            {1, 1 << 16, "", "gpusim's bound (2^16 micro-batches per update)"},
	"fit_arrays_samples":            {1, 1 << 30, "", "gpusim's bound (2^30 samples in memory)"},
	"steps_per_execution":           {1, 1 << 20, "", "gpusim's bound (Keras takes any positive int; 2^20 steps per call)"},
	"keras_version":                 {2, 3, "", "the Keras major versions gpusim models"},
	"memory.limit_mib":              {0, maxMiB, "MiB", "16 TiB, a hundred times the largest GPU's memory"},
	"memory.logical_devices_mib[]":  {1, maxMiB, "MiB", "16 TiB, a hundred times the largest GPU's memory"},
	"memory.fraction":               {0, 1, "", "TF takes fractions above 1 as unified memory, which gpusim does not simulate"},
	"input.prefetch":                {0, 1 << 16, "batches", "gpusim's bound (2^16 batches buffered)"},
	"input.map.parallel_calls":      {0, maxCores, "", "one call per host core at most (Linux's largest NR_CPUS)"},
	"input.map.threads":             {0, maxCores, "", "a thread pool no larger than Linux's largest NR_CPUS"},
	"input.records":                 {1, math.MaxInt32, "", "tf.data cardinality as gpusim counts it (int32)"},
	"input.record_bytes":            {0, maxProtoBytes, "bytes", "a tf.train.Example is a protocol buffer, at most 2 GiB"},
	"input.element_bytes":           {0, maxProtoBytes, "bytes", "a tf.train.Example is a protocol buffer, at most 2 GiB"},
	"input.storage_bandwidth":       {1e5, 1e12, "bytes/s", "100 kB/s to 1 TB/s, from a slow network share to many NVMe drives"},
	"input.map.cost_ms":             {0, maxMs, "ms", "a minute of CPU per element"},
	"input.map.cost_stddev_ms":      {0, maxMs, "ms", "a minute of CPU per element"},
	"input.shuffle_buffer":          {0, math.MaxInt32, "", "tf.data cardinality as gpusim counts it (int32)"},
	"input.host.cores":              {1, maxCores, "", "Linux's largest NR_CPUS"},
	"input.host.busy_cores":         {0, maxCores, "", "Linux's largest NR_CPUS"},
	"input.host.memory_gib":         {1, 1 << 16, "GiB", "64 TiB, twice the largest x86 server's RAM"},
	"processes[].used_mib":          {0, maxMiB, "MiB", "16 TiB, a hundred times the largest GPU's memory"},
	"processes[].gpus[]":            {0, maxGPUs - 1, "", "a GPU index below the 256-GPU bound of hardware.count"},
	"simulator.timeline_points":     {2, 1 << 20, "", "gpusim's bound: samples kept per memory timeline"},
	"simulator.utilization_samples": {2, 1 << 24, "", "gpusim's bound: samples kept per GPU utilization series (2^24, 39 days of nvidia-smi's 0.2 s windows)"},
	"simulator.trace_steps":         {0, 1000, "", "gpusim's bound: every op of a traced step is a trace event, and trace viewers load about a million"},
}

// maxListItems bounds the lists of GPUs, logical devices and processes: each item is a device
// or a process the run simulates.
const maxListItems = maxGPUs

// index matches the list indices of a key path ("processes[3].gpus[0]").
var index = regexp.MustCompile(`\[\d+\]`)

// limitKey is the limits entry of a key path: list indices dropped, a process's memory keys
// mapped to memory.*.
func limitKey(path string) string {
	k := index.ReplaceAllString(path, "[]")
	if rest, ok := strings.CutPrefix(k, "processes[].memory."); ok {
		return "memory." + rest
	}
	return k
}

// checkLimits checks every number in n, the value of key path, against its limit, and the
// length of every list against maxListItems. Values that are not numbers are left to the
// key's setter, which names the type it wants. An error for an item inside n is a *posError
// naming its line and path.
func checkLimits(path string, n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) > maxListItems {
			return &posError{line: n.Line, field: path, err: fmt.Errorf("too long: %d items (at most %d: %s)", len(n.Content), maxListItems, "each is a device or a process the run simulates")}
		}
		for i, c := range n.Content {
			if err := checkLimits(fmt.Sprintf("%s[%d]", path, i), c); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkLimits(path+"."+n.Content[i].Value, n.Content[i+1]); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		l, ok := limits[limitKey(path)]
		if !ok {
			return nil
		}
		v, ok := number(n)
		if !ok {
			return nil
		}
		if err := l.check(v, n.Value); err != nil {
			return &posError{line: n.Line, field: path, err: err}
		}
	}
	return nil
}

// number reads a YAML int or float scalar ("1_000", "0x10", "1e300", "-5").
func number(n *yaml.Node) (float64, bool) {
	s := strings.ReplaceAll(strings.TrimSpace(n.Value), "_", "")
	switch n.ShortTag() {
	case "!!int":
		if v, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(v), true
		}
		// Beyond int64: still a number, and out of every range.
		if v, ok := new(big.Int).SetString(s, 0); ok {
			f, _ := new(big.Float).SetInt(v).Float64()
			return f, true
		}
	case "!!float":
		if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) {
			return v, true
		}
	}
	return 0, false
}

func (l limit) check(v float64, text string) error {
	unit := ""
	if l.unit != "" {
		unit = " " + l.unit
	}
	switch {
	case v < l.min:
		return fmt.Errorf("too small: %s (at least %s%s)", text, formatBound(l.min), unit)
	case v > l.max:
		return fmt.Errorf("too large: %s (at most %s%s: %s)", text, formatBound(l.max), unit, l.why)
	}
	return nil
}

// formatBound prints a bound as an integer where it is one ("16777216", "100000").
func formatBound(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CheckInt checks v against the range of the numeric scenario key (a flag that sets one, such
// as capacity's --max for batch, shares its range). The error says "too large" or "too small"
// with the bound; a key without a range accepts every value.
func CheckInt(key string, v int64) error {
	l, ok := limits[limitKey(key)]
	if !ok {
		return nil
	}
	return l.check(float64(v), strconv.FormatInt(v, 10))
}
