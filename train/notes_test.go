package train

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Keras' mixed_float16 compatibility check, in its three forms; nothing for mixed_bfloat16
// (Keras checks only mixed_float16) or for cards of compute capability 7.0 and newer.
func TestMixedFloat16Warning(t *testing.T) {
	old := gpuDetails{"NVIDIA GeForce GTX 1080 Ti", 6, 1}
	v100 := gpuDetails{"Tesla V100-SXM2-16GB", 7, 0}
	for _, tc := range []struct {
		policy string
		gpus   []gpuDetails
		want   string // "" = no warning; else a substring
	}{
		{"mixed_float16", []gpuDetails{old}, "Your GPU may run slowly with dtype policy mixed_float16 because it does not have compute capability of at least 7.0. Your GPU:\n  NVIDIA GeForce GTX 1080 Ti, compute capability 6.1\n"},
		{"mixed_float16", []gpuDetails{old, old}, "Your GPUs may run slowly with dtype policy mixed_float16 because they do not have compute capability of at least 7.0. Your GPUs:\n  NVIDIA GeForce GTX 1080 Ti, compute capability 6.1 (x2)\n"},
		{"mixed_float16", []gpuDetails{v100, old}, "Some of your GPUs may run slowly with dtype policy mixed_float16 because they do not all have compute capability of at least 7.0. Your GPUs:\n  Tesla V100-SXM2-16GB, compute capability 7.0\n  NVIDIA GeForce GTX 1080 Ti, compute capability 6.1\n"},
		{"mixed_float16", []gpuDetails{v100}, ""},
		{"mixed_bfloat16", []gpuDetails{old}, ""},
		{"float32", []gpuDetails{old}, ""},
	} {
		got := mixedFloat16Warning(tc.policy, tc.gpus)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s on %v: got %q, want %q", tc.policy, tc.gpus, got, tc.want)
		}
		if got != "" && !strings.HasPrefix(got, "Mixed precision compatibility check (mixed_float16): WARNING\n") {
			t.Errorf("%s on %v: got %q, want Keras' prefix", tc.policy, tc.gpus, got)
		}
	}
	// Through Run: a GTX 1080 Ti warns, a T4 (7.5) does not.
	for gpu, want := range map[string]bool{"gtx1080ti": true, "t4": false} {
		res := mustRun(t, cfgWith(func(c *Config) { c.GPU, c.Precision, c.Steps = gpu, "mixed_float16", 2 }))
		got := false
		for _, w := range res.Warnings {
			got = got || strings.Contains(w, "compute capability of at least 7.0")
		}
		if got != want {
			t.Errorf("%s mixed_float16: Keras' compatibility warning %v, want %v (warnings %q)", gpu, got, want, res.Warnings)
		}
	}
}

// set_memory_growth then a logical device: growth is dropped with a note; the other order
// is TF's ValueError, on memory.growth_after_limit.
func TestGrowthAndLimitOrder(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Memory.Growth, c.Memory.LimitMiB = boolPtr(true), 6144 }))
	noted := false
	for _, n := range res.Notes {
		noted = noted || strings.Contains(n, "memory.growth=true is dropped")
	}
	if !noted {
		t.Errorf("growth then limit: notes %q, want one saying growth is dropped", res.Notes)
	}
	if d := res.Devices[0]; len(d.Growth) != 1 {
		t.Errorf("growth then limit: %d pool changes, want one region (growth dropped)", len(d.Growth))
	}
	// Growth alone, or a limit alone: no such note.
	for _, f := range []func(*Config){
		func(c *Config) { c.Memory.Growth = boolPtr(true) },
		func(c *Config) { c.Memory.LimitMiB = 6144 },
		func(c *Config) { c.Memory.Growth, c.Memory.LimitMiB = boolPtr(false), 6144 },
	} {
		for _, n := range mustRun(t, cfgWith(f)).Notes {
			if strings.Contains(n, "is dropped") {
				t.Errorf("note %q without growth=true and a limit", n)
			}
		}
	}
	for _, tc := range []struct {
		name string
		f    func(*Config)
		want string
	}{
		{"growth after limit", func(c *Config) {
			c.Memory.Growth, c.Memory.LimitMiB, c.Memory.GrowthAfterLimit = boolPtr(true), 6144, true
		}, "ValueError: Cannot set memory growth on device when virtual devices configured"},
		{"growth after logical devices", func(c *Config) {
			c.Memory.Growth, c.Memory.LogicalMiB, c.Memory.GrowthAfterLimit = boolPtr(false), []int64{2048, 2048}, true
		}, "ValueError: Cannot set memory growth on device when virtual devices configured"},
	} {
		_, err := Run(context.Background(), cfgWith(tc.f))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "Memory.GrowthAfterLimit" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want a FieldError on memory.growth_after_limit with %q", tc.name, err, tc.want)
		}
	}
	// The order changes nothing without a logical configuration, or without set_memory_growth.
	for _, f := range []func(*Config){
		func(c *Config) { c.Memory.Growth, c.Memory.GrowthAfterLimit = boolPtr(true), true },
		func(c *Config) { c.Memory.LimitMiB, c.Memory.GrowthAfterLimit = 6144, true },
	} {
		if _, err := Run(context.Background(), cfgWith(f)); err != nil {
			t.Errorf("growth_after_limit without both calls: %v, want a run", err)
		}
	}
}

func boolPtr(b bool) *bool { return &b }
