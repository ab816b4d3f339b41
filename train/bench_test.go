package train

import (
	"context"
	"testing"
)

// BenchmarkRun simulates ResNet-50 on one GPU for 1,000 steps (docs/design.md budget: well under a
// second; target < 0.2 s) and reports simulated steps per second of wall time.
func BenchmarkRun(b *testing.B) {
	c := DefaultConfig()
	c.Steps = 1000
	benchRun(b, c)
}

// BenchmarkRunMirrored8 is docs/design.md's other budget: ResNet-50 on 8 GPUs with
// MirroredStrategy for 1,000 steps in under 1 s.
func BenchmarkRunMirrored8(b *testing.B) {
	c := DefaultConfig()
	c.Steps, c.GPUCount, c.Strategy, c.Batch = 1000, 8, "mirrored", 512
	benchRun(b, c)
}

// BenchmarkRunMirrored8Long is DESIGN.md's long-run budget: ResNet-50 on 8 GPUs with
// MirroredStrategy for 1M steps in under 1 s and 100 MB (fast-forwarded: O(1) per stretch of
// identical steps, so the cost is the first steps plus the per-step records). The replicas are
// symmetric (no jitter, replica 0 simulated once); BenchmarkRunMirrored8Jitter is the default
// with jitter, fast-forwarded by a window of steps.
func BenchmarkRunMirrored8Long(b *testing.B) {
	c := DefaultConfig()
	c.Steps, c.GPUCount, c.Strategy, c.Batch, c.SymmetricReplicas = 1_000_000, 8, "mirrored", 512, true
	b.ReportAllocs()
	benchRun(b, c)
}

// BenchmarkRunSymmetric8 runs ResNet-50 on 8 symmetric A100s, each GPU with its own host
// threads, for 100 steps without fast-forward: "once" simulates replica 0 and copies it
// (replay.go), "full" simulates all 8; both report simulated steps per second.
func BenchmarkRunSymmetric8(b *testing.B) {
	c := DefaultConfig()
	c.Steps, c.GPUCount, c.Strategy, c.Batch, c.FastForward = 100, 8, "mirrored", 512, false
	c.SymmetricReplicas, c.Env = true, map[string]string{"TF_GPU_THREAD_MODE": "gpu_private"}
	for _, once := range []bool{true, false} {
		name := map[bool]string{true: "once", false: "full"}[once]
		b.Run(name, func(b *testing.B) {
			steps := 0
			for b.Loop() {
				res, _, err := runOnce(context.Background(), c, MaxEvents, once)
				if err != nil {
					b.Fatal(err)
				}
				steps += len(res.StepTimes)
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// benchRun runs c once per iteration and reports simulated steps per second of wall time and
// seconds per run; a run that ends in an OOM fails the benchmark (it would time a shorter run).
func benchRun(b *testing.B, c Config) {
	b.Helper()
	steps := 0
	for b.Loop() {
		res, err := Run(context.Background(), c)
		if err != nil {
			b.Fatal(err)
		}
		if res.OOM != nil {
			b.Fatal(res.OOM.Message)
		}
		steps += len(res.StepTimes)
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
}

// BenchmarkPriceResNet50Step prices every op of a ResNet-50 training step (batch 64, float32
// with TF32 allowed, on an RTX 3090: the autotuner's candidates, the shape and the sustained
// clock) through the cost model, bypassing the priced-plan memo: what a new configuration costs
// before its steps are simulated.
func BenchmarkPriceResNet50Step(b *testing.B) {
	c := DefaultConfig()
	c.Model, c.GPU, c.Batch = "resnet50", "rtx3090", 64
	r, err := newRunner(c, false)
	if err != nil {
		b.Fatal(err)
	}
	mp, err := r.plans.model.Plan(planOptions(&r.cfg, r.fw, r.mach.gpu, 64))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.pricePlan(mp, 64, pricedKey{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(mp.Ops)), "ops/step")
}
