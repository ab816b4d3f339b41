package scenarios

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

func TestBuiltinsLoadAndValidate(t *testing.T) {
	names := Names()
	for _, want := range []string{"default", "resnet50-a100", "bert-base-h200", "jupyter-second-process", "growth-fragmentation"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("built-in %q missing from %v", want, names)
		}
	}
	for _, n := range names {
		s, err := Builtin(n)
		if err != nil {
			t.Errorf("Builtin(%q): %v", n, err)
			continue
		}
		if s.Name != n || s.Config.Name != n {
			t.Errorf("Builtin(%q) name = %q / %q, want %q", n, s.Name, s.Config.Name, n)
		}
		if s.Description == "" {
			t.Errorf("Builtin(%q) has no description", n)
		}
	}
}

func TestDefaultScenarioIsDefaultConfig(t *testing.T) {
	s, err := Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	want := train.DefaultConfig()
	got := s.Config
	if got.Model != want.Model || got.Batch != want.Batch || got.GPU != want.GPU || got.Steps != want.Steps || got.Precision != want.Precision {
		t.Errorf("default scenario = %+v, want DefaultConfig's model/batch/gpu/steps/precision", got.System)
	}
}

// TestStableKeys sets every stable key of docs/design.md through YAML and through --set and checks
// the configuration field it lands in.
func TestStableKeys(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		check      func(c *train.Config) bool
	}{
		{"model", "bert-base", func(c *train.Config) bool { return c.Model == "bert-base" }},
		{"batch", "512", func(c *train.Config) bool { return c.Batch == 512 }},
		{"precision", "mixed_bfloat16", func(c *train.Config) bool { return c.Precision == "mixed_bfloat16" }},
		{"tf32", "false", func(c *train.Config) bool { return !c.TF32 }},
		{"xla", "true", func(c *train.Config) bool { return c.XLA }},
		{"xla_distinct_shapes", "6", func(c *train.Config) bool { return c.XLADistinctShapes == 6 }},
		{"optimizer", "adam", func(c *train.Config) bool { return c.Optimizer == "adam" }},
		{"steps", "7", func(c *train.Config) bool { return c.Steps == 7 }},
		{"seed", "42", func(c *train.Config) bool { return c.Seed == 42 }},
		{"hardware.gpu", "h200", func(c *train.Config) bool { return c.GPU == "h200" }},
		{"hardware.count", "8", func(c *train.Config) bool { return c.GPUCount == 8 }},
		{"cuda_visible_devices", `"2,3"`, func(c *train.Config) bool { return c.CUDAVisibleDevices != nil && *c.CUDAVisibleDevices == "2,3" }},
		{"strategy.name", "mirrored", func(c *train.Config) bool { return c.Strategy == "mirrored" }},
		{"strategy.num_packs", "2", func(c *train.Config) bool { return c.NumPacks == 2 }},
		{"accumulation_steps", "4", func(c *train.Config) bool { return c.AccumulationSteps == 4 }},
		{"steps_per_execution", "8", func(c *train.Config) bool { return c.StepsPerExecution == 8 }},
		{"fit_from_arrays", "true", func(c *train.Config) bool { return c.FitFromArrays }},
		{"input_on_device", "true", func(c *train.Config) bool { return c.InputOnDevice }},
		{"keras_version", "3", func(c *train.Config) bool { return c.KerasVersion == 3 }},
		{"memory.growth", "true", func(c *train.Config) bool { return c.Memory.Growth != nil && *c.Memory.Growth }},
		{"memory.limit_mib", "4096", func(c *train.Config) bool { return c.Memory.LimitMiB == 4096 }},
		{"memory.growth_after_limit", "true", func(c *train.Config) bool { return c.Memory.GrowthAfterLimit }},
		{"memory.fraction", "0.5", func(c *train.Config) bool { return c.Memory.Fraction == 0.5 }},
		{"memory.allocator", "cuda_malloc_async", func(c *train.Config) bool { return c.Memory.Allocator == "cuda_malloc_async" }},
		{"memory.logical_devices_mib", "[4096, 4096]", func(c *train.Config) bool { return len(c.Memory.LogicalMiB) == 2 && c.Memory.LogicalMiB[1] == 4096 }},
		{"hardware.host.cores", "8", func(c *train.Config) bool { return c.HostCores == 8 }},
		{"hardware.host.gather_rate", "2.8e9", func(c *train.Config) bool { return c.HostGatherRate == 2.8e9 }},
		{"memory.gc", "false", func(c *train.Config) bool { return c.Memory.GC != nil && !*c.Memory.GC }},
		{"memory.mode", "growth", func(c *train.Config) bool { return c.Memory.Mode == "growth" }},
		{"input.prefetch", "autotune", func(c *train.Config) bool { return c.Input != nil && c.Input.Prefetch == train.Autotune }},
		{"input.map.parallel_calls", "8", func(c *train.Config) bool { return c.Input != nil && c.Input.ParallelCalls == 8 }},
		{"input.cache", "memory", func(c *train.Config) bool { return c.Input != nil && c.Input.Cache == "memory" }},
		{"env", "{TF_FORCE_GPU_ALLOW_GROWTH: 'true'}", func(c *train.Config) bool { return c.Env["TF_FORCE_GPU_ALLOW_GROWTH"] == "true" }},
		{"processes", "[{name: jupyter, gpus: [0], used_mib: 100, memory: {growth: true}}]", func(c *train.Config) bool {
			return len(c.Processes) == 1 && c.Processes[0].Name == "jupyter" && c.Processes[0].UsedBytes == 100<<20 &&
				c.Processes[0].Memory.Growth != nil && *c.Processes[0].Memory.Growth && len(c.Processes[0].GPUs) == 1
		}},
	} {
		s, err := Parse("test.yaml", []byte(yamlFor(tc.key, tc.value)))
		if err != nil {
			t.Errorf("YAML %s: %s: %v", tc.key, tc.value, err)
		} else if !tc.check(&s.Config) {
			t.Errorf("YAML %s: %s did not set the field: %+v", tc.key, tc.value, s.Config)
		}
		s, err = Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Set(tc.key + "=" + tc.value); err != nil {
			t.Errorf("--set %s=%s: %v", tc.key, tc.value, err)
		} else if !tc.check(&s.Config) {
			t.Errorf("--set %s=%s did not set the field", tc.key, tc.value)
		}
	}
}

// yamlFor writes key: value as nested YAML ("a.b" becomes a mapping).
func yamlFor(key, value string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(" " + value + "\n")
	return b.String()
}

func TestErrorsNameFileLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      string // substring of the error
	}{
		{"unknown key", "model: resnet50\nbatchsize: 32\n", "bad.yaml:2: batchsize: unknown key (did you mean batch?)"},
		{"misspelt key", "memory:\n  groth: true\n", "bad.yaml:2: memory.groth: unknown key (did you mean memory.growth?)"},
		{"unknown nested key", "hardware:\n  gpu: t4\n  cnt: 2\n", "bad.yaml:3: hardware.cnt: unknown key"},
		{"wrong type", "batch: lots\n", "bad.yaml:1: batch: want an integer"},
		{"negative batch", "model: resnet50\nbatch: -32\n", "bad.yaml:2: batch: too small: -32 (at least 1)"},
		{"zero steps", "steps: 0\n", "bad.yaml:1: steps: too small: 0 (at least 1)"},
		{"unknown gpu", "hardware:\n  gpu: k9000\n", "bad.yaml:2: hardware.gpu:"},
		{"unknown model", "\nmodel: resnet51\n", "bad.yaml:2: model:"},
		{"bad precision", "precision: fp8\n", "bad.yaml:1: precision:"},
		{"bool as string", "xla: yes please\n", "bad.yaml:1: xla: want true or false"},
		{"mapping for scalar", "batch:\n  size: 3\n", "bad.yaml:2: batch: want an integer, got a mapping"},
		{"scalar for mapping", "memory: lots\n", "bad.yaml:1: memory: want a mapping"},
		{"duplicate", "batch: 1\nbatch: 2\n", "bad.yaml:2: batch: duplicate key (first at line 1)"},
		{"process key", "processes:\n  - name: a\n    usedmib: 3\n", "bad.yaml:3: processes[0].usedmib: unknown key"},
		{"process gpu", "processes:\n  - name: a\n    gpus: [3]\n", "bad.yaml:3: processes[0].gpus:"},
		{"mode contradiction", "memory:\n  mode: preallocate\n  growth: true\n", "bad.yaml:2: memory.mode:"},
		// YAML syntax errors in file:line form, with yaml.v3's line (syntax.go says when it is
		// not the offending one).
		{"syntax", "batch: [1,\n", "bad.yaml"},
		{"unclosed flow sequence", "batch: [1, 2\nsteps: 3\n", "bad.yaml:1: yaml syntax: did not find expected ',' or ']'"},
		{"tab indentation", "batch: 1\n\tsteps: 2\n", "bad.yaml:2: yaml syntax: found a tab character that violates indentation"},
		{"mis-indented key", "model: resnet50\nbatch: 64\nmemory:\n  growth: true\n limit_mib: 6144\n", "bad.yaml:4: yaml syntax: did not find expected key"},
		{"no line", "batch: *x\n", "bad.yaml: yaml syntax: unknown anchor 'x' referenced"},
		{"order not a bool", "memory:\n  growth: true\n  growth_after_limit: later\n", "bad.yaml:3: memory.growth_after_limit: want true or false"},
		{"unknown topology", "model: resnet50\nhardware:\n  count: 8\n  topology: infiniband\n", "bad.yaml:4: hardware.topology: \"infiniband\" is not one of nvswitch, nvlink, pcie"},
		{"compression on one GPU", "strategy:\n  name: default\n  compression: fp16\n", "bad.yaml:3: strategy.compression: fp16 casts the gradients for a multi-GPU all-reduce: it needs strategy horovod or mirrored"},
		{"loss scale zero", "precision: mixed_float16\nstatic_loss_scale: 0\n", "bad.yaml:2: static_loss_scale: a loss scale must be positive, got 0"},
		{"loss scale word", "static_loss_scale: high\n", "bad.yaml:1: static_loss_scale: want true, false or a positive number"},
		{"unknown compression", "strategy:\n  name: horovod\n  compression: int8\n", "bad.yaml:3: strategy.compression: \"int8\" is not one of none, fp16"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.doc))
		if err == nil {
			t.Errorf("%s: Parse succeeded, want error containing %q", tc.name, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %q, want it to contain %q", tc.name, err, tc.want)
		}
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%s: error %T is not a *scenarios.Error", tc.name, err)
		}
	}
}

func TestSetErrorsNameTheSet(t *testing.T) {
	for _, tc := range []struct{ kv, want string }{
		{"batch=-1", "--set batch=-1: batch: too small: -1 (at least 1)"},
		{"hardware.gpu=nope", "--set hardware.gpu=nope: hardware.gpu:"},
		{"bogus=1", "--set bogus=1: bogus: unknown key"},
		{"memory=1", "--set memory=1: memory: is a mapping"},
		{"batch", "--set batch: want key=value"},
		{"tf32=maybe", "--set tf32=maybe: tf32: want true or false"},
		{"memory.mode=limit", "--set memory.mode=limit: memory.mode: limit needs memory.limit_mib"},
		{"strategy.name=round-robin", "--set strategy.name=round-robin: strategy.name:"},
	} {
		s, err := Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		err = s.SetAll([]string{tc.kv})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%q) = %v, want an error containing %q", tc.kv, err, tc.want)
		}
	}
}

func TestLoadFileAndResolvePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte("model: resnet50\nbatch: 16\nhardware:\n  gpu: t4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mine" || s.Config.Batch != 16 || s.Config.GPU != "t4" {
		t.Errorf("Resolve(%s) = name %q batch %d gpu %q, want mine 16 t4", path, s.Name, s.Config.Batch, s.Config.GPU)
	}
	if got := s.Origin("batch"); got != path+":2" {
		t.Errorf("Origin(batch) = %q, want %s:2", got, path)
	}
	if _, err := Resolve("no-such-builtin"); err == nil || !strings.Contains(err.Error(), "unknown scenario") {
		t.Errorf("Resolve(no-such-builtin) = %v, want unknown scenario", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		data, err := builtinFS.ReadFile("builtin/" + n + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("batch: -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error %q does not start with the file name", err)
			}
			return
		}
		if verr := s.Config.Validate(); verr != nil {
			t.Errorf("Parse accepted a config that fails Validate: %v", verr)
		}
	})
}

// TestBuiltinsSimulate runs every built-in scenario and checks what must hold for any run:
// no configuration error, the median step's breakdown sums to its time, the timeline is
// bounded, and an OOM carries TF's message.
func TestBuiltinsSimulate(t *testing.T) {
	for _, n := range Names() {
		s, err := Builtin(n)
		if err != nil {
			t.Fatal(err)
		}
		res, err := train.Run(context.Background(), s.Config)
		if err != nil {
			t.Errorf("%s: Run: %v", n, err)
			continue
		}
		if res.OOM != nil {
			if !strings.Contains(res.OOM.Message, "Error") {
				t.Errorf("%s: OOM message %q is not TF's", n, res.OOM.Message)
			}
			continue
		}
		var sum float64
		for _, sh := range res.Breakdown {
			sum += sh.Seconds
		}
		if d := sum - res.StepTime; d > 1e-8 || d < -1e-8 {
			t.Errorf("%s: breakdown sums to %v, step time %v", n, sum, res.StepTime)
		}
		for _, d := range res.Devices {
			if len(d.Timeline) > s.Config.TimelinePoints {
				t.Errorf("%s: %s timeline has %d points, cap %d", n, d.Name, len(d.Timeline), s.Config.TimelinePoints)
			}
			if d.PeakBytesInUse > d.BytesLimit {
				t.Errorf("%s: %s peak %d above limit %d", n, d.Name, d.PeakBytesInUse, d.BytesLimit)
			}
		}
	}
}

// TestSetAllOrderFree checks that cross-key checks wait for every override.
func TestSetAllOrderFree(t *testing.T) {
	for _, kvs := range [][]string{
		{"memory.mode=limit", "memory.limit_mib=4096"},
		{"memory.limit_mib=4096", "memory.mode=limit"},
	} {
		s, err := Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetAll(kvs); err != nil {
			t.Errorf("SetAll(%q) = %v, want nil", kvs, err)
		}
	}
}

// Defaults apply once and never by comparing with a default: an explicit storage bandwidth
// equal to the default host's (7e9) stays 7e9 on host dgx-a100, whose disk reads 2.5e10; a
// value left unset takes the profile's.
func TestExplicitInputKeptOverHostProfile(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       float64
	}{
		{"explicit 7e9", "hardware:\n  host:\n    profile: dgx-a100\ninput:\n  storage_bandwidth: 7e9\n", 7e9},
		{"explicit 6.9e9", "hardware:\n  host:\n    profile: dgx-a100\ninput:\n  storage_bandwidth: 6.9e9\n", 6.9e9},
		{"unset", "hardware:\n  host:\n    profile: dgx-a100\ninput:\n  prefetch: 1\n", 25e9},
		{"unset, default host", "input:\n  prefetch: 1\n", 7e9},
	} {
		s, err := Parse("s.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		pc, err := train.InputPipeline(s.Config, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if pc.StorageBandwidth != tc.want {
			t.Errorf("%s: storage bandwidth %g, want %g", tc.name, pc.StorageBandwidth, tc.want)
		}
	}
	// Set after the profile, or the profile after the value: the same.
	s, err := Parse("s.yaml", []byte("input:\n  storage_bandwidth: 7e9\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll([]string{"hardware.host.profile=dgx-a100", "input.host.cores=16"}); err != nil {
		t.Fatal(err)
	}
	pc, err := train.InputPipeline(s.Config, 1)
	if err != nil {
		t.Fatal(err)
	}
	if pc.StorageBandwidth != 7e9 || pc.Host.Cores != 16 || pc.Host.MemoryBytes != 1024<<30 {
		t.Errorf("--set profile after the file: bandwidth %g, cores %d, memory %d; want 7e9, 16 (set), 1 TiB (profile)", pc.StorageBandwidth, pc.Host.Cores, pc.Host.MemoryBytes)
	}
}

// Key maps train's Go field paths to scenario keys, and every key it names is in the schema.
func TestKeyOfFieldPaths(t *testing.T) {
	for path, want := range map[string]string{
		"Batch":                           "batch",
		"GPU":                             "hardware.gpu",
		"Memory":                          "memory",
		"Memory.LimitMiB":                 "memory.limit_mib",
		"Memory.GrowthAfterLimit":         "memory.growth_after_limit",
		"Processes[2]":                    "processes[2]",
		"Processes[0].UsedBytes":          "processes[0].used_mib",
		"Processes[1].Memory.Mode":        "processes[1].memory.mode",
		"Input.Pipeline.Host.BusyCores":   "input.host.busy_cores",
		"Input.Pipeline.StorageBandwidth": "input.storage_bandwidth",
		"Nope.Field":                      "Nope.Field",
	} {
		if got := Key(path); got != want {
			t.Errorf("Key(%q) = %q, want %q", path, got, want)
		}
	}
	// Every field the schema names is a field of train.Config, set by one key.
	seen := map[string]string{}
	for _, f := range schema {
		for _, path := range strings.Fields(f.fields) {
			if k, dup := seen[path]; dup {
				t.Errorf("%s: field %s is %s's too", f.path, path, k)
			}
			seen[path] = f.path
			typ := reflect.TypeFor[train.Config]()
			for _, name := range strings.Split(path, ".") {
				if typ.Kind() == reflect.Pointer {
					typ = typ.Elem()
				}
				sf, ok := typ.FieldByName(name)
				if !ok {
					t.Errorf("%s: field %s: train.Config has no %s", f.path, path, name)
					break
				}
				typ = sf.Type
			}
		}
	}
	for _, m := range memorySection {
		if _, ok := reflect.TypeFor[train.Memory]().FieldByName(m.field); !ok {
			t.Errorf("memory.%s: train.Memory has no %s", m.key, m.field)
		}
	}
	for _, p := range processSection {
		if _, ok := reflect.TypeFor[train.Process]().FieldByName(p.field); !ok {
			t.Errorf("processes[].%s: train.Process has no %s", p.key, p.field)
		}
	}
}

// TestFixedLossScaleAsNumber: static_loss_scale takes the scale itself, as Keras's
// LossScaleOptimizer(dynamic=False, initial_scale=128) and ConvNets' --static_loss_scale 128
// give it, or true; false keeps the dynamic scale.
func TestFixedLossScaleAsNumber(t *testing.T) {
	for doc, want := range map[string]bool{
		"static_loss_scale: 128\n": true, "static_loss_scale: 0.5\n": true,
		"static_loss_scale: true\n": true, "static_loss_scale: false\n": false,
	} {
		sc, err := Parse("s.yaml", []byte("precision: mixed_float16\n"+doc))
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		if sc.Config.StaticLossScale != want {
			t.Errorf("%q: StaticLossScale %v, want %v", doc, sc.Config.StaticLossScale, want)
		}
	}
}

// TestTraintestIsTheBuiltins: each configuration train/traintest gives the tests below
// scenarios is the one its built-in loads to.
func TestTraintestIsTheBuiltins(t *testing.T) {
	for name, cfg := range traintest.Builtins {
		s, err := Builtin(name)
		if err != nil {
			t.Errorf("traintest.Builtins[%q]: %v", name, err)
			continue
		}
		if d := cmp.Diff(s.Config, cfg()); d != "" {
			t.Errorf("traintest.Builtins[%q] is not the built-in's configuration (-built-in +traintest):\n%s", name, d)
		}
	}
}

// train's messages name Go fields (train.FieldError.Mentions); a scenario's error names their
// keys in their place.
func TestTrainMessagesNameKeys(t *testing.T) {
	for _, tc := range []struct {
		sets      []string
		goes, key string
	}{
		{[]string{"memory.mode=limit"}, "limit needs Memory.LimitMiB", "memory.mode: limit needs memory.limit_mib"},
		{[]string{"hardware.nodes=2", "strategy.name=horovod", "cuda_visible_devices=0"},
			"CUDAVisibleDevices, VisibleDevices, Memory.LogicalMiB (logical devices) and Processes are simulated",
			"cuda_visible_devices, tf.visible_devices, memory.logical_devices_mib (logical devices) and processes are simulated"},
		{[]string{"input_on_device=true", "fit_from_arrays=true"}, "(FitFromArrays or Input)", "(fit_from_arrays or input)"},
	} {
		s, err := Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		err = s.SetAll(tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("SetAll(%v) = %v, want it to say %q", tc.sets, err, tc.key)
		}
		if err := s.Config.Validate(); err == nil || !strings.Contains(err.Error(), tc.goes) {
			t.Errorf("%v: Validate() = %v, want it to say %q", tc.sets, err, tc.goes)
		}
	}
}
