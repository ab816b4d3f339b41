package hw

import (
	"math"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	tests := []struct {
		gpu  string
		w    Work
		want string
	}{
		{"a100-40gb", Work{Kind: KindMatMul, DType: Float32, TF32: true}, PathTF32},
		{"a100-40gb", Work{Kind: KindConv, DType: Float32, TF32: false}, PathFP32},
		{"v100-16gb", Work{Kind: KindConv, DType: Float32, TF32: true}, PathFP32}, // no TF32 before 8.0
		{"v100-16gb", Work{Kind: KindMatMul, DType: Float16}, PathFP16TC},
		{"t4", Work{Kind: KindConv, DType: Float16}, PathFP16TC},
		{"t4", Work{Kind: KindConv, DType: BFloat16}, PathPseudoHalf}, // no BF16 before 8.0
		{"h200", Work{Kind: KindConv, DType: BFloat16}, PathBF16TC},
		{"gtx1080ti", Work{Kind: KindConv, DType: Float16}, PathPseudoHalf},
		{"p100-16gb", Work{Kind: KindMatMul, DType: Float16}, PathPseudoHalf},
		{"h200", Work{Kind: KindElementwise, DType: Float16}, PathVector},
	}
	for _, tc := range tests {
		g, _ := LookupGPU(tc.gpu)
		if got := g.Path(tc.w); got != tc.want {
			t.Errorf("%s Path(%+v) = %s, want %s", tc.gpu, tc.w, got, tc.want)
		}
	}
}

func TestCostRoofline(t *testing.T) {
	g, _ := LookupGPU("h200")
	e := g.Efficiency
	// A large bf16 GEMM is compute-bound at peak * Half.
	big := Work{Kind: KindMatMul, FLOPs: 2 * 8192 * 8192 * 8192, Bytes: 3 * 8192 * 8192 * 2, DType: BFloat16}
	c, err := g.Cost(big)
	if err != nil {
		t.Fatal(err)
	}
	want := big.FLOPs/(g.PeakBF16*e.Half) + e.ComputeRamp + e.KernelGap
	if c.Bound != "compute" || math.Abs(c.Exec-want) > 1e-12 {
		t.Errorf("Cost(8192^3 bf16) = %+v, want compute-bound %g s", c, want)
	}
	// A large add is memory-bound at MemBandwidth * Memory.
	add := Work{Kind: KindElementwise, FLOPs: 1 << 28, Bytes: 3 * 4 << 28, DType: Float32}
	c, _ = g.Cost(add)
	want = add.Bytes/(g.MemBandwidth*e.Memory) + e.MemoryRamp + e.KernelGap
	if c.Bound != "memory" || math.Abs(c.Exec-want) > 1e-12 {
		t.Errorf("Cost(add 2^28) = %+v, want memory-bound %g s", c, want)
	}
	// Size-dependent efficiency: the achieved rate grows with size.
	prev := 0.0
	for _, n := range []float64{256, 1024, 4096, 16384} {
		w := Work{Kind: KindMatMul, FLOPs: 2 * n * n * n, Bytes: 6 * n * n, DType: Float16}
		rate := w.FLOPs / g.Time(w)
		if rate <= prev {
			t.Errorf("rate at n=%g = %g, not above %g", n, rate, prev)
		}
		prev = rate
	}
}

func TestCostErrors(t *testing.T) {
	g, _ := LookupGPU("h200")
	for _, w := range []Work{{Kind: "warp"}, {Kind: KindMatMul, DType: "int8"}, {Kind: KindCopy, Bytes: -1}, {Kind: KindCopy, FLOPs: math.NaN()}} {
		if _, err := g.Cost(w); err == nil {
			t.Errorf("Cost(%+v) = nil error", w)
		}
	}
	if _, err := g.Step([]Work{{Kind: KindCopy, Bytes: 1}, {Kind: "bogus"}}); err == nil || !strings.Contains(err.Error(), "work 1") {
		t.Errorf("Step with a bad work: error %v, want one naming work 1", err)
	}
}

// TF32 on by default makes float32 convolutions faster on Ampere+ and changes nothing on Volta.
// The A100's TF32 peak is 8x its FP32 peak; cuDNN's TF32 convolutions reach a smaller share of
// it (ConvTF32 0.31 against ConvFP32 0.64 / H200SGEMMFill on GA100's 64-lane SMs), about 3x.
func TestTF32Toggle(t *testing.T) {
	w := Work{Kind: KindConv, FLOPs: 1e12, Bytes: 1e8, DType: Float32}
	a100, _ := LookupGPU("a100-40gb")
	on, off := w, w
	on.TF32 = true
	if a100.Time(on) >= a100.Time(off)/2.5 {
		t.Errorf("a100 TF32 conv %g s not 2.5x faster than FP32 %g s", a100.Time(on), a100.Time(off))
	}
	v100, _ := LookupGPU("v100-16gb")
	if v100.Time(on) != v100.Time(off) {
		t.Errorf("v100 TF32 flag changed the time: %g vs %g", v100.Time(on), v100.Time(off))
	}
}
