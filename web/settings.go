package web

import (
	"strconv"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/train"
)

// control is one setting a class changes on the page: a scenario key (the --set key) and how
// the page offers it. Options lists the values of a select; "" in a list of options stands
// for "as the scenario has it" where the key has no value to show (no tf.data pipeline, no
// CUDA_VISIBLE_DEVICES).
type control struct {
	Key     string   `json:"key"`
	Label   string   `json:"label"`
	Kind    string   `json:"kind"` // select, number, bool, text
	Options []string `json:"options,omitempty"`
	Min     int      `json:"min,omitempty"`
	Help    string   `json:"help"`
}

// controls are the list: model, batch, GPU, count, precision, XLA, memory mode, limit,
// growth, prefetch, parallel calls, cache, accumulation, CUDA_VISIBLE_DEVICES.
func controls() []control {
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
		"model":              cfg.Model,
		"batch":              strconv.Itoa(cfg.Batch),
		"hardware.gpu":       cfg.GPU,
		"hardware.count":     strconv.Itoa(cfg.GPUCount),
		"precision":          cfg.Precision,
		"xla":                b(cfg.XLA),
		"memory.mode":        cfg.Memory.Mode,
		"memory.limit_mib":   strconv.FormatInt(cfg.Memory.LimitMiB, 10),
		"memory.growth":      b(cfg.Memory.Growth != nil && *cfg.Memory.Growth),
		"accumulation_steps": strconv.Itoa(cfg.AccumulationSteps),
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
