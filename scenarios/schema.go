package scenarios

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/train"
	"go.yaml.in/yaml/v3"
)

// field is one scenario key: its dotted path, what it holds (for help text) and how a YAML
// node sets it.
type field struct {
	path string
	typ  string
	doc  string
	set  func(c *train.Config, n *yaml.Node) error
}

// schema lists every scenario key. Mapping keys ("hardware", "memory", ...) are the prefixes
// of these paths; env and processes take a whole mapping or list.
var schema = []field{
	{"name", "string", "scenario name shown in reports", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Name) }},
	{"description", "string", "one line on what the scenario shows", func(c *train.Config, n *yaml.Node) error { var s string; return str(n, &s) }},
	{"model", "string", "zoo model (gpusim list models) or @file: Keras JSON or .keras archive", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Model) }},
	{"batch", "int", "global batch per optimizer update", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.Batch) }},
	{"precision", "string", "float32 | mixed_float16 | mixed_bfloat16", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Precision) }},
	{"tf32", "bool", "TensorFloat-32 matmuls (TF default true)", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.TF32) }},
	{"xla", "bool", "jit_compile=True", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.XLA) }},
	{"cudnn_version", "string", "cuDNN release, MAJOR.MINOR (\"\" = the one tf_version was built with): TF32 needs 8.0, Tensor Core convolutions 7.0", func(c *train.Config, n *yaml.Node) error { return str(n, &c.CuDNNVersion) }},
	{"tf_version", "string", "TensorFlow release, MAJOR.MINOR (\"\" = current): before 2.13 XLA runs softmax and layer norm as several fusions", func(c *train.Config, n *yaml.Node) error { return str(n, &c.TFVersion) }},
	{"framework", "string", "tensorflow | jax: what differentiates the step (jax: Keras 3 on the JAX backend)", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Framework) }},
	{"xla_distinct_shapes", "int", "distinct input shapes (sequence buckets); under XLA each new one recompiles the step", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.XLADistinctShapes) }},
	{"optimizer", "string", "sgd | momentum | adam | ...", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Optimizer) }},
	{"steps", "int", "optimizer updates to simulate", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.Steps) }},
	{"seed", "int", "seed of every random stream", func(c *train.Config, n *yaml.Node) error { return uint64Val(n, &c.Seed) }},
	{"hardware.gpu", "string", "GPU profile (gpusim list devices) or @file", func(c *train.Config, n *yaml.Node) error { return str(n, &c.GPU) }},
	{"hardware.count", "int", "physical GPUs on the host", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.GPUCount) }},
	{"hardware.host.profile", "string", "host/box profile (gpusim list hosts: h200-vm, dgx-a100, dgx-1, dgx-2, hgx-h100, pcie-8x, workstation) or @file: tf.data's cores, RAM and disk, the GPUs' interconnect and the network", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Host) }},
	{"hardware.topology", "string", "nvswitch | nvlink | pcie | pcie-pix | pcie-pxb | pcie-phb | pcie-sys: the GPUs' interconnect, overriding the host profile's", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Topology) }},
	{"hardware.nodes", "int", "hosts training together (strategy.name multi_worker_mirrored or horovod); hardware.count is per host", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.Nodes) }},
	{"hardware.host.gather_rate", "float", "bytes/s at which the host gathers a shuffled batch out of fit's numpy arrays (fit_from_arrays; unset: the H200 machine's measured rate)", func(c *train.Config, n *yaml.Node) error {
		if err := floatVal(n, &c.HostGatherRate); err != nil {
			return err
		}
		if c.HostGatherRate <= 0 {
			return fmt.Errorf("must be a positive rate in bytes/s, got %v", n.Value)
		}
		return nil
	}},
	{"hardware.host.cores", "int", "host CPU cores (tf.data's thread pool and AUTOTUNE budget)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.HostCores) }},
	{"cuda_visible_devices", "string", "CUDA_VISIBLE_DEVICES of the training process", func(c *train.Config, n *yaml.Node) error {
		var s string
		if err := str(n, &s); err != nil {
			return err
		}
		c.CUDAVisibleDevices = &s
		return nil
	}},
	{"strategy.name", "string", "default | mirrored | multi_worker_mirrored | horovod", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Strategy) }},
	{"strategy.num_packs", "int", "NcclAllReduce(num_packs); 0 = one all-reduce per gradient", func(c *train.Config, n *yaml.Node) error { return intVal(n, &c.NumPacks) }},
	{"strategy.cross_device_ops", "string", "nccl | hierarchical_copy | reduction_to_one_device (default: TF's choice)", func(c *train.Config, n *yaml.Node) error { return str(n, &c.CrossDeviceOps) }},
	{"strategy.compression", "string", "none | fp16: float16 gradients on the wire (horovod: hvd.DistributedOptimizer(compression=Compression.fp16); mirrored: tf_cnn_benchmarks' replicated all-reduce under --use_fp16, --compact_gradient_transfer)", func(c *train.Config, n *yaml.Node) error { return str(n, &c.HorovodCompression) }},
	{"strategy.devices", "list", "MirroredStrategy(devices=[...]): logical GPU indices that get a replica (default all)", func(c *train.Config, n *yaml.Node) error {
		return intList(n, "logical GPU indices", &c.StrategyDevices)
	}},
	{"tf.visible_devices", "list", "tf.config.set_visible_devices: indices of list_physical_devices('GPU'); [] hides every GPU", func(c *train.Config, n *yaml.Node) error {
		return intList(n, "physical device indices", &c.VisibleDevices)
	}},
	{"tf.device", "string", "tf.device scope around the model (default strategy), e.g. /GPU:1", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Device) }},
	{"tf.soft_placement", "bool", "tf.config.set_soft_device_placement (TF 2 default true)", func(c *train.Config, n *yaml.Node) error { return boolPtr(n, &c.SoftPlacement) }},
	{"tf.resource_variables", "bool", "TF1's tf.compat.v1.enable_resource_variables() (TF 2 has no other kind): an optimizer written as TF ops (bert-adamw, bert-lamb) then assigns its results without copying them", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.ResourceVariables) }},
	{"tf.layout_optimizer", "bool", "tf.config.optimizer.set_experimental_options({'layout_optimizer': ...}) (default true: float32 convolutions NCHW); false runs Keras's channels_last as written (NHWC)", func(c *train.Config, n *yaml.Node) error { return boolPtr(n, &c.LayoutOptimizer) }},
	{"l2_decay", "bool", "the loss adds weight_decay * sum(tf.nn.l2_loss(v)) over every trainable variable but batch norm's, as TF ops (NVIDIA's ConvNets model/resnet.py)", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.L2Decay) }},
	{"static_loss_scale", "bool|number", "mixed_float16 with a fixed loss scale (ConvNets --static_loss_scale 128; Keras LossScaleOptimizer(dynamic=False)): true or the scale itself (a positive number); the gradients are unscaled with no inf/NaN check and no update is skipped, whatever the scale", func(c *train.Config, n *yaml.Node) error { return fixedScale(n, &c.StaticLossScale) }},
	{"accumulation_steps", "int", "micro-batches per optimizer update", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.AccumulationSteps) }},
	{"input_on_device", "bool", "each batch is already in GPU memory (without an input section): the step copies nothing from the host", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.InputOnDevice) }},
	{"fit_from_arrays", "bool", "model.fit on in-memory numpy arrays (without an input section): the host gathers and copies each batch, one ahead of the step", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.FitFromArrays) }},
	{"keras_version", "int", "2 (tf.keras 2.x) or 3 (Keras 3); unset: 3 for tf_version 2.16 or later (unless env TF_USE_LEGACY_KERAS=1) and for framework jax, else 2. Under XLA, what a batch norm compiles to", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.KerasVersion) }},
	{"fit_arrays_samples", "int", "samples in fit_from_arrays's arrays: an epoch is ceil(samples/batch) steps; at its end the host waits for the last step and starts the next epoch's batches afresh (0: no epoch ends)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.FitArraysSamples) }},
	{"steps_per_execution", "int", "model.compile(steps_per_execution): steps per call of Keras's train function (the per-step host cost is paid once per call; under framework jax the train step's dispatch is still paid per step)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.StepsPerExecution) }},
	{"memory.mode", "string", "preallocate | growth | limit", memorySetter("mode")},
	{"memory.growth", "bool", "set_memory_growth", memorySetter("growth")},
	{"memory.growth_after_limit", "bool", "call order: set_memory_growth after set_logical_device_configuration (TF raises ValueError); false: growth first, silently dropped", memorySetter("growth_after_limit")},
	{"memory.limit_mib", "int", "logical device memory_limit (MiB)", memorySetter("limit_mib")},
	{"memory.logical_devices_mib", "list", "split each GPU into logical GPUs of these memory_limits (MiB)", memorySetter("logical_devices_mib")},
	{"memory.fraction", "float", "per_process_gpu_memory_fraction", memorySetter("fraction")},
	{"memory.allocator", "string", "bfc | cuda_malloc_async | platform", memorySetter("allocator")},
	{"memory.gc", "bool", "TF_ENABLE_GPU_GARBAGE_COLLECTION", memorySetter("gc")},
	{"input.prefetch", "int|autotune", "dataset.prefetch", func(c *train.Config, n *yaml.Node) error { return autoInt(n, &input(c).Prefetch) }},
	{"input.map.parallel_calls", "int|autotune", "map(num_parallel_calls)", func(c *train.Config, n *yaml.Node) error { return autoInt(n, &input(c).ParallelCalls) }},
	{"input.map.threads", "int", "threads each process runs map calls on (tf.data private_threadpool_size; a TF1 session's inter_op_parallelism_threads); 0 = the host's cores", func(c *train.Config, n *yaml.Node) error { return intVal(n, &input(c).Pipeline.Threads) }},
	{"input.cache", "string", "none | memory | file", func(c *train.Config, n *yaml.Node) error { return str(n, &input(c).Cache) }},
	{"input.records", "int", "dataset elements per epoch", func(c *train.Config, n *yaml.Node) error { return posInt(n, &input(c).Pipeline.Records) }},
	{"input.record_bytes", "int", "bytes read from storage per element", func(c *train.Config, n *yaml.Node) error { return int64Val(n, &input(c).Pipeline.RecordBytes) }},
	{"input.element_bytes", "int", "bytes of one element after map", func(c *train.Config, n *yaml.Node) error { return int64Val(n, &input(c).Pipeline.ElementBytes) }},
	{"input.storage_bandwidth", "float", "storage read rate, bytes/s", func(c *train.Config, n *yaml.Node) error { return floatVal(n, &input(c).Pipeline.StorageBandwidth) }},
	{"input.map.cost_ms", "float", "CPU time of the map function per element (ms)", func(c *train.Config, n *yaml.Node) error {
		return msDist(n, &input(c).Pipeline.MapCost.Mean)
	}},
	{"input.map.cost_stddev_ms", "float", "its standard deviation (ms)", func(c *train.Config, n *yaml.Node) error {
		d := &input(c).Pipeline.MapCost
		if err := msDist(n, &d.Stddev); err != nil {
			return err
		}
		if d.Stddev > 0 && d.Kind == "const" {
			d.Kind = "normal"
		}
		return nil
	}},
	{"input.shuffle_buffer", "int", "shuffle(buffer_size)", func(c *train.Config, n *yaml.Node) error { return intVal(n, &input(c).Pipeline.ShuffleBuffer) }},
	{"input.repeat", "bool", "dataset.repeat(): one iterator across epochs", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.Repeat) }},
	{"input.pinned", "bool", "batches copied from pinned host memory", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.Pinned) }},
	{"input.drop_remainder", "bool", "batch(drop_remainder=True): an epoch's last partial batch is dropped, not fed", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.DropRemainder) }},
	{"input.prefetch_to_device", "bool", "tf.data.experimental.prefetch_to_device", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.PrefetchToDevice) }},
	{"input.host.cores", "int", "host CPU cores for tf.data", func(c *train.Config, n *yaml.Node) error { return posInt(n, &input(c).Pipeline.Host.Cores) }},
	{"input.host.busy_cores", "int", "cores taken by other host work", func(c *train.Config, n *yaml.Node) error { return intVal(n, &input(c).Pipeline.Host.BusyCores) }},
	{"input.host.memory_gib", "int", "host RAM (GiB)", func(c *train.Config, n *yaml.Node) error {
		var v int64
		if err := int64Val(n, &v); err != nil {
			return err
		}
		input(c).Pipeline.Host.MemoryBytes = v << 30
		return nil
	}},
	{"env", "map", "TF/CUDA environment variables", func(c *train.Config, n *yaml.Node) error { return env(n, &c.Env) }},
	{"processes", "list", "other processes on the GPUs: [{name, framework, gpus, used_mib, memory, env}]", setProcesses},
	{"simulator.timeline_points", "int", "samples kept per memory timeline", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.TimelinePoints) }},
	{"simulator.utilization_samples", "int", "samples kept per GPU utilization series (past it, windows merged pairwise)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.UtilizationSamples) }},
	{"simulator.trace_steps", "int", "steps whose every op goes into the trace", func(c *train.Config, n *yaml.Node) error { return intVal(n, &c.TraceSteps) }},
	{"simulator.fast_forward", "bool", "replay provably identical steps", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.FastForward) }},
	{"simulator.symmetric_replicas", "bool", "no run-to-run kernel-time variation between replicas (nobody waits for a straggler); identical replicas are then simulated once", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.SymmetricReplicas) }},
}

// Keys returns every scenario key with its type and a one-line description, sorted.
func Keys() [][3]string {
	out := make([][3]string, len(schema))
	for i, f := range schema {
		out[i] = [3]string{f.path, f.typ, f.doc}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func lookup(path string) *field {
	for i := range schema {
		if schema[i].path == path {
			return &schema[i]
		}
	}
	return nil
}

// isPrefix reports whether path is a mapping key of the schema ("memory", "input.map").
func isPrefix(path string) bool {
	for _, f := range schema {
		if strings.HasPrefix(f.path, path+".") {
			return true
		}
	}
	return false
}

func input(c *train.Config) *train.Input {
	if c.Input == nil {
		in := train.DefaultInput()
		c.Input = &in
	}
	return c.Input
}

// msDist reads milliseconds into seconds.
func msDist(n *yaml.Node, dst *float64) error {
	var ms float64
	if err := floatVal(n, &ms); err != nil {
		return err
	}
	if ms < 0 {
		return fmt.Errorf("must not be negative, got %g", ms)
	}
	*dst = ms / 1e3
	return nil
}

// intList reads a list of ints (intVal each); an empty list gives an empty, non-nil slice,
// so "[]" stays distinct from "not set". what names the items in the error.
func intList(n *yaml.Node, what string, dst *[]int) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("want a list of %s, got a %s", what, kindName(n))
	}
	v := []int{}
	for _, e := range n.Content {
		var i int
		if err := intVal(e, &i); err != nil {
			return err
		}
		v = append(v, i)
	}
	*dst = v
	return nil
}

func intVal(n *yaml.Node, dst *int) error {
	var v int64
	if err := int64Val(n, &v); err != nil {
		return err
	}
	if v > math.MaxInt32 {
		return fmt.Errorf("too large: %d", v)
	}
	*dst = int(v)
	return nil
}

func scalar(n *yaml.Node, want string) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want %s, got a %s", want, kindName(n))
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return strings.TrimPrefix(n.ShortTag(), "!!") + " " + strconv.Quote(n.Value)
	}
	return "node"
}

func str(n *yaml.Node, dst *string) error {
	if err := scalar(n, "a string"); err != nil {
		return err
	}
	if t := n.ShortTag(); t != "!!str" && t != "!!int" && t != "!!float" {
		return fmt.Errorf("want a string, got %s", kindName(n))
	}
	*dst = n.Value
	return nil
}

func boolean(n *yaml.Node, dst *bool) error {
	if err := scalar(n, "true or false"); err != nil {
		return err
	}
	switch strings.ToLower(n.Value) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return fmt.Errorf("want true or false, got %s", kindName(n))
	}
	return nil
}

// fixedScale reads a fixed loss scale: true or false, or the scale as a positive finite
// number, which turns the fixed scale on (its value does not change a step's time: the
// unscale is one multiply per gradient whatever the factor).
func fixedScale(n *yaml.Node, dst *bool) error {
	if t := n.ShortTag(); n.Kind == yaml.ScalarNode && (t == "!!int" || t == "!!float") {
		var v float64
		if err := floatVal(n, &v); err != nil {
			return fmt.Errorf("want true, false or a positive number, got %s", kindName(n))
		}
		if v <= 0 {
			return fmt.Errorf("a loss scale must be positive, got %s", n.Value)
		}
		*dst = true
		return nil
	}
	if err := boolean(n, dst); err != nil {
		return fmt.Errorf("want true, false or a positive number, got %s", kindName(n))
	}
	return nil
}

func boolPtr(n *yaml.Node, dst **bool) error {
	var b bool
	if err := boolean(n, &b); err != nil {
		return err
	}
	*dst = &b
	return nil
}

func int64Val(n *yaml.Node, dst *int64) error {
	if err := scalar(n, "an integer"); err != nil {
		return err
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || n.ShortTag() != "!!int" {
		return fmt.Errorf("want an integer, got %s", kindName(n))
	}
	if v < 0 {
		return fmt.Errorf("must not be negative, got %d", v)
	}
	*dst = v
	return nil
}

func uint64Val(n *yaml.Node, dst *uint64) error {
	var v int64
	if err := int64Val(n, &v); err != nil {
		return err
	}
	*dst = uint64(v)
	return nil
}

func posInt(n *yaml.Node, dst *int) error {
	var v int64
	if err := int64Val(n, &v); err != nil {
		return err
	}
	if v == 0 || v > math.MaxInt32 {
		return fmt.Errorf("must be a positive integer, got %d", v)
	}
	*dst = int(v)
	return nil
}

func autoInt(n *yaml.Node, dst *int) error {
	if n.Kind == yaml.ScalarNode && strings.EqualFold(n.Value, "autotune") {
		*dst = train.Autotune
		return nil
	}
	var v int64
	if err := int64Val(n, &v); err != nil {
		return fmt.Errorf("want an integer or autotune, got %s", kindName(n))
	}
	if v > math.MaxInt32 {
		return fmt.Errorf("too large: %d", v)
	}
	*dst = int(v)
	return nil
}

func floatVal(n *yaml.Node, dst *float64) error {
	if err := scalar(n, "a number"); err != nil {
		return err
	}
	if t := n.ShortTag(); t != "!!float" && t != "!!int" {
		return fmt.Errorf("want a number, got %s", kindName(n))
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("want a finite number, got %s", kindName(n))
	}
	*dst = v
	return nil
}

func env(n *yaml.Node, dst *map[string]string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("want a mapping of variable: value, got a %s", kindName(n))
	}
	m := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
			return &posError{line: v.Line, field: "env." + k.Value, err: fmt.Errorf("want a scalar value, got a %s", kindName(v))}
		}
		m[k.Value] = v.Value
	}
	*dst = m
	return nil
}

// processFields are the keys of one entry of processes.
var processFields = map[string]func(p *train.Process, n *yaml.Node) error{
	"name":      func(p *train.Process, n *yaml.Node) error { return str(n, &p.Name) },
	"framework": func(p *train.Process, n *yaml.Node) error { return str(n, &p.Framework) },
	"gpus": func(p *train.Process, n *yaml.Node) error {
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("want a list of GPU indices, got a %s", kindName(n))
		}
		p.GPUs = p.GPUs[:0]
		for _, g := range n.Content {
			var v int64
			if err := int64Val(g, &v); err != nil {
				return err
			}
			// A GPU listed twice would count the process's memory on it twice.
			if slices.Contains(p.GPUs, int(v)) {
				return fmt.Errorf("GPU %d listed twice (a process holds its memory on each GPU once)", v)
			}
			p.GPUs = append(p.GPUs, int(v))
		}
		return nil
	},
	"used_mib": func(p *train.Process, n *yaml.Node) error {
		var v int64
		if err := int64Val(n, &v); err != nil {
			return err
		}
		p.UsedBytes = v << 20
		return nil
	},
	"env": func(p *train.Process, n *yaml.Node) error { return env(n, &p.Env) },
}

// memoryFields set the memory options of the training process (memory.*) and of the other
// processes (processes[i].memory.*).
var memoryFields = map[string]func(m *train.Memory, n *yaml.Node) error{
	"mode":      func(m *train.Memory, n *yaml.Node) error { return str(n, &m.Mode) },
	"growth":    func(m *train.Memory, n *yaml.Node) error { return boolPtr(n, &m.Growth) },
	"limit_mib": func(m *train.Memory, n *yaml.Node) error { return int64Val(n, &m.LimitMiB) },
	"fraction":  func(m *train.Memory, n *yaml.Node) error { return floatVal(n, &m.Fraction) },
	"logical_devices_mib": func(m *train.Memory, n *yaml.Node) error {
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("want a list of memory limits in MiB, got a %s", kindName(n))
		}
		m.LogicalMiB = m.LogicalMiB[:0]
		for _, c := range n.Content {
			var v int64
			if err := int64Val(c, &v); err != nil {
				return err
			}
			m.LogicalMiB = append(m.LogicalMiB, v)
		}
		return nil
	},
	"growth_after_limit": func(m *train.Memory, n *yaml.Node) error {
		return boolean(n, &m.GrowthAfterLimit)
	},
	"allocator": func(m *train.Memory, n *yaml.Node) error { return str(n, &m.Allocator) },
	"gc":        func(m *train.Memory, n *yaml.Node) error { return boolPtr(n, &m.GC) },
}

var memoryKeys = []string{"mode", "growth", "growth_after_limit", "limit_mib", "logical_devices_mib", "fraction", "allocator", "gc"}

func memorySetter(key string) func(c *train.Config, n *yaml.Node) error {
	return func(c *train.Config, n *yaml.Node) error { return memoryFields[key](&c.Memory, n) }
}

func setProcesses(c *train.Config, n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("want a list of processes, got a %s", kindName(n))
	}
	var ps []train.Process
	for i, item := range n.Content {
		prefix := fmt.Sprintf("processes[%d]", i)
		if item.Kind != yaml.MappingNode {
			return &posError{line: item.Line, field: prefix, err: fmt.Errorf("want a mapping, got a %s", kindName(item))}
		}
		p := train.Process{Name: fmt.Sprintf("process%d", i+1), Memory: train.Memory{Allocator: "bfc"}}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			f := prefix + "." + k.Value
			if k.Value == "memory" {
				if err := setProcessMemory(&p, v, f); err != nil {
					return err
				}
				continue
			}
			set, ok := processFields[k.Value]
			if !ok {
				return &posError{line: k.Line, field: f, err: fmt.Errorf("unknown key (process keys: name, framework, gpus, used_mib, memory, env)")}
			}
			if err := set(&p, v); err != nil {
				return wrapPos(v.Line, f, err)
			}
		}
		ps = append(ps, p)
	}
	c.Processes = ps
	return nil
}

func setProcessMemory(p *train.Process, n *yaml.Node, prefix string) error {
	if n.Kind != yaml.MappingNode {
		return &posError{line: n.Line, field: prefix, err: fmt.Errorf("want a mapping, got a %s", kindName(n))}
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		set, ok := memoryFields[k.Value]
		if !ok {
			return &posError{line: k.Line, field: prefix + "." + k.Value, err: fmt.Errorf("unknown key (memory keys: %s)", strings.Join(memoryKeys, ", "))}
		}
		if err := set(&p.Memory, v); err != nil {
			return wrapPos(v.Line, prefix+"."+k.Value, err)
		}
	}
	return nil
}
