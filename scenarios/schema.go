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

// field is one scenario key: its dotted path, the train.Config fields it sets, what it holds
// (for help text) and how a YAML node sets it. fields are Go paths as a train.FieldError
// names them, space-separated, for Key to map an error back to the key: a key's own field,
// and the fields train derives from it (Input.Pipeline's Batch, Prefetch, ParallelCalls and
// Cache are the run's; its Replicas come from the strategy).
type field struct {
	path   string
	fields string
	typ    string
	doc    string
	set    func(c *train.Config, n *yaml.Node) error
}

// schema lists every scenario key, the one table of them: the loader, --set, Key, the help
// text and the docs all read it. Mapping keys ("hardware", "memory", ...) are the prefixes of
// these paths; env and processes take a whole mapping or list; the memory section's keys are
// memorySection's, in its order.
var schema = slices.Concat(runKeys, sectionKeys("memory.", "Memory.", memorySection), inputKeys)

// runKeys are the keys before the memory section.
var runKeys = []field{
	{"name", "Name", "string", "scenario name shown in reports", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Name) }},
	{"description", "", "string", "one line on what the scenario shows", func(c *train.Config, n *yaml.Node) error { var s string; return str(n, &s) }},
	{"model", "Model", "string", "zoo model (gpusim list models) or @file: Keras JSON or .keras archive", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Model) }},
	{"batch", "Batch Input.Pipeline.Batch", "int", "global batch per optimizer update", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.Batch) }},
	{"precision", "Precision", "string", "float32 | mixed_float16 | mixed_bfloat16", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Precision) }},
	{"tf32", "TF32", "bool", "TensorFloat-32 matmuls (TF default true)", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.TF32) }},
	{"xla", "XLA", "bool", "jit_compile=True", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.XLA) }},
	{"cudnn_version", "CuDNNVersion", "string", "cuDNN release, MAJOR.MINOR (\"\" = the one tf_version was built with): TF32 needs 8.0, Tensor Core convolutions 7.0", func(c *train.Config, n *yaml.Node) error { return str(n, &c.CuDNNVersion) }},
	{"tf_version", "TFVersion", "string", "TensorFlow release, MAJOR.MINOR (\"\" = current): before 2.13 XLA runs softmax and layer norm as several fusions", func(c *train.Config, n *yaml.Node) error { return str(n, &c.TFVersion) }},
	{"framework", "Framework", "string", "tensorflow | jax: what differentiates the step (jax: Keras 3 on the JAX backend)", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Framework) }},
	{"xla_distinct_shapes", "XLADistinctShapes", "int", "distinct input shapes (sequence buckets); under XLA each new one recompiles the step", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.XLADistinctShapes) }},
	{"optimizer", "Optimizer", "string", "sgd | momentum | adam | ...", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Optimizer) }},
	{"steps", "Steps", "int", "optimizer updates to simulate", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.Steps) }},
	{"seed", "Seed", "int", "seed of every random stream", func(c *train.Config, n *yaml.Node) error { return uint64Val(n, &c.Seed) }},
	{"hardware.gpu", "GPU GPUProfile", "string", "GPU profile (gpusim list devices) or @file", func(c *train.Config, n *yaml.Node) error { return str(n, &c.GPU) }},
	{"hardware.count", "GPUCount", "int", "physical GPUs on the host", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.GPUCount) }},
	{"hardware.host.profile", "Host", "string", "host/box profile (gpusim list hosts: h200-vm, dgx-a100, dgx-1, dgx-2, hgx-h100, pcie-8x, workstation) or @file: tf.data's cores, RAM and disk, the GPUs' interconnect and the network", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Host) }},
	{"hardware.topology", "Topology", "string", "nvswitch | nvlink | pcie | pcie-pix | pcie-pxb | pcie-phb | pcie-sys: the GPUs' interconnect, overriding the host profile's", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Topology) }},
	{"hardware.nodes", "Nodes", "int", "hosts training together (strategy.name multi_worker_mirrored or horovod); hardware.count is per host", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.Nodes) }},
	{"hardware.host.gather_rate", "HostGatherRate", "float", "bytes/s at which the host gathers a shuffled batch out of fit's numpy arrays (fit_from_arrays; unset: the H200 machine's measured rate)", func(c *train.Config, n *yaml.Node) error {
		if err := floatVal(n, &c.HostGatherRate); err != nil {
			return err
		}
		if c.HostGatherRate <= 0 {
			return fmt.Errorf("must be a positive rate in bytes/s, got %v", n.Value)
		}
		return nil
	}},
	{"hardware.host.cores", "HostCores", "int", "host CPU cores (tf.data's thread pool and AUTOTUNE budget)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.HostCores) }},
	{"cuda_visible_devices", "CUDAVisibleDevices", "string", "CUDA_VISIBLE_DEVICES of the training process", func(c *train.Config, n *yaml.Node) error {
		var s string
		if err := str(n, &s); err != nil {
			return err
		}
		c.CUDAVisibleDevices = &s
		return nil
	}},
	{"strategy.name", "Strategy Input.Pipeline.Replicas", "string", "default | mirrored | multi_worker_mirrored | horovod", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Strategy) }},
	{"strategy.num_packs", "NumPacks", "int", "NcclAllReduce(num_packs); 0 = one all-reduce per gradient", func(c *train.Config, n *yaml.Node) error { return intVal(n, &c.NumPacks) }},
	{"strategy.cross_device_ops", "CrossDeviceOps", "string", "nccl | hierarchical_copy | reduction_to_one_device (default: TF's choice)", func(c *train.Config, n *yaml.Node) error { return str(n, &c.CrossDeviceOps) }},
	{"strategy.compression", "HorovodCompression", "string", "none | fp16: float16 gradients on the wire (horovod: hvd.DistributedOptimizer(compression=Compression.fp16); mirrored: tf_cnn_benchmarks' replicated all-reduce under --use_fp16, --compact_gradient_transfer)", func(c *train.Config, n *yaml.Node) error { return str(n, &c.HorovodCompression) }},
	{"strategy.devices", "StrategyDevices", "list", "MirroredStrategy(devices=[...]): logical GPU indices that get a replica (default all)", func(c *train.Config, n *yaml.Node) error {
		return intList(n, "logical GPU indices", &c.StrategyDevices)
	}},
	{"tf.visible_devices", "VisibleDevices", "list", "tf.config.set_visible_devices: indices of list_physical_devices('GPU'); [] hides every GPU", func(c *train.Config, n *yaml.Node) error {
		return intList(n, "physical device indices", &c.VisibleDevices)
	}},
	{"tf.device", "Device", "string", "tf.device scope around the model (default strategy), e.g. /GPU:1", func(c *train.Config, n *yaml.Node) error { return str(n, &c.Device) }},
	{"tf.soft_placement", "SoftPlacement", "bool", "tf.config.set_soft_device_placement (TF 2 default true)", func(c *train.Config, n *yaml.Node) error { return boolPtr(n, &c.SoftPlacement) }},
	{"tf.resource_variables", "ResourceVariables", "bool", "TF1's tf.compat.v1.enable_resource_variables() (TF 2 has no other kind): an optimizer written as TF ops (bert-adamw, bert-lamb) then assigns its results without copying them", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.ResourceVariables) }},
	{"tf.layout_optimizer", "LayoutOptimizer", "bool", "tf.config.optimizer.set_experimental_options({'layout_optimizer': ...}) (default true: float32 convolutions NCHW); false runs Keras's channels_last as written (NHWC)", func(c *train.Config, n *yaml.Node) error { return boolPtr(n, &c.LayoutOptimizer) }},
	{"l2_decay", "L2Decay", "bool", "the loss adds weight_decay * sum(tf.nn.l2_loss(v)) over every trainable variable but batch norm's, as TF ops (NVIDIA's ConvNets model/resnet.py)", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.L2Decay) }},
	{"static_loss_scale", "StaticLossScale", "bool|number", "mixed_float16 with a fixed loss scale (ConvNets --static_loss_scale 128; Keras LossScaleOptimizer(dynamic=False)): true or the scale itself (a positive number); the gradients are unscaled with no inf/NaN check and no update is skipped, whatever the scale", func(c *train.Config, n *yaml.Node) error { return fixedScale(n, &c.StaticLossScale) }},
	{"accumulation_steps", "AccumulationSteps", "int", "micro-batches per optimizer update", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.AccumulationSteps) }},
	{"input_on_device", "InputOnDevice", "bool", "each batch is already in GPU memory (without an input section): the step copies nothing from the host", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.InputOnDevice) }},
	{"fit_from_arrays", "FitFromArrays", "bool", "model.fit on in-memory numpy arrays (without an input section): the host gathers and copies each batch, one ahead of the step", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.FitFromArrays) }},
	{"keras_version", "KerasVersion", "int", "2 (tf.keras 2.x) or 3 (Keras 3); unset: 3 for tf_version 2.16 or later (unless env TF_USE_LEGACY_KERAS=1) and for framework jax, else 2. Under XLA, what a batch norm compiles to", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.KerasVersion) }},
	{"fit_arrays_samples", "FitArraysSamples", "int", "samples in fit_from_arrays's arrays: an epoch is ceil(samples/batch) steps; at its end the host waits for the last step and starts the next epoch's batches afresh (0: no epoch ends)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.FitArraysSamples) }},
	{"steps_per_execution", "StepsPerExecution", "int", "model.compile(steps_per_execution): steps per call of Keras's train function (the per-step host cost is paid once per call; under framework jax the train step's dispatch is still paid per step)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.StepsPerExecution) }},
}

// inputKeys are the keys after the memory section.
var inputKeys = []field{
	{"input.prefetch", "Input.Prefetch Input.Pipeline.Prefetch", "int|autotune", "dataset.prefetch", func(c *train.Config, n *yaml.Node) error { return autoInt(n, &input(c).Prefetch) }},
	{"input.map.parallel_calls", "Input.ParallelCalls Input.Pipeline.ParallelCalls", "int|autotune", "map(num_parallel_calls)", func(c *train.Config, n *yaml.Node) error { return autoInt(n, &input(c).ParallelCalls) }},
	{"input.map.threads", "Input.Pipeline.Threads", "int", "threads each process runs map calls on (tf.data private_threadpool_size; a TF1 session's inter_op_parallelism_threads); 0 = the host's cores", func(c *train.Config, n *yaml.Node) error { return intVal(n, &input(c).Pipeline.Threads) }},
	{"input.cache", "Input.Cache Input.Pipeline.Cache", "string", "none | memory | file", func(c *train.Config, n *yaml.Node) error { return str(n, &input(c).Cache) }},
	{"input.records", "Input.Pipeline.Records", "int", "dataset elements per epoch", func(c *train.Config, n *yaml.Node) error { return posInt(n, &input(c).Pipeline.Records) }},
	{"input.record_bytes", "Input.Pipeline.RecordBytes", "int", "bytes read from storage per element", func(c *train.Config, n *yaml.Node) error { return int64Val(n, &input(c).Pipeline.RecordBytes) }},
	{"input.element_bytes", "Input.Pipeline.ElementBytes", "int", "bytes of one element after map", func(c *train.Config, n *yaml.Node) error { return int64Val(n, &input(c).Pipeline.ElementBytes) }},
	{"input.storage_bandwidth", "Input.Pipeline.StorageBandwidth", "float", "storage read rate, bytes/s", func(c *train.Config, n *yaml.Node) error { return floatVal(n, &input(c).Pipeline.StorageBandwidth) }},
	{"input.map.cost_ms", "Input.Pipeline.MapCost", "float", "CPU time of the map function per element (ms)", func(c *train.Config, n *yaml.Node) error {
		return msDist(n, &input(c).Pipeline.MapCost.Mean)
	}},
	{"input.map.cost_stddev_ms", "", "float", "its standard deviation (ms)", func(c *train.Config, n *yaml.Node) error {
		d := &input(c).Pipeline.MapCost
		if err := msDist(n, &d.Stddev); err != nil {
			return err
		}
		if d.Stddev > 0 && d.Kind == "const" {
			d.Kind = "normal"
		}
		return nil
	}},
	{"input.shuffle_buffer", "Input.Pipeline.ShuffleBuffer", "int", "shuffle(buffer_size)", func(c *train.Config, n *yaml.Node) error { return intVal(n, &input(c).Pipeline.ShuffleBuffer) }},
	{"input.repeat", "Input.Pipeline.Repeat", "bool", "dataset.repeat(): one iterator across epochs", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.Repeat) }},
	{"input.pinned", "Input.Pipeline.Pinned", "bool", "batches copied from pinned host memory", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.Pinned) }},
	{"input.drop_remainder", "Input.Pipeline.DropRemainder", "bool", "batch(drop_remainder=True): an epoch's last partial batch is dropped, not fed", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.DropRemainder) }},
	{"input.prefetch_to_device", "Input.Pipeline.PrefetchToDevice", "bool", "tf.data.experimental.prefetch_to_device", func(c *train.Config, n *yaml.Node) error { return boolean(n, &input(c).Pipeline.PrefetchToDevice) }},
	{"input.host.cores", "Input.Pipeline.Host.Cores", "int", "host CPU cores for tf.data", func(c *train.Config, n *yaml.Node) error { return posInt(n, &input(c).Pipeline.Host.Cores) }},
	{"input.host.busy_cores", "Input.Pipeline.Host.BusyCores", "int", "cores taken by other host work", func(c *train.Config, n *yaml.Node) error { return intVal(n, &input(c).Pipeline.Host.BusyCores) }},
	{"input.host.memory_gib", "Input.Pipeline.Host.MemoryBytes", "int", "host RAM (GiB)", func(c *train.Config, n *yaml.Node) error {
		var v int64
		if err := int64Val(n, &v); err != nil {
			return err
		}
		input(c).Pipeline.Host.MemoryBytes = v << 30
		return nil
	}},
	{"env", "Env", "map", "TF/CUDA environment variables", func(c *train.Config, n *yaml.Node) error { return env(n, &c.Env) }},
	{"processes", "Processes", "list", "other processes on the GPUs: [{name, framework, gpus, used_mib, memory, env}]", setProcesses},
	{"simulator.timeline_points", "TimelinePoints", "int", "samples kept per memory timeline", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.TimelinePoints) }},
	{"simulator.utilization_samples", "UtilizationSamples", "int", "samples kept per GPU utilization series (past it, windows merged pairwise)", func(c *train.Config, n *yaml.Node) error { return posInt(n, &c.UtilizationSamples) }},
	{"simulator.trace_steps", "TraceSteps", "int", "steps whose every op goes into the trace", func(c *train.Config, n *yaml.Node) error { return intVal(n, &c.TraceSteps) }},
	{"simulator.fast_forward", "FastForward", "bool", "replay provably identical steps", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.FastForward) }},
	{"simulator.symmetric_replicas", "SymmetricReplicas", "bool", "no run-to-run kernel-time variation between replicas (nobody waits for a straggler); identical replicas are then simulated once", func(c *train.Config, n *yaml.Node) error { return boolean(n, &c.SymmetricReplicas) }},
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

// processField is one key of an entry of processes: the train.Process field it sets and how.
type processField struct {
	key, field string
	set        func(p *train.Process, n *yaml.Node) error
}

// processSection lists the keys of one entry of processes; memory is a memory section
// (memorySection, setProcessMemory).
var processSection = []processField{
	{"name", "Name", func(p *train.Process, n *yaml.Node) error { return str(n, &p.Name) }},
	{"framework", "Framework", func(p *train.Process, n *yaml.Node) error { return str(n, &p.Framework) }},
	{"gpus", "GPUs", func(p *train.Process, n *yaml.Node) error {
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
	}},
	{"used_mib", "UsedBytes", func(p *train.Process, n *yaml.Node) error {
		var v int64
		if err := int64Val(n, &v); err != nil {
			return err
		}
		p.UsedBytes = v << 20
		return nil
	}},
	{"memory", "Memory", nil},
	{"env", "Env", func(p *train.Process, n *yaml.Node) error { return env(n, &p.Env) }},
}

// memoryField is one key of a memory section: of the training process (memory.KEY) and of
// each other process (processes[i].memory.KEY). field is the train.Memory field it sets.
type memoryField struct {
	key, field, typ, doc string
	set                  func(m *train.Memory, n *yaml.Node) error
}

// memorySection lists the keys of a memory section.
var memorySection = []memoryField{
	{"mode", "Mode", "string", "preallocate | growth | limit", func(m *train.Memory, n *yaml.Node) error { return str(n, &m.Mode) }},
	{"growth", "Growth", "bool", "set_memory_growth", func(m *train.Memory, n *yaml.Node) error { return boolPtr(n, &m.Growth) }},
	{"growth_after_limit", "GrowthAfterLimit", "bool", "call order: set_memory_growth after set_logical_device_configuration (TF raises ValueError); false: growth first, silently dropped", func(m *train.Memory, n *yaml.Node) error {
		return boolean(n, &m.GrowthAfterLimit)
	}},
	{"limit_mib", "LimitMiB", "int", "logical device memory_limit (MiB)", func(m *train.Memory, n *yaml.Node) error { return int64Val(n, &m.LimitMiB) }},
	{"logical_devices_mib", "LogicalMiB", "list", "split each GPU into logical GPUs of these memory_limits (MiB)", func(m *train.Memory, n *yaml.Node) error {
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
	}},
	{"fraction", "Fraction", "float", "per_process_gpu_memory_fraction", func(m *train.Memory, n *yaml.Node) error { return floatVal(n, &m.Fraction) }},
	{"allocator", "Allocator", "string", "bfc | cuda_malloc_async | platform", func(m *train.Memory, n *yaml.Node) error { return str(n, &m.Allocator) }},
	{"gc", "GC", "bool", "TF_ENABLE_GPU_GARBAGE_COLLECTION", func(m *train.Memory, n *yaml.Node) error { return boolPtr(n, &m.GC) }},
}

// sectionKeys are the schema's keys of the training process's memory section: the key
// under prefix ("memory."), setting the field under fieldPrefix ("Memory.").
func sectionKeys(prefix, fieldPrefix string, sec []memoryField) []field {
	out := make([]field, len(sec))
	for i, m := range sec {
		out[i] = field{prefix + m.key, fieldPrefix + m.field, m.typ, m.doc,
			func(c *train.Config, n *yaml.Node) error { return m.set(&c.Memory, n) }}
	}
	return out
}

// sectionKeyNames returns the keys of a section, in order.
func sectionKeyNames[F any](sec []F, key func(F) string) []string {
	out := make([]string, len(sec))
	for i, f := range sec {
		out[i] = key(f)
	}
	return out
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
			i := slices.IndexFunc(processSection, func(pf processField) bool { return pf.key == k.Value })
			if i < 0 {
				keys := sectionKeyNames(processSection, func(pf processField) string { return pf.key })
				return &posError{line: k.Line, field: f, err: fmt.Errorf("unknown key (process keys: %s)", strings.Join(keys, ", "))}
			}
			if err := processSection[i].set(&p, v); err != nil {
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
		i := slices.IndexFunc(memorySection, func(m memoryField) bool { return m.key == k.Value })
		if i < 0 {
			keys := sectionKeyNames(memorySection, func(m memoryField) string { return m.key })
			return &posError{line: k.Line, field: prefix + "." + k.Value, err: fmt.Errorf("unknown key (memory keys: %s)", strings.Join(keys, ", "))}
		}
		if err := memorySection[i].set(&p.Memory, v); err != nil {
			return wrapPos(v.Line, prefix+"."+k.Value, err)
		}
	}
	return nil
}
