package analysis

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/train"
)

func cfgWith(f func(c *train.Config)) train.Config {
	c := train.DefaultConfig()
	c.Steps = 5
	if f != nil {
		f(&c)
	}
	return c
}

func mustRun(t *testing.T, c train.Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// TestScalingAgainstOneGPU: ResNet-50, 64 samples per GPU, on 8 A100-40GB is compared with an
// independent 1-GPU run at 64; the efficiency is the throughput ratio over 8.
func TestScalingAgainstOneGPU(t *testing.T) {
	one := mustRun(t, cfgWith(func(c *train.Config) { c.Steps, c.Memory.Allocator = 20, "cuda_malloc_async" }))
	eight := mustRun(t, cfgWith(func(c *train.Config) {
		c.GPUCount, c.Strategy, c.Batch, c.Steps, c.Memory.Allocator = 8, "mirrored", 512, 20, "cuda_malloc_async"
	}))
	s := eight.Scaling
	if s == nil {
		t.Fatal("no scaling comparison")
	}
	if s.SingleStepTime != one.StepTime || s.SingleBatch != 64 {
		t.Errorf("scaling reference: batch %d step %v, want batch 64 step %v (the independent 1-GPU run)", s.SingleBatch, s.SingleStepTime, one.StepTime)
	}
	if want := eight.Throughput / (8 * one.Throughput); math.Abs(eight.ScalingEfficiency-want) > 1e-12 {
		t.Errorf("scaling efficiency %v, want throughput ratio / 8 = %v", eight.ScalingEfficiency, want)
	}
	// Not 0.95+: the one TF runtime dispatches all 8 replicas' ops and the slowest replica
	// sets each step (train/replicas.go).
	if eight.ScalingEfficiency < 0.85 || eight.ScalingEfficiency >= 0.95 {
		t.Errorf("scaling efficiency %v on NVSwitch, want in [0.85, 0.95)", eight.ScalingEfficiency)
	}
	if one.Scaling != nil {
		t.Errorf("one GPU: Scaling = %+v, want nil", one.Scaling)
	}
}

// MirroredStrategy(devices=["/gpu:0", "/gpu:1"]) on two of eight GPUs compares with one GPU at
// the per-replica batch.
func TestScalingStrategyDevices(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *train.Config) {
		cvd := "4,5,6,7"
		c.GPUCount, c.Strategy, c.Batch, c.Steps, c.CUDAVisibleDevices, c.StrategyDevices = 8, "mirrored", 64, 2, &cvd, []int{0, 1}
	}))
	if res.Scaling == nil || res.Scaling.SingleBatch != 32 {
		t.Errorf("scaling %+v, want a comparison with one GPU at batch 32", res.Scaling)
	}
}

// The seed guide says mixed precision saves 30-40% of peak memory. A mixed run compares
// itself with float32 (Result.PrecisionSaving) and, outside that band, a note says why.
func TestMixedPrecisionMemorySaving(t *testing.T) {
	for _, tc := range []struct {
		model, opt string
		batch      int
	}{{"resnet50", "momentum", 256}, {"bert-base:seq=128,head=mlm", "adamw", 64}, {"bert-base", "adam", 32}} {
		c := train.DefaultConfig()
		c.GPU, c.Model, c.Batch, c.Optimizer, c.Precision, c.Steps = "h200", tc.model, tc.batch, tc.opt, "mixed_float16", 20 // past the first skipped updates: slots exist
		res := mustRun(t, c)
		s := res.PrecisionSaving
		if s == nil {
			t.Fatalf("%s: PrecisionSaving = nil, want the float32 comparison", tc.model)
		}
		t.Logf("%s batch %d: float32 peak %.2f GiB, mixed %.2f GiB, saving %.1f%%, float32 variables+slots %.2f GiB; %s",
			tc.model, tc.batch, float64(s.Float32PeakBytes)/(1<<30), float64(s.MixedPeakBytes)/(1<<30), 100*s.Saving, float64(s.FixedBytes)/(1<<30), s.Reason)
		if s.Saving <= 0 || s.Saving >= 0.6 {
			t.Errorf("%s: saving %.1f%%, want in (0, 60%%): activations at most halve", tc.model, 100*s.Saving)
		}
		noted := false
		for _, n := range res.Notes {
			noted = noted || strings.Contains(n, "of peak memory against float32")
		}
		if inBand := s.Saving >= 0.3 && s.Saving <= 0.4; inBand != s.InBand || noted == inBand || (!inBand && s.Reason == "") {
			t.Errorf("%s: saving %.1f%%, InBand %v, note %v, reason %q: want a note with a reason exactly when outside 30-40%%", tc.model, 100*s.Saving, s.InBand, noted, s.Reason)
		}
	}
	// float32 runs carry no comparison.
	if res := mustRun(t, cfgWith(nil)); res.PrecisionSaving != nil {
		t.Errorf("float32 run: PrecisionSaving = %+v, want nil", res.PrecisionSaving)
	}
}

// The precision note names the policy's compute type: a mixed_bfloat16 run never says float16.
func TestPrecisionNoteNamesComputeType(t *testing.T) {
	float16 := regexp.MustCompile(`(^|[^b])float16`)
	for _, p := range []string{"mixed_bfloat16", "mixed_float16"} {
		c := train.DefaultConfig()
		c.GPU, c.Model, c.Batch, c.Optimizer, c.Precision, c.Steps = "h200", "bert-base", 64, "adam", p, 20
		res := mustRun(t, c)
		if res.PrecisionSaving == nil || res.PrecisionSaving.InBand {
			t.Fatalf("%s: saving %+v, want one outside 30-40%% (the note under test)", p, res.PrecisionSaving)
		}
		var note string
		for _, n := range res.Notes {
			if strings.Contains(n, "of peak memory against float32") {
				note = n
			}
		}
		want := "halve in " + strings.TrimPrefix(p, "mixed_")
		if !strings.Contains(note, want) && !strings.Contains(note, strings.TrimPrefix(p, "mixed_")+" copies") {
			t.Errorf("%s: note %q, want it to say %q", p, note, want)
		}
		if p == "mixed_bfloat16" && float16.MatchString(note) {
			t.Errorf("%s: note %q speaks of float16", p, note)
		}
	}
}
