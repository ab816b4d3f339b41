package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/train"
)

// TFCode writes the TensorFlow 2.x program that cfg simulates: the environment, the
// tf.config calls in the order TF requires (before the GPUs initialize), the policy, the
// strategy, the model and the tf.data pipeline. It is what the class would type; every line
// comes from a field of cfg, so it changes with the controls.
func TFCode(cfg *train.Config) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	tfEnv(p, cfg)
	tfConfig(p, cfg)
	indent := tfStrategy(p, cfg)
	tfModel(p, cfg, indent)
	tfData(p, cfg)
	return b.String()
}

// printer writes one line of Python.
type printer func(format string, args ...any)

// tfEnv writes the other processes, the environment and the import.
func tfEnv(p printer, cfg *train.Config) {
	for _, pr := range cfg.Processes {
		gpus := "every GPU"
		if pr.GPUs != nil {
			gpus = "GPU " + pyInts(pr.GPUs)
		}
		fw := pr.Framework
		if fw == "" {
			fw = "tensorflow"
		}
		p("# Already running on %s: %q (%s), its tensors using %d MiB.", gpus, pr.Name, fw, pr.UsedBytes>>20)
	}
	p("import os")
	if v := cfg.CUDAVisibleDevices; v != nil {
		p("os.environ[\"CUDA_VISIBLE_DEVICES\"] = %q  # before TensorFlow is imported", *v)
	}
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("os.environ[%q] = %q", k, cfg.Env[k])
	}
	if a := cfg.Memory.Allocator; a == "cuda_malloc_async" {
		p("os.environ[\"TF_GPU_ALLOCATOR\"] = \"cuda_malloc_async\"")
	}
	if g := cfg.Memory.GC; g != nil && !*g {
		p("os.environ[\"TF_ENABLE_GPU_GARBAGE_COLLECTION\"] = \"false\"")
	}
	p("import tensorflow as tf")
}

// tfConfig writes the tf.config calls and the precision policy, before the GPUs initialize.
func tfConfig(p printer, cfg *train.Config) {
	p("")
	p("gpus = tf.config.list_physical_devices(\"GPU\")")
	if v := cfg.VisibleDevices; v != nil {
		p("tf.config.set_visible_devices([gpus[i] for i in [%s]], \"GPU\")", pyInts(v))
	}
	m := cfg.Memory
	growth := m.Mode == "growth" || (m.Mode == "" && m.Growth != nil && *m.Growth)
	limit := m.LimitMiB > 0 && (m.Mode == "" || m.Mode == "limit")
	var logical []string
	if limit {
		logical = []string{fmt.Sprintf("tf.config.LogicalDeviceConfiguration(memory_limit=%d)", m.LimitMiB)}
	}
	for _, l := range m.LogicalMiB {
		logical = append(logical, fmt.Sprintf("tf.config.LogicalDeviceConfiguration(memory_limit=%d)", l))
	}
	writeGrowth := func() {
		p("for gpu in gpus:")
		p("    tf.config.experimental.set_memory_growth(gpu, True)")
	}
	if growth && !m.GrowthAfterLimit {
		writeGrowth()
	}
	if len(logical) > 0 {
		p("for gpu in gpus:")
		p("    tf.config.set_logical_device_configuration(gpu, [%s])", strings.Join(logical, ", "))
	}
	if growth && m.GrowthAfterLimit {
		writeGrowth()
	}
	if m.Fraction > 0 {
		p("# TF1 option, through the compat session:")
		p("tf.compat.v1.keras.backend.set_session(tf.compat.v1.Session(config=tf.compat.v1.ConfigProto(")
		p("    gpu_options=tf.compat.v1.GPUOptions(per_process_gpu_memory_fraction=%s))))", strconv.FormatFloat(m.Fraction, 'g', -1, 64))
	}
	if sp := cfg.SoftPlacement; sp != nil {
		p("tf.config.set_soft_device_placement(%s)", pyBool(*sp))
	}
	if lo := cfg.LayoutOptimizer; lo != nil {
		p("tf.config.optimizer.set_experimental_options({\"layout_optimizer\": %s})", pyBool(*lo))
	}
	if !cfg.TF32 {
		p("tf.config.experimental.enable_tensor_float_32_execution(False)")
	}
	if cfg.Precision != "float32" {
		p("tf.keras.mixed_precision.set_global_policy(%q)", cfg.Precision)
	}
}

// tfStrategy opens the strategy (or device) scope and returns the indent inside it.
func tfStrategy(p printer, cfg *train.Config) string {
	p("")
	indent := ""
	switch {
	case cfg.Strategy == "mirrored":
		args := ""
		if cfg.StrategyDevices != nil {
			var ds []string
			for _, d := range cfg.StrategyDevices {
				ds = append(ds, fmt.Sprintf("\"/gpu:%d\"", d))
			}
			args = "devices=[" + strings.Join(ds, ", ") + "]"
		}
		switch cfg.CrossDeviceOps {
		case "nccl":
			args = joinArgs(args, fmt.Sprintf("cross_device_ops=tf.distribute.NcclAllReduce(num_packs=%d)", cfg.NumPacks))
		case "hierarchical_copy":
			args = joinArgs(args, fmt.Sprintf("cross_device_ops=tf.distribute.HierarchicalCopyAllReduce(num_packs=%d)", cfg.NumPacks))
		case "reduction_to_one_device":
			args = joinArgs(args, "cross_device_ops=tf.distribute.ReductionToOneDevice()")
		}
		p("strategy = tf.distribute.MirroredStrategy(%s)", args)
		p("with strategy.scope():")
		indent = "    "
	case cfg.Strategy == "multi_worker_mirrored":
		p("# one worker per host; TF_CONFIG names the %d hosts and this one's index", cfg.NodeCount())
		p("strategy = tf.distribute.MultiWorkerMirroredStrategy()")
		p("with strategy.scope():")
		indent = "    "
	case cfg.Strategy == "horovod":
		// Horovod's Keras API (horovod.tensorflow.keras): one process per GPU, each pinned to
		// its local rank's GPU, the optimizer wrapped for the all-reduce.
		p("import horovod.tensorflow.keras as hvd")
		p("hvd.init()  # one process per GPU: horovodrun -np %d", max(cfg.GPUCount, 1)*cfg.NodeCount())
		p("tf.config.set_visible_devices(gpus[hvd.local_rank()], \"GPU\")")
	case cfg.Device != "":
		p("with tf.device(%q):", cfg.Device)
		indent = "    "
	}
	return indent
}

// tfModel writes the model, its optimizer and compile call.
func tfModel(p printer, cfg *train.Config, indent string) {
	model := "build_model()  # " + cfg.Model
	if d := models.Describe(cfg.Model); strings.HasPrefix(d, "keras.applications.") {
		name, _, _ := strings.Cut(strings.TrimPrefix(d, "keras.applications."), " ")
		model = "tf.keras.applications." + name + "(weights=None)"
	} else if d != "" {
		model += ": " + d
	}
	opt := cfg.Optimizer
	if opt == "" {
		opt = "sgd"
	}
	p("%smodel = %s", indent, model)
	optArg := fmt.Sprintf("%q", opt)
	if cfg.Precision == "mixed_float16" && cfg.StaticLossScale {
		p("%sopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.get(%q), dynamic=False, initial_scale=128)", indent, opt)
		optArg = "opt"
	}
	if cfg.Strategy == "horovod" {
		if optArg != "opt" {
			p("%sopt = tf.keras.optimizers.get(%q)", indent, opt)
		}
		p("%sopt = hvd.DistributedOptimizer(opt)", indent)
		optArg = "opt"
	}
	compile := fmt.Sprintf("optimizer=%s, loss=\"sparse_categorical_crossentropy\"", optArg)
	if cfg.XLA {
		compile += ", jit_compile=True"
	}
	p("%smodel.compile(%s)", indent, compile)
	if cfg.AccumulationSteps > 1 {
		p("%s# gradients accumulated over %d micro-batches of %d before each update (a custom", indent, cfg.AccumulationSteps, cfg.Batch/cfg.AccumulationSteps)
		p("%s# train_step, or Keras 3's optimizer gradient_accumulation_steps=%d)", indent, cfg.AccumulationSteps)
	}
}

// tfData writes the tf.data pipeline and the fit call.
func tfData(p printer, cfg *train.Config) {
	p("")
	micro := cfg.Batch / max(cfg.AccumulationSteps, 1)
	if in := cfg.Input; in != nil {
		p("ds = tf.data.Dataset.from_tensor_slices(files)")
		if in.Pipeline.ShuffleBuffer > 0 {
			p("ds = ds.shuffle(%d)", in.Pipeline.ShuffleBuffer)
		}
		if in.ParallelCalls != 0 {
			p("ds = ds.map(decode_and_augment, num_parallel_calls=%s)", tfTunable(in.ParallelCalls))
		} else {
			p("ds = ds.map(decode_and_augment)  # sequential: one core")
		}
		switch in.Cache {
		case "memory":
			p("ds = ds.cache()")
		case "file":
			p("ds = ds.cache(\"/tmp/ds.cache\")")
		}
		if in.Pipeline.Repeat {
			p("ds = ds.repeat()")
		}
		p("ds = ds.batch(%d)", micro)
		if in.Prefetch != 0 {
			p("ds = ds.prefetch(%s)", tfTunable(in.Prefetch))
		}
	} else {
		p("ds = synthetic_batches(%d)  # already on the GPU: no input pipeline", micro)
	}
	if cfg.XLA && cfg.XLADistinctShapes > 1 {
		p("# the batches come in %d distinct shapes (sequence buckets, a ragged last batch)", cfg.XLADistinctShapes)
	}
	p("model.fit(ds, steps_per_epoch=%d, epochs=1)", cfg.Steps*max(cfg.AccumulationSteps, 1))
}

func tfTunable(n int) string {
	if n == train.Autotune {
		return "tf.data.AUTOTUNE"
	}
	return strconv.Itoa(n)
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

func pyInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func joinArgs(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
