package hw_test

import (
	"math"
	"sync"
	"testing"

	"github.com/gpusim/gpusim/calibrate/kernelfit"
	"github.com/gpusim/gpusim/hw"
)

// h200Data reads testdata/h200 at the repository root once.
func h200Data(t testing.TB) *kernelfit.Measured {
	t.Helper()
	measuredOnce.Do(func() { measured, measuredErr = kernelfit.ReadTFLayout("../testdata/h200") })
	if measuredErr != nil {
		t.Fatalf("ReadTFLayout: %v", measuredErr)
	}
	return measured
}

var (
	measuredOnce sync.Once
	measured     *kernelfit.Measured
	measuredErr  error
)

// resnet50Step returns the Works of one ResNet-50 v1.5 training step (torchvision's
// ResNet-50 is v1.5: stride 2 in the 3x3 convolutions) at batch from the op lists logged on
// the H200: "amp" uses the fp16 autocast list at batch 256 (NHWC), "tf32" and "fp32" the
// NCHW tf32 list at batch 256 (the same ops, TF32 on or off). Other batches scale every op except the optimizer
// update linearly, which holds for FLOPs and activation bytes; weight reads in conv/matmul
// are a small part at these batches.
func resnet50Step(t testing.TB, mode string, batch int) []hw.Work {
	m := h200Data(t)
	c := kernelfit.Config{Model: "resnet50", Prec: "tf32", Batch: 256}
	if mode == "amp" {
		c.Prec = "fp16"
	}
	ops := m.Ops[c]
	if len(ops) == 0 {
		t.Fatalf("no op list for %v", c)
	}
	f := float64(batch) / 256
	var ws []hw.Work
	for _, o := range ops {
		w := o.Work(c.Prec)
		w.TF32 = mode == "tf32"
		if w.Kind != hw.KindOptimizer {
			w.FLOPs *= f
			w.Bytes *= f
		}
		ws = append(ws, w)
	}
	return ws
}

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
	fp32 := m.Works(kernelfit.Config{Model: "resnet50", Prec: "tf32", Batch: 64})
	mixed := m.Works(kernelfit.Config{Model: "resnet50", Prec: "fp16", Batch: 64})
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
	ws := h200Data(t).Works(kernelfit.Config{Model: "bert-base", Prec: "bf16", Batch: 16})
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
	ws := h200Data(b).Works(kernelfit.Config{Model: "resnet50", Prec: "fp16", Batch: 256})
	g, _ := hw.LookupGPU("a100-40gb")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Step(ws)
	}
	b.ReportMetric(float64(b.N*len(ws))/b.Elapsed().Seconds(), "ops/s")
}
