package kernelfit

import (
	"math"
	"testing"

	"github.com/gpusim/gpusim/hw"
)

// precisionStep turns an op list into the given precision: float32 everywhere, or mixed
// (matmul/conv/element-wise in float16, optimizer in float32) with a cast of every weight
// per step as Keras' mixed_float16 does (AutoCastVariable).
func precisionStep(ws []hw.Work, mixed bool) []hw.Work {
	var out []hw.Work
	for _, w := range ws {
		w.TF32 = false
		switch {
		case w.Kind == hw.KindOptimizer || w.Kind == hw.KindCast:
			w.DType = hw.Float32
		case mixed:
			w.DType = hw.Float16
		default:
			w.DType = hw.Float32
		}
		out = append(out, w)
	}
	return out
}

// Mixed precision on a Pascal card gains only its halved memory traffic (pseudo-half: FP32
// math at the FP32 rate; Keras warns), and 2-5x on Tensor Core cards.
func TestMixedPrecisionPascalPseudoHalf(t *testing.T) {
	m := h200Data(t)
	fp32 := m.Works(Config{Model: "resnet50", Prec: "tf32", Batch: 64})
	mixed := m.Works(Config{Model: "resnet50", Prec: "fp16", Batch: 64})
	tests := []struct {
		gpu      string
		min, max float64 // speedup of mixed over float32
	}{
		{"gtx1080ti", 1, 1.5},
		{"p100-16gb", 1, 1.5},
		{"v100-16gb", 2, 6},
		{"a100-40gb", 3, 10}, // against float32 with TF32 off
	}
	for _, tc := range tests {
		g, _ := hw.LookupGPU(tc.gpu)
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
	g, _ := hw.LookupGPU("a100-80gb")
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

func BenchmarkStepResNet50(b *testing.B) {
	ws := h200Data(b).Works(Config{Model: "resnet50", Prec: "fp16", Batch: 256})
	g, _ := hw.LookupGPU("a100-40gb")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Step(ws)
	}
	b.ReportMetric(float64(b.N*len(ws))/b.Elapsed().Seconds(), "ops/s")
}
