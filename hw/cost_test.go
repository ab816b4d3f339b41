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

// precisionStep turns an op list into the given precision: float32 everywhere, or mixed
// (matmul/conv/element-wise in float16, optimizer in float32) with a cast of every weight
// per step as Keras' mixed_float16 does (AutoCastVariable).
func precisionStep(ws []Work, mixed bool) []Work {
	var out []Work
	for _, w := range ws {
		w.TF32 = false
		switch {
		case w.Kind == KindOptimizer || w.Kind == KindCast:
			w.DType = Float32
		case mixed:
			w.DType = Float16
		default:
			w.DType = Float32
		}
		out = append(out, w)
	}
	return out
}

// Mixed precision on a Pascal card without fast FP16 is slower than float32 (Keras warns; the
// seed guide says it "can be slower on old cards"), and 2-3x faster on Tensor Core cards.
func TestMixedPrecisionPascalSlower(t *testing.T) {
	m := h200Data(t)
	fp32 := m.Works(Config{Model: "resnet50", Prec: "tf32", Batch: 64})
	mixed := m.Works(Config{Model: "resnet50", Prec: "fp16", Batch: 64})
	tests := []struct {
		gpu      string
		min, max float64 // speedup of mixed over float32
	}{
		{"gtx1080ti", 0, 0.99},
		{"p100-16gb", 0, 1.2},
		{"v100-16gb", 2, 6},
		{"a100-40gb", 3, 10}, // against float32 with TF32 off
	}
	for _, tc := range tests {
		g, _ := LookupGPU(tc.gpu)
		a, err := g.Step(precisionStep(fp32, false))
		if err != nil {
			t.Fatal(err)
		}
		b, err := g.Step(precisionStep(mixed, true))
		if err != nil {
			t.Fatal(err)
		}
		speedup := a.Total / b.Total
		t.Logf("%s resnet50 b64: float32 %.1f ms, mixed_float16 %.1f ms, speedup %.2f", tc.gpu, 1e3*a.Total, 1e3*b.Total, speedup)
		if speedup < tc.min || speedup > tc.max {
			t.Errorf("%s mixed/float32 speedup = %.2f, want in [%g, %g]", tc.gpu, speedup, tc.min, tc.max)
		}
	}
}

func TestBreakdownSumsToTotal(t *testing.T) {
	g, _ := LookupGPU("a100-80gb")
	ws := h200Data(t).Works(Config{Model: "bert-base", Prec: "bf16", Batch: 16})
	b, err := g.Step(ws)
	if err != nil {
		t.Fatal(err)
	}
	sum := b.Launch
	for _, k := range b.SortedKinds() {
		sum += b.ByKind[k]
	}
	if math.Abs(sum-b.Total) > 1e-9*b.Total {
		t.Errorf("breakdown sums to %g, total %g", sum, b.Total)
	}
	if b.Kernels != len(ws) {
		t.Errorf("kernels = %d, want %d", b.Kernels, len(ws))
	}
	// A host slower than the kernels makes the step launch-bound.
	slow := g
	slow.LaunchOverhead = 1e-3
	b2, _ := slow.Step(ws)
	if b2.Launch <= b.Launch || b2.Total < float64(len(ws))*1e-3 {
		t.Errorf("1 ms per launch: total %g launch %g, want >= %g and launch-bound", b2.Total, b2.Launch, float64(len(ws))*1e-3)
	}
}

func TestFuseXLA(t *testing.T) {
	ws := []Work{
		{Kind: KindConv, FLOPs: 1e9, Bytes: 3e6},
		{Kind: KindNorm, Bytes: 3e6},
		{Kind: KindElementwise, Bytes: 3e6},
		{Kind: KindConv, FLOPs: 1e9, Bytes: 3e6},
		{Kind: KindElementwise, Bytes: 3e6},
		{Kind: KindOptimizer, Bytes: 1e6},
	}
	got := FuseXLA(ws)
	if len(got) != 5 {
		t.Fatalf("FuseXLA gave %d works, want 5: %+v", len(got), got)
	}
	if got[1].Kind != KindFusion || got[1].Bytes != 3e6+3e6-2e6 || got[1].Kernels != 1 {
		t.Errorf("fused norm+elementwise = %+v, want one fusion kernel of 4e6 bytes", got[1])
	}
	if got[3] != ws[4] {
		t.Errorf("a lone element-wise op changed: %+v", got[3])
	}
	g, _ := LookupGPU("h200")
	a, _ := g.Step(ws)
	b, _ := g.Step(got)
	if b.Total >= a.Total {
		t.Errorf("fused step %g s not faster than unfused %g s", b.Total, a.Total)
	}
}

func BenchmarkStepResNet50(b *testing.B) {
	ws := h200Data(b).Works(Config{Model: "resnet50", Prec: "fp16", Batch: 256})
	g, _ := LookupGPU("a100-40gb")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Step(ws)
	}
	b.ReportMetric(float64(b.N*len(ws))/b.Elapsed().Seconds(), "ops/s")
}
