package scenarios

import (
	"context"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// runBuiltin simulates built-in name with the overrides sets.
func runBuiltin(t *testing.T, name string, sets ...string) *analysis.Result {
	t.Helper()
	s, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets); err != nil {
		t.Fatalf("%s %v: %v", name, sets, err)
	}
	res, err := analysis.Run(context.Background(), s.Config)
	if err != nil {
		t.Fatalf("%s %v: Run: %v", name, sets, err)
	}
	return res
}

// TestPitfallScenariosShowWhatTheySay checks the claim in each guide-pitfall scenario's
// description, so a change in the simulator that breaks the lesson fails here.
func TestPitfallScenariosShowWhatTheySay(t *testing.T) {
	t.Run("memory-limit OOMs at the cap, fits with headroom", func(t *testing.T) {
		res := runBuiltin(t, "memory-limit")
		if res.OOM == nil || len(res.StepTimes) != 0 {
			t.Fatalf("memory-limit: oom %v after %d steps, want an OOM in step 1", res.OOM, len(res.StepTimes))
		}
		d := res.Devices[0]
		if want := int64(8192) << 20; d.BytesLimit != want || d.PeakPoolBytes != want {
			t.Errorf("memory-limit: limit %d, pool %d, want both %d (memory_limit=8192 MiB)", d.BytesLimit, d.PeakPoolBytes, want)
		}
		if res := runBuiltin(t, "memory-limit", "memory.limit_mib=12288"); res.OOM != nil {
			t.Errorf("memory-limit with 12288 MiB: %v, want a fit", res.OOM.Message)
		}
	})
	t.Run("jupyter-second-process OOMs only beside the kernel", func(t *testing.T) {
		if res := runBuiltin(t, "jupyter-second-process"); res.OOM == nil {
			t.Errorf("jupyter-second-process: fits, want an OOM beside the Jupyter kernel's pool")
		}
		if res := runBuiltin(t, "jupyter-second-process", "processes=[]"); res.OOM != nil {
			t.Errorf("jupyter-second-process alone: %v, want a fit", res.OOM.Message)
		}
	})
	t.Run("hardcoded-gpu lands on card 3", func(t *testing.T) {
		res := runBuiltin(t, "hardcoded-gpu")
		for _, d := range res.Devices {
			if !d.Idle && d.Physical != 3 {
				t.Errorf("hardcoded-gpu: the model runs on nvidia-smi GPU %d, want 3 (CUDA_VISIBLE_DEVICES=2,3, /GPU:1)", d.Physical)
			}
		}
	})
	t.Run("growth-fragmentation OOMs only with growth", func(t *testing.T) {
		if res := runBuiltin(t, "growth-fragmentation"); res.OOM == nil {
			t.Errorf("growth-fragmentation: fits, want an OOM with memory growth")
		}
		if res := runBuiltin(t, "growth-fragmentation", "memory.growth=false"); res.OOM != nil {
			t.Errorf("growth-fragmentation preallocated: %v, want a fit", res.OOM.Message)
		}
	})
	t.Run("growth-and-limit drops growth", func(t *testing.T) {
		res := runBuiltin(t, "growth-and-limit")
		d := res.Devices[0]
		if res.OOM != nil || d.PeakPoolBytes != 6144<<20 || len(d.Growth) != 1 {
			t.Errorf("growth-and-limit: oom %v, pool %d in %d changes, want a fit with one 6 GiB region", res.OOM, d.PeakPoolBytes, len(d.Growth))
		}
		noted := false
		for _, n := range res.Notes {
			noted = noted || strings.Contains(n, "memory.growth=true is dropped")
		}
		if !noted {
			t.Errorf("growth-and-limit: notes %q, want one saying growth is dropped", res.Notes)
		}
		// The other call order is TF's ValueError, a bad scenario on memory.growth_after_limit.
		s, err := Builtin("growth-and-limit")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Set("memory.growth_after_limit=true"); err != nil {
			t.Fatal(err)
		}
		var fe *train.FieldError
		if _, err := train.Run(context.Background(), s.Config); !errors.As(err, &fe) || fe.Field != "Memory.GrowthAfterLimit" ||
			!strings.Contains(err.Error(), "ValueError: Cannot set memory growth on device when virtual devices configured") {
			t.Errorf("growth-and-limit, growth after the limit: err %v, want TF's ValueError on memory.growth_after_limit", err)
		}
		g := runBuiltin(t, "growth-and-limit", "memory.mode=growth").Devices[0]
		if len(g.Growth) < 2 {
			t.Errorf("memory.mode=growth: %d pool changes, want the pool to grow region by region", len(g.Growth))
		}
	})
	t.Run("mixed-precision-old-card gains little but is smaller", func(t *testing.T) {
		mixed := runBuiltin(t, "mixed-precision-old-card")
		fp32 := runBuiltin(t, "mixed-precision-old-card", "precision=float32")
		// Pseudo-half: FP32-rate math, half the memory traffic: faster, but far from a Tensor
		// Core GPU's gain.
		if s := fp32.StepTime / mixed.StepTime; s <= 1 || s >= 1.5 {
			t.Errorf("gtx1080ti: mixed_float16 step %v, float32 %v (speedup %.2f): want a speedup between 1 and 1.5", mixed.StepTime, fp32.StepTime, s)
		}
		if mixed.Devices[0].PeakBytesInUse >= fp32.Devices[0].PeakBytesInUse {
			t.Errorf("gtx1080ti: mixed_float16 peak %d, float32 %d: want less memory", mixed.Devices[0].PeakBytesInUse, fp32.Devices[0].PeakBytesInUse)
		}
		warned := false
		for _, w := range mixed.Warnings {
			warned = warned || strings.Contains(w, "Your GPU may run slowly with dtype policy mixed_float16 because it does not have compute capability of at least 7.0")
		}
		if !warned {
			t.Errorf("gtx1080ti mixed_float16: warnings %q, want Keras' compatibility warning", mixed.Warnings)
		}
		if t4m, t4f := runBuiltin(t, "mixed-precision-old-card", "hardware.gpu=t4"), runBuiltin(t, "mixed-precision-old-card", "hardware.gpu=t4", "precision=float32"); t4f.StepTime/t4m.StepTime < 2 {
			t.Errorf("t4 (Tensor Cores): mixed_float16 step %v, float32 %v: want mixed at least 2x faster", t4m.StepTime, t4f.StepTime)
		}
	})
	t.Run("xla-recompile compiles once per shape", func(t *testing.T) {
		res := runBuiltin(t, "xla-recompile")
		one := runBuiltin(t, "xla-recompile", "xla_distinct_shapes=1")
		if res.XLACompiles != 8 || one.XLACompiles != 1 {
			t.Errorf("xla compiles: %d with 8 shapes, %d with 1, want 8 and 1", res.XLACompiles, one.XLACompiles)
		}
		if d := res.Diagnosis; d == nil || d.Bound != analysis.CompileBound {
			t.Errorf("xla-recompile: diagnosis %+v, want compile-bound", d)
		} else if ev := strings.Join(d.Evidence, "\n"); strings.Contains(ev, "starved GPU") || !strings.Contains(ev, "pad or bucket") {
			t.Errorf("xla-recompile: evidence %q, want the remedy and no starved GPU", ev)
		}
		if d := one.Diagnosis; d == nil || d.Bound == analysis.CompileBound {
			t.Errorf("xla-recompile with one shape: diagnosis %+v, want one compile not to be compile-bound", d)
		}
		if res.Elapsed <= one.Elapsed {
			t.Errorf("elapsed %v with 8 shapes, %v with 1: want recompiles to cost time", res.Elapsed, one.Elapsed)
		}
	})
}

// TestPitfallsDocNamesBuiltins checks that every scenario docs/pitfalls.md names (the third
// column of its table and each "gpusim run|compare|capacity ... NAME" command) is a built-in.
func TestPitfallsDocNamesBuiltins(t *testing.T) {
	data, err := os.ReadFile("../docs/pitfalls.md")
	if err != nil {
		t.Fatal(err)
	}
	names := Names()
	var seen int
	for _, line := range strings.Split(string(data), "\n") {
		var refs []string
		if cells := strings.Split(line, "|"); len(cells) == 6 && strings.Contains(cells[3], "`") {
			for _, m := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(cells[3], -1) {
				refs = append(refs, m[1])
			}
		}
		if m := regexp.MustCompile(`^\s+gpusim (?:run|compare|capacity max-batch) ([a-z0-9-]+)`).FindStringSubmatch(line); m != nil {
			refs = append(refs, m[1])
		}
		for _, r := range refs {
			seen++
			if !slices.Contains(names, r) {
				t.Errorf("docs/pitfalls.md names %q, not a built-in scenario (%v)", r, names)
			}
		}
	}
	if seen < 10 {
		t.Errorf("docs/pitfalls.md: found %d scenario references, want the table's and the commands'", seen)
	}
}
