package web

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/train"
)

// control is one setting a class changes on the page: a scenario key (the --set key) and how
// the page offers it. Options lists the values of a select; "" in a list of options stands
// for "as the scenario has it" where the key has no value to show (no tf.data pipeline, no
// CUDA_VISIBLE_DEVICES). Labels, when set, name the options in the same order (a value that
// is YAML, as the other processes' list, reads badly in a select).
type control struct {
	Key     string   `json:"key"`
	Label   string   `json:"label"`
	Kind    string   `json:"kind"` // select, number, bool, text
	Options []string `json:"options,omitempty"`
	Labels  []string `json:"labels,omitempty"`
	Min     int      `json:"min,omitempty"`
	Help    string   `json:"help"`
}

// processPresets are the other processes the page offers, as --set processes=... values in
// processesValue's form (so a scenario that has one of them shows it selected): none, the
// guide's Jupyter kernel (section 2.3: it ran one cell and preallocated the card; its
// tensors use 3 GiB, as jupyter-second-process has it), the same kernel with
// set_memory_growth (it holds what it uses), and a second training job on every card.
var processPresets = [][2]string{
	{"[]", "none: alone on the cards"},
	{"[{name: jupyter, gpus: [0], used_mib: 3072}]", "Jupyter kernel on GPU 0, 3 GiB used, pool preallocated"},
	{"[{name: jupyter, gpus: [0], used_mib: 3072, memory: {growth: true}}]", "Jupyter kernel on GPU 0, 3 GiB used, with memory growth"},
	{"[{name: second-job, used_mib: 8192, memory: {growth: true}}]", "a second job on every card, 8 GiB, with memory growth"},
}

// controls are the list: model, batch, GPU, count, precision, XLA, memory mode, limit,
// growth, prefetch, parallel calls, cache, accumulation, CUDA_VISIBLE_DEVICES; then the
// optimizer, the distribution strategy, XLA's input shapes, a tf.device scope and the other
// processes on the cards.
func controls() []control {
	var procs, procLabels []string
	for _, p := range processPresets {
		procs, procLabels = append(procs, p[0]), append(procLabels, p[1])
	}
	return []control{
		{Key: "model", Label: "model", Kind: "select", Options: models.Names(), Help: "Keras model (gpusim list models)"},
		{Key: "batch", Label: "batch", Kind: "number", Min: 1, Help: "global batch per optimizer update"},
		{Key: "hardware.gpu", Label: "GPU", Kind: "select", Options: hw.GPUNames(), Help: "GPU profile (gpusim list devices)"},
		{Key: "hardware.count", Label: "GPUs on the host", Kind: "number", Min: 1, Help: "physical GPUs"},
		{Key: "precision", Label: "precision", Kind: "select", Options: []string{"float32", "mixed_float16", "mixed_bfloat16"}, Help: "mixed_precision.set_global_policy"},
		{Key: "xla", Label: "XLA (jit_compile)", Kind: "bool", Help: "model.compile(jit_compile=True)"},
		{Key: "memory.mode", Label: "memory mode", Kind: "select", Options: []string{"", "preallocate", "growth", "limit"}, Help: "which memory call the program makes; empty: as growth and limit say"},
		{Key: "memory.limit_mib", Label: "memory_limit (MiB)", Kind: "number", Min: 0, Help: "LogicalDeviceConfiguration(memory_limit=...); 0: none"},
		{Key: "memory.growth", Label: "set_memory_growth", Kind: "bool", Help: "tf.config.experimental.set_memory_growth(gpu, True)"},
		{Key: "input.prefetch", Label: "prefetch", Kind: "select", Options: []string{"", "0", "1", "2", "4", "autotune"}, Help: "dataset.prefetch(n); empty: synthetic data, no tf.data"},
		{Key: "input.map.parallel_calls", Label: "map parallel calls", Kind: "select", Options: []string{"", "0", "1", "2", "4", "8", "16", "autotune"}, Help: "map(num_parallel_calls=n); 0: sequential"},
		{Key: "input.cache", Label: "cache", Kind: "select", Options: []string{"", "none", "memory", "file"}, Help: "dataset.cache()"},
		{Key: "accumulation_steps", Label: "accumulation steps", Kind: "number", Min: 1, Help: "micro-batches per optimizer update"},
		{Key: "cuda_visible_devices", Label: "CUDA_VISIBLE_DEVICES", Kind: "text", Help: "e.g. 2,3; empty: unset"},
		{Key: "optimizer", Label: "optimizer", Kind: "select", Options: models.Optimizers(), Help: "Keras optimizer: its slot variables take memory (adam two per weight, sgd none)"},
		{Key: "strategy.name", Label: "strategy", Kind: "select", Options: []string{"default", "mirrored", "multi_worker_mirrored", "horovod"}, Help: "tf.distribute strategy: default runs one replica on the first visible GPU"},
		{Key: "xla_distinct_shapes", Label: "XLA input shapes", Kind: "number", Min: 1, Help: "distinct input shapes; under XLA each new one recompiles the step"},
		{Key: "tf.device", Label: "tf.device", Kind: "text", Help: "tf.device scope around the model, e.g. /GPU:1; empty: none"},
		{Key: "processes", Label: "other processes", Kind: "select", Options: procs, Labels: procLabels, Help: "processes that started first on the same cards and keep their memory"},
	}
}

// settings returns each control's value in cfg, as the --set value that would set it.
func settings(cfg *train.Config) map[string]string {
	b := strconv.FormatBool
	tunable := func(n int) string {
		if n == train.Autotune {
			return "autotune"
		}
		return strconv.Itoa(n)
	}
	s := map[string]string{
		"model":               cfg.Model,
		"batch":               strconv.Itoa(cfg.Batch),
		"hardware.gpu":        cfg.GPU,
		"hardware.count":      strconv.Itoa(cfg.GPUCount),
		"precision":           cfg.Precision,
		"xla":                 b(cfg.XLA),
		"memory.mode":         cfg.Memory.Mode,
		"memory.limit_mib":    strconv.FormatInt(cfg.Memory.LimitMiB, 10),
		"memory.growth":       b(cfg.Memory.Growth != nil && *cfg.Memory.Growth),
		"accumulation_steps":  strconv.Itoa(cfg.AccumulationSteps),
		"optimizer":           cfg.Optimizer,
		"strategy.name":       cfg.Strategy,
		"xla_distinct_shapes": strconv.Itoa(max(cfg.XLADistinctShapes, 1)),
		"tf.device":           cfg.Device,
		"processes":           processesValue(cfg.Processes),
	}
	if in := cfg.Input; in != nil {
		s["input.prefetch"] = tunable(in.Prefetch)
		s["input.map.parallel_calls"] = tunable(in.ParallelCalls)
		s["input.cache"] = in.Cache
	} else {
		s["input.prefetch"], s["input.map.parallel_calls"], s["input.cache"] = "", "", ""
	}
	if v := cfg.CUDAVisibleDevices; v != nil {
		s["cuda_visible_devices"] = *v
	} else {
		s["cuda_visible_devices"] = ""
	}
	return s
}

// processesValue writes processes as the --set processes=... flow list that sets them again
// (TestProcessesValueRoundTrips): every field that differs from scenarios' defaults (a
// process named process<i>, TF's BFC allocator), in the schema's key order.
func processesValue(ps []train.Process) string {
	items := make([]string, len(ps))
	for i, p := range ps {
		f := []string{"name: " + yamlString(p.Name)}
		if p.Framework != "" {
			f = append(f, "framework: "+yamlString(p.Framework))
		}
		if p.GPUs != nil {
			f = append(f, "gpus: "+intsValue(p.GPUs))
		}
		if p.UsedBytes != 0 {
			f = append(f, "used_mib: "+strconv.FormatInt(p.UsedBytes>>20, 10))
		}
		if m := memoryValue(p.Memory); m != "" {
			f = append(f, "memory: {"+m+"}")
		}
		if len(p.Env) > 0 {
			keys := make([]string, 0, len(p.Env))
			for k := range p.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			kv := make([]string, len(keys))
			for j, k := range keys {
				kv[j] = yamlString(k) + ": " + yamlString(p.Env[k])
			}
			f = append(f, "env: {"+strings.Join(kv, ", ")+"}")
		}
		items[i] = "{" + strings.Join(f, ", ") + "}"
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// memoryValue is a process's memory options as the inside of a flow mapping; "" for the
// defaults.
func memoryValue(m train.Memory) string {
	var f []string
	if m.Mode != "" {
		f = append(f, "mode: "+yamlString(m.Mode))
	}
	if m.Growth != nil {
		f = append(f, "growth: "+strconv.FormatBool(*m.Growth))
	}
	if m.GrowthAfterLimit {
		f = append(f, "growth_after_limit: true")
	}
	if m.LimitMiB != 0 {
		f = append(f, "limit_mib: "+strconv.FormatInt(m.LimitMiB, 10))
	}
	if m.LogicalMiB != nil {
		f = append(f, "logical_devices_mib: "+intsValue(m.LogicalMiB))
	}
	if m.Fraction != 0 {
		f = append(f, "fraction: "+strconv.FormatFloat(m.Fraction, 'g', -1, 64))
	}
	if m.Allocator != "" && m.Allocator != "bfc" {
		f = append(f, "allocator: "+yamlString(m.Allocator))
	}
	if m.GC != nil {
		f = append(f, "gc: "+strconv.FormatBool(*m.GC))
	}
	return strings.Join(f, ", ")
}

func intsValue[T int | int64](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatInt(int64(x), 10)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// yamlString is s as a plain YAML scalar where that reads back as the same string, else
// double-quoted (YAML's double-quoted escapes are a superset of Go's).
func yamlString(s string) string {
	plain := s != "" && !slices.Contains([]string{"true", "false", "null", "yes", "no", "on", "off", "~"}, strings.ToLower(s))
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || (r == '-' || r == '.' || r >= '0' && r <= '9') && i > 0) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return fmt.Sprintf("%q", s)
}
