package train_test

import (
	"context"
	"testing"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/train"
)

// TestTF32NeverSlower: TF's convolution autotuner times every cuDNN algorithm with and
// without Tensor Core math and keeps the fastest (hw candidatePaths), and cuBLAS's heuristic
// may run FFMA kernels under CUBLAS_TF32_TENSOR_OP_MATH, so allowing TF32 can never make a
// step slower than float32 on the CUDA cores, on any GPU of the catalog, for any model of the
// zoo. A GeForce Ampere card, whose TF32 Tensor Cores run at its FP32 rate, once priced
// ResNet-50 with TF32 allowed at 0.77x the float32 throughput.
func TestTF32NeverSlower(t *testing.T) {
	gpus := hw.GPUNames()
	names := models.Names()
	if testing.Short() {
		gpus = []string{"rtx3080", "rtx3090", "a10", "rtx4090", "a100-40gb", "h200"}
		names = []string{"resnet50", "vgg16", "bert-base"}
	}
	for _, g := range gpus {
		gpu, err := hw.LookupGPU(g)
		if err != nil {
			t.Fatal(err)
		}
		if !gpu.SupportsTF32() {
			continue
		}
		for _, m := range names {
			step := func(tf32 bool) float64 {
				c := train.DefaultConfig()
				c.Model, c.GPU, c.Batch, c.Steps, c.TF32 = m, g, 16, 3, tf32
				res, err := train.Run(context.Background(), c)
				if err != nil {
					t.Fatalf("%s %s tf32=%v: %v", g, m, tf32, err)
				}
				if res.OOM != nil {
					return -1
				}
				return res.StepTime
			}
			on, off := step(true), step(false)
			if on < 0 || off < 0 {
				continue
			}
			if on > off*(1+1e-9) {
				t.Errorf("%s %s: step %.4g s with TF32 allowed, %.4g s without", g, m, on, off)
			}
		}
	}
}

// TestNoAutotuneTakesHeuristic: TF_CUDNN_USE_AUTOTUNE=0 runs cuDNN's heuristic's first
// choice, the Tensor Core implicit GEMM the math mode asks for, so on an RTX 3080 (TF32 at
// the FP32 rate, and NCHW transposes around it) float32 ResNet-50 with TF32 allowed is no
// faster than with autotuning, and slower than autotuning's pick.
func TestNoAutotuneTakesHeuristic(t *testing.T) {
	run := func(env map[string]string) float64 {
		c := train.DefaultConfig()
		c.Model, c.GPU, c.Batch, c.Steps, c.TF32, c.Env = "resnet50", "rtx3080", 56, 3, true, env
		res, err := train.Run(context.Background(), c)
		if err != nil || res.OOM != nil {
			t.Fatalf("run: %v %v", err, res.OOM)
		}
		return res.StepTime
	}
	tuned, heur := run(nil), run(map[string]string{"TF_CUDNN_USE_AUTOTUNE": "0"})
	if !(heur > tuned) {
		t.Errorf("heuristic step %.4g s, autotuned %.4g s: want the heuristic slower", heur, tuned)
	}
	if same := run(map[string]string{"TF_CUDNN_USE_AUTOTUNE": "yes"}); same != tuned {
		t.Errorf("TF_CUDNN_USE_AUTOTUNE=yes (not a bool TF reads) gave %.4g s, want the default %.4g", same, tuned)
	}
}

// TestNoAutotuneSkipsProfiling: without autotuning no convolution is profiled on its first
// run, so none of the candidates' scratch is allocated.
func TestNoAutotuneSkipsProfiling(t *testing.T) {
	c := train.DefaultConfig()
	c.Model, c.Batch, c.Steps, c.Env = "vgg16", 32, 3, map[string]string{"TF_CUDNN_USE_AUTOTUNE": "false"}
	res, err := train.Run(context.Background(), c)
	if err != nil || res.OOM != nil {
		t.Fatalf("run: %v %v", err, res.OOM)
	}
	if res.AutotunedConvs != 0 {
		t.Errorf("%d convolutions profiled with TF_CUDNN_USE_AUTOTUNE=false", res.AutotunedConvs)
	}
	if d := res.Devices[0]; d.FirstStepPeakBytes > d.SteadyPeakBytes {
		t.Errorf("first-step peak %d above the steady %d without profiling", d.FirstStepPeakBytes, d.SteadyPeakBytes)
	}
}
