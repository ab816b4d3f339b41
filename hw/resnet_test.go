package hw

import (
	"math"
	"sync"
	"testing"
)

var (
	measuredOnce sync.Once
	measured     *Measured
	measuredErr  error
)

// h200Data reads testdata/h200 at the repository root once.
func h200Data(t testing.TB) *Measured {
	t.Helper()
	measuredOnce.Do(func() { measured, measuredErr = ReadTFLayout("../testdata/h200") })
	if measuredErr != nil {
		t.Fatalf("ReadMeasured: %v", measuredErr)
	}
	return measured
}

// resnet50Step returns the Works of one ResNet-50 v1.5 training step (torchvision's
// ResNet-50 is v1.5: stride 2 in the 3x3 convolutions) at batch from the op lists logged on
// the H200: "amp" uses the fp16 autocast list at batch 256 (NHWC), "tf32" and "fp32" the
// NCHW tf32 list at batch 256 (the same ops, TF32 on or off). Other batches scale every op except the optimizer
// update linearly, which holds for FLOPs and activation bytes; weight reads in conv/matmul
// are a small part at these batches.
func resnet50Step(t testing.TB, mode string, batch int) []Work {
	m := h200Data(t)
	c := Config{Model: "resnet50", Prec: "tf32", Batch: 256}
	if mode == "amp" {
		c.Prec = "fp16"
	}
	ops := m.Ops[c]
	if len(ops) == 0 {
		t.Fatalf("no op list for %v", c)
	}
	f := float64(batch) / 256
	var ws []Work
	for _, o := range ops {
		w := o.Work(c.Prec)
		w.TF32 = mode == "tf32"
		if w.Kind != KindOptimizer {
			w.FLOPs *= f
			w.Bytes *= f
		}
		ws = append(ws, w)
	}
	return ws
}

// NVIDIA Deep Learning Examples, TensorFlow2 ResNet-50 v1.5 (Classification/ConvNets),
// "Training performance" tables, one GPU, XLA: A100-40GB batch 256 TF32 909 img/s and AMP
// 2375 img/s; V100-16GB FP32 412 img/s at batch 128 and AMP 1270 img/s at batch 256.
//
// This is the cost model alone on PyTorch's op list (the aten ops logged on the H200, fused by
// FuseXLA), a proxy: the figures a user gets come from train.Run on gpusim's TF plan of
// ResNet-50, checked against the 15% target in train (TestResNet50PublishedThroughRun).
// PyTorch's list has 40% fewer bytes in its element-wise ops than TF's graph, so with XLA's
// batch norms priced as fusions (xla.go) the proxy runs 20-23% fast on A100 TF32/AMP and V100
// AMP; tol pins today's errors so a change that widens them fails.
func TestResNet50PublishedThroughput(t *testing.T) {
	tests := []struct {
		gpu, mode string
		batch     int
		want      float64 // img/s
		tol       float64
	}{
		{"a100-40gb", "tf32", 256, 909, 0.25},
		{"a100-40gb", "amp", 256, 2375, 0.25},
		{"v100-16gb", "fp32", 128, 412, 0.15},
		{"v100-16gb", "amp", 256, 1270, 0.25},
	}
	got := map[string]float64{}
	for _, tc := range tests {
		g, _ := LookupGPU(tc.gpu)
		b, err := g.Step(FuseXLA(resnet50Step(t, tc.mode, tc.batch)))
		if err != nil {
			t.Fatal(err)
		}
		ips := float64(tc.batch) / b.Total
		got[tc.gpu+tc.mode] = ips
		t.Logf("%s %s batch %d: %.0f img/s (published %.0f, %+.1f%%), step %.1f ms, launch wait %.1f ms",
			tc.gpu, tc.mode, tc.batch, ips, tc.want, 100*(ips/tc.want-1), 1e3*b.Total, 1e3*b.Launch)
		if math.Abs(ips/tc.want-1) > tc.tol {
			t.Errorf("%s %s batch %d = %.0f img/s, want %.0f within %.0f%%", tc.gpu, tc.mode, tc.batch, ips, tc.want, 100*tc.tol)
		}
	}
	// 10% is the target; the V100 ratio inherits the proxy's AMP excess (+29% today, pinned).
	for _, gpu := range []struct {
		name, base string
		want, tol  float64
	}{{"a100-40gb", "tf32", 2375.0 / 909, 0.10}, {"v100-16gb", "fp32", 1270.0 / 412, 0.35}} {
		ratio := got[gpu.name+"amp"] / got[gpu.name+gpu.base]
		t.Logf("%s AMP/%s = %.2f (published %.2f, %+.1f%%)", gpu.name, gpu.base, ratio, gpu.want, 100*(ratio/gpu.want-1))
		if math.Abs(ratio/gpu.want-1) > gpu.tol {
			t.Errorf("%s AMP/%s speedup = %.2f, want %.2f within %.0f%%", gpu.name, gpu.base, ratio, gpu.want, 100*gpu.tol)
		}
	}
}
