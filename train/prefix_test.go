package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPrefixMatchesShortRun checks Result.Prefix against the short run it stands for: a run
// of 40 steps reports, for its first PrefixSteps steps, exactly the OOM and peaks a run of
// PrefixSteps steps of the same configuration reports, whether it fits, runs out of memory in
// step 1, or only later.
func TestPrefixMatchesShortRun(t *testing.T) {
	g := true
	for name, f := range map[string]func(c *Config){
		"default":      nil,
		"growth":       func(c *Config) { c.Memory.Growth = &g },
		"xla":          func(c *Config) { c.XLA, c.Optimizer = true, "adam" },
		"xla-growth":   func(c *Config) { c.XLA, c.Memory.Growth, c.Batch = true, &g, 192 },
		"accumulation": func(c *Config) { c.AccumulationSteps, c.Batch, c.Optimizer = 4, 128, "rmsprop" },
		"mixed":        func(c *Config) { c.Precision, c.Optimizer = "mixed_float16", "adam" },
		"mirrored":     func(c *Config) { c.GPUCount, c.Strategy, c.Batch = 2, "mirrored", 128 },
		"oom-step-1":   func(c *Config) { c.Batch = 1024 },
		"near-limit":   func(c *Config) { c.GPU, c.Batch, c.Memory.Growth = "t4", 160, &g },
		"gc":           func(c *Config) { c.Memory.Growth, c.Memory.GC = &g, &g },
	} {
		long := cfgWith(f)
		long.Steps, long.TimelinePoints = 40, 500
		short := long
		short.Steps, short.TimelinePoints, short.Name = PrefixSteps, 2, long.Name+" (short)"
		lr, sr := mustRun(t, long), mustRun(t, short)
		want := Prefix{Steps: PrefixSteps, OOM: sr.OOM}
		for _, d := range sr.Devices {
			want.PeakBytesInUse = append(want.PeakBytesInUse, d.PeakBytesInUse)
		}
		if diff := cmp.Diff(want, lr.Prefix); diff != "" {
			t.Errorf("%s: the 40-step run's prefix differs from the %d-step run (-short +prefix):\n%s", name, PrefixSteps, diff)
		}
		if name == "oom-step-1" && (sr.OOM == nil || lr.OOM == nil || lr.OOM.Step != 1) {
			t.Errorf("%s: want an OOM in step 1, got %+v", name, lr.OOM)
		}
		if diff := cmp.Diff(want, sr.Prefix); diff != "" {
			t.Errorf("%s: the short run's own prefix differs from its result:\n%s", name, diff)
		}
	}
	one := cfgWith(nil)
	one.Steps = 1
	if r := mustRun(t, one); r.Prefix.Steps != 1 || r.Prefix.PeakBytesInUse[0] != r.Devices[0].PeakBytesInUse {
		t.Errorf("1-step run: prefix %+v, want its own result", r.Prefix)
	}
	in := cfgWith(func(c *Config) { c.Input = &Input{Cache: "none"} })
	if r := mustRun(t, in); r.Prefix.Steps != 0 {
		t.Errorf("input-fed run: prefix %+v, want none (its pipeline runs past the last step)", r.Prefix)
	}
}
