package scenarios

import (
	"errors"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/train"
)

// configKeys maps the Go path of a train.Config field, as a train.FieldError names it, to
// its scenario key. Processes[i] and the memory sections are mapped by Key.
var configKeys = map[string]string{
	"Name":                "name",
	"Model":               "model",
	"Batch":               "batch",
	"Precision":           "precision",
	"TF32":                "tf32",
	"XLA":                 "xla",
	"TFVersion":           "tf_version",
	"CuDNNVersion":        "cudnn_version",
	"XLADistinctShapes":   "xla_distinct_shapes",
	"Framework":           "framework",
	"Optimizer":           "optimizer",
	"Steps":               "steps",
	"Seed":                "seed",
	"GPU":                 "hardware.gpu",
	"GPUProfile":          "hardware.gpu",
	"GPUCount":            "hardware.count",
	"Nodes":               "hardware.nodes",
	"Host":                "hardware.host.profile",
	"Topology":            "hardware.topology",
	"HostCores":           "hardware.host.cores",
	"HostGatherRate":      "hardware.host.gather_rate",
	"CUDAVisibleDevices":  "cuda_visible_devices",
	"Strategy":            "strategy.name",
	"NumPacks":            "strategy.num_packs",
	"CrossDeviceOps":      "strategy.cross_device_ops",
	"StrategyDevices":     "strategy.devices",
	"HorovodCompression":  "strategy.compression",
	"VisibleDevices":      "tf.visible_devices",
	"Device":              "tf.device",
	"SoftPlacement":       "tf.soft_placement",
	"LayoutOptimizer":     "tf.layout_optimizer",
	"ResourceVariables":   "tf.resource_variables",
	"L2Decay":             "l2_decay",
	"StaticLossScale":     "static_loss_scale",
	"AccumulationSteps":   "accumulation_steps",
	"StepsPerExecution":   "steps_per_execution",
	"KerasVersion":        "keras_version",
	"FitFromArrays":       "fit_from_arrays",
	"FitArraysSamples":    "fit_arrays_samples",
	"InputOnDevice":       "input_on_device",
	"Env":                 "env",
	"Processes":           "processes",
	"TimelinePoints":      "simulator.timeline_points",
	"UtilizationSamples":  "simulator.utilization_samples",
	"TraceSteps":          "simulator.trace_steps",
	"FastForward":         "simulator.fast_forward",
	"SymmetricReplicas":   "simulator.symmetric_replicas",
	"Input":               "input",
	"Input.Prefetch":      "input.prefetch",
	"Input.ParallelCalls": "input.map.parallel_calls",
	"Input.Cache":         "input.cache",
	// Input.Pipeline: pipeline.Config's fields. Batch, Prefetch, ParallelCalls and Cache are
	// set from the run's keys; Replicas from the strategy.
	"Input.Pipeline.Records":          "input.records",
	"Input.Pipeline.RecordBytes":      "input.record_bytes",
	"Input.Pipeline.ElementBytes":     "input.element_bytes",
	"Input.Pipeline.StorageBandwidth": "input.storage_bandwidth",
	"Input.Pipeline.MapCost":          "input.map.cost_ms",
	"Input.Pipeline.Threads":          "input.map.threads",
	"Input.Pipeline.ShuffleBuffer":    "input.shuffle_buffer",
	"Input.Pipeline.Repeat":           "input.repeat",
	"Input.Pipeline.Pinned":           "input.pinned",
	"Input.Pipeline.PrefetchToDevice": "input.prefetch_to_device",
	"Input.Pipeline.DropRemainder":    "input.drop_remainder",
	"Input.Pipeline.Host.Cores":       "input.host.cores",
	"Input.Pipeline.Host.BusyCores":   "input.host.busy_cores",
	"Input.Pipeline.Host.MemoryBytes": "input.host.memory_gib",
	"Input.Pipeline.Batch":            "batch",
	"Input.Pipeline.Prefetch":         "input.prefetch",
	"Input.Pipeline.ParallelCalls":    "input.map.parallel_calls",
	"Input.Pipeline.Cache":            "input.cache",
	"Input.Pipeline.Replicas":         "strategy.name",
}

// memoryFieldKeys maps train.Memory's fields to the keys of a memory section.
var memoryFieldKeys = map[string]string{
	"Mode":             "mode",
	"Growth":           "growth",
	"GrowthAfterLimit": "growth_after_limit",
	"LimitMiB":         "limit_mib",
	"LogicalMiB":       "logical_devices_mib",
	"Fraction":         "fraction",
	"Allocator":        "allocator",
	"GC":               "gc",
}

// processKeys maps train.Process's fields to the keys of a processes entry.
var processKeys = map[string]string{
	"Name":      "name",
	"Framework": "framework",
	"GPUs":      "gpus",
	"UsedBytes": "used_mib",
	"Env":       "env",
	"Memory":    "memory",
}

var processPath = regexp.MustCompile(`^Processes\[(\d+)\](?:\.(.+))?$`)

// Key returns the scenario key of the train.Config field at Go path path ("Memory.LimitMiB"
// is memory.limit_mib, "Processes[0].UsedBytes" processes[0].used_mib); a path it does not
// know is returned as it is.
func Key(path string) string {
	if k, ok := configKeys[path]; ok {
		return k
	}
	memory := func(prefix, rest string) (string, bool) {
		if rest == "" {
			return prefix, true
		}
		k, ok := memoryFieldKeys[rest]
		return prefix + "." + k, ok
	}
	if rest, ok := strings.CutPrefix(path, "Memory"); ok && (rest == "" || rest[0] == '.') {
		if k, ok := memory("memory", strings.TrimPrefix(rest, ".")); ok {
			return k
		}
	}
	if m := processPath.FindStringSubmatch(path); m != nil {
		p := "processes[" + m[1] + "]"
		if m[2] == "" {
			return p
		}
		field, rest, _ := strings.Cut(m[2], ".")
		if field == "Memory" {
			if k, ok := memory(p+".memory", rest); ok {
				return k
			}
		} else if k, ok := processKeys[field]; ok && rest == "" {
			return p + "." + k
		}
	}
	return path
}

// RunError turns an error of train.Run on s.Config into a scenario error: a
// *train.FieldError becomes an *Error naming the place that set the field's key (the
// scenario's source when a default) and the key; ok is false for other errors.
func (s *Scenario) RunError(err error) (*Error, bool) {
	var fe *train.FieldError
	if !errors.As(err, &fe) {
		return nil, false
	}
	key := Key(fe.Field)
	place := s.origin[key]
	if place == "" {
		place = s.Source
	}
	return &Error{Place: place, Field: key, Err: keyed(fe)}, true
}

// keyed is fe's message with the fields it mentions (train.FieldError.Mentions, Go paths)
// named by their keys: train's messages name Go fields, a scenario's user knows keys.
func keyed(fe *train.FieldError) error {
	if len(fe.Mentions) == 0 {
		return fe.Err
	}
	paths := slices.Clone(fe.Mentions)
	// Longest first, so that a path inside a longer one (VisibleDevices in
	// CUDAVisibleDevices) is not replaced there.
	sort.SliceStable(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	var pairs []string
	for _, p := range paths {
		pairs = append(pairs, p, Key(p))
	}
	return &keyedError{msg: strings.NewReplacer(pairs...).Replace(fe.Err.Error()), err: fe.Err}
}

// keyedError is a train error's message in keys; it unwraps to the error.
type keyedError struct {
	msg string
	err error
}

func (e *keyedError) Error() string { return e.msg }
func (e *keyedError) Unwrap() error { return e.err }

// place is where key got its value: its own --set or file line, else its parent's (memory
// via --set memory.x, processes[0]), else file (or the source) marked as a default.
func (s *Scenario) place(key, file string) string {
	place := s.origin[key]
	for f := key; place == "" && f != ""; {
		i := strings.LastIndexAny(f, "[.")
		if i <= 0 {
			break
		}
		f = f[:i]
		place = s.origin[f]
	}
	if place == "" {
		place = file
		if place == "" {
			place = s.Source
		}
		place += " (default)"
	}
	return place
}
