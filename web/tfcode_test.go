package web

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
)

// TestTFCode: the TF program report.TFCode writes for a built-in, as the workshop page shows
// it (its tf_code), says what the scenario sets up. It lives here, above both report and
// scenarios, as the page does.
func TestTFCode(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		sets     []string
		want     []string
	}{
		{"cuda-visible-devices", nil, []string{`os.environ["CUDA_VISIBLE_DEVICES"] = "2,3"`, "tf.distribute.MirroredStrategy()", `tf.keras.mixed_precision.set_global_policy("mixed_float16")`}},
		{"hardcoded-gpu", nil, []string{`with tf.device("/GPU:1"):`}},
		{"growth-and-limit", nil, []string{"set_memory_growth(gpu, True)\nfor gpu in gpus:\n    tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=6144)])"}},
		{"growth-and-limit", []string{"memory.growth_after_limit=true"}, []string{"memory_limit=6144)])\nfor gpu in gpus:\n    tf.config.experimental.set_memory_growth(gpu, True)"}},
		{"xla-recompile", nil, []string{"jit_compile=True", "8 distinct shapes"}},
		{"accumulation", nil, []string{"8 micro-batches of 64", "ds = synthetic_batches(64)"}},
		{"jupyter-second-process", nil, []string{`"jupyter" (tensorflow), its tensors using 3072 MiB`}},
	} {
		sc, err := scenarios.Builtin(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.sets {
			if err := sc.Set(s); err != nil {
				t.Fatal(err)
			}
		}
		code := report.TFCode(&sc.Config)
		for _, w := range tc.want {
			if !strings.Contains(code, w) {
				t.Errorf("TFCode(%s %v) lacks %q:\n%s", tc.scenario, tc.sets, w, code)
			}
		}
	}
}

// tf2API is every TensorFlow name TFCode may print, each checked against the TF 2 API
// reference (tensorflow.org/api_docs/python/tf/...; the TF 2.4+ names: tf.data.AUTOTUNE
// graduated from tf.data.experimental in 2.4, tf.distribute.MultiWorkerMirroredStrategy
// likewise, tf.keras.mixed_precision.set_global_policy and LossScaleOptimizer(dynamic=,
// initial_scale=) from 2.4's non-experimental mixed precision API). A name outside it fails
// the test: either a typo or a name to look up before adding it.
var tf2API = []string{
	"tf.config.list_physical_devices",
	"tf.config.set_visible_devices",
	"tf.config.experimental.set_memory_growth",
	"tf.config.set_logical_device_configuration",
	"tf.config.LogicalDeviceConfiguration",
	"tf.config.set_soft_device_placement",
	"tf.config.optimizer.set_experimental_options",
	"tf.config.experimental.enable_tensor_float_32_execution",
	"tf.keras.mixed_precision.set_global_policy",
	"tf.keras.mixed_precision.LossScaleOptimizer",
	"tf.keras.optimizers.get",
	"tf.distribute.MirroredStrategy",
	"tf.distribute.MultiWorkerMirroredStrategy",
	"tf.distribute.NcclAllReduce",
	"tf.distribute.HierarchicalCopyAllReduce",
	"tf.distribute.ReductionToOneDevice",
	"tf.device",
	"tf.data.Dataset.from_tensor_slices",
	"tf.data.AUTOTUNE",
	"tf.compat.v1.keras.backend.set_session",
	"tf.compat.v1.Session",
	"tf.compat.v1.ConfigProto",
	"tf.compat.v1.GPUOptions",
}

// tfName is a dotted name rooted at tf (tf.keras.applications.X is checked apart: the
// application names come from the model zoo's Keras names).
var tfName = regexp.MustCompile(`\btf(\.[A-Za-z_][A-Za-z0-9_]*)+`)

// TestTFCodeUsesTF2API: over the built-ins and the settings gpusim plan changes (precision,
// loss scaling, XLA, TF32, memory modes, tf.data, every strategy), every tf.* name TFCode
// prints is a TF 2 API name, and the Keras calls the plan's changes need are there.
func TestTFCodeUsesTF2API(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		sets     []string
		want     []string
	}{
		{"resnet50-a100", []string{"precision=mixed_float16", "static_loss_scale=true", "xla=true"},
			[]string{"LossScaleOptimizer(", "dynamic=False", "jit_compile=True"}},
		{"resnet50-a100", []string{"precision=float32", "tf32=false", "memory.growth=true"},
			[]string{"enable_tensor_float_32_execution(False)", "set_memory_growth(gpu, True)"}},
		{"resnet50-a100", []string{"hardware.count=4", "strategy.name=mirrored", "batch=1024"},
			[]string{"tf.distribute.MirroredStrategy()"}},
		{"multinode-4xdgx-a100", nil, []string{"tf.distribute.MultiWorkerMirroredStrategy()"}},
		{"horovod-dgx-a100", nil, []string{"hvd.DistributedOptimizer(opt)", "hvd.init()"}},
		{"input-bound", []string{"input.map.parallel_calls=autotune", "input.prefetch=autotune", "input.cache=memory"},
			[]string{"num_parallel_calls=tf.data.AUTOTUNE", ".prefetch(tf.data.AUTOTUNE)", "ds.cache()"}},
		{"memory-limit", nil, []string{"memory_limit="}},
		{"default", []string{"precision=mixed_bfloat16"}, []string{`set_global_policy("mixed_bfloat16")`}},
	} {
		sc, err := scenarios.Builtin(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.sets {
			if err := sc.Set(s); err != nil {
				t.Fatalf("%s --set %s: %v", tc.scenario, s, err)
			}
		}
		code := report.TFCode(&sc.Config)
		for _, w := range tc.want {
			if !strings.Contains(code, w) {
				t.Errorf("TFCode(%s %v) lacks %q:\n%s", tc.scenario, tc.sets, w, code)
			}
		}
		for _, name := range tfName.FindAllString(code, -1) {
			if strings.HasPrefix(name, "tf.keras.applications.") {
				continue
			}
			if !slices.Contains(tf2API, name) {
				t.Errorf("TFCode(%s %v) prints %s, not a TF 2 API name on the list", tc.scenario, tc.sets, name)
			}
		}
	}
}
