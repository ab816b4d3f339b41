package hw

import (
	"math"
	"testing"
)

// A 64-lane SM gets back, up to a factor 2, the issue slots a 128-lane SM loses to a kernel's
// non-FFMA instructions: SGEMM runs at the full rate on a V100 and a convolution at twice the
// H200's fraction; on 128-lane GPUs the fitted fraction stands.
func TestFP32Fraction(t *testing.T) {
	e := DefaultEfficiency()
	tests := []struct {
		gpu        string
		conv, gemm float64
	}{
		{"v100-16gb", 2 * e.ConvFP32, 1},
		{"a100-40gb", 2 * e.ConvFP32, 1},
		{"t4", 2 * e.ConvFP32, 1},
		{"h200", e.ConvFP32, e.FP32},
		{"gtx1080ti", e.ConvFP32, e.FP32},
	}
	for _, tc := range tests {
		g, err := LookupGPU(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		// Fractions of the FP32 peak at the clock the card trains at (SustainedClock).
		peak := g.PeakFP32 * g.SustainedClock() / g.BoostClock()
		conv := g.ComputeRate(Work{Kind: KindConv, FLOPs: 1}) / peak
		gemm := g.ComputeRate(Work{Kind: KindMatMul, FLOPs: 1}) / peak
		if math.Abs(conv-tc.conv) > 1e-9 || math.Abs(gemm-tc.gemm) > 1e-9 {
			t.Errorf("%s FP32 fraction: conv %.3f gemm %.3f, want %.3f and %.3f", tc.gpu, conv, gemm, tc.conv, tc.gemm)
		}
	}
}

// An NCHW TF32 convolution costs its NHWC time plus the transposes, which read and write x and
// y (forward) and x, y twice (gradient); a 1x1 stride-1 forward runs in place; half precision
// and FP32 convolutions and NHWC ones pay nothing.
func TestNCHWTransposes(t *testing.T) {
	g, _ := LookupGPU("a100-40gb")
	stream := g.MemBandwidth * g.Efficiency.Memory
	// ResNet-50's conv2 3x3 at batch 256: x and y 256x64x56x56 float32, 205.5 MB each.
	s3 := Shape{M: 256 * 56 * 56, N: 64, K: 576, FilterH: 3, FilterW: 3, Stride: 1, InC: 64}
	s1 := Shape{M: 256 * 56 * 56, N: 256, K: 64, FilterH: 1, FilterW: 1, Stride: 1, InC: 64}
	xy3 := float64(256*56*56*(64+64)) * 4
	xy1 := float64(256*56*56*(64+256)) * 4
	tests := []struct {
		name  string
		w     Work
		extra float64 // seconds of transposes
	}{
		{"3x3 forward", Work{Kind: KindConv, FLOPs: 59e9, Bytes: xy3, DType: Float32, TF32: true, Shape: s3}, 2 * xy3 / stream},
		{"3x3 gradient", Work{Kind: KindConv, FLOPs: 118e9, Bytes: xy3, DType: Float32, TF32: true, Grad: true, Shape: s3}, 4 * xy3 / stream},
		{"1x1 forward", Work{Kind: KindConv, FLOPs: 26e9, Bytes: xy1, DType: Float32, TF32: true, Shape: s1}, 0},
		{"1x1 gradient", Work{Kind: KindConv, FLOPs: 52e9, Bytes: xy1, DType: Float32, TF32: true, Grad: true, Shape: s1}, 2 * xy1 / stream},
		{"3x3 fp16", Work{Kind: KindConv, FLOPs: 59e9, Bytes: xy3 / 2, DType: Float16, Shape: s3}, 0},
		{"3x3 fp32, TF32 off", Work{Kind: KindConv, FLOPs: 59e9, Bytes: xy3, DType: Float32, Shape: s3}, 0},
	}
	for _, tc := range tests {
		nhwc := tc.w
		nhwc.NHWC = true
		// On the path the dtype asks for: the autotuner may keep a CUDA-core kernel instead
		// (candidatePaths), which TestAutotuneNeverSlower covers.
		a, b := g.costOn(tc.w, g.path(tc.w)).Exec, g.costOn(nhwc, g.path(nhwc)).Exec
		if math.Abs((a-b)-tc.extra) > 1e-9 {
			t.Errorf("%s: NCHW %.1f us, NHWC %.1f us: transposes %.1f us, want %.1f", tc.name, a*1e6, b*1e6, (a-b)*1e6, tc.extra*1e6)
		}
	}
}
