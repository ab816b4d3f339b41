package hw

import (
	"math"
	"testing"
)

// TestGraphWork checks how a kernel replayed from an XLA command buffer (Work.Graph) is
// priced against the same kernel launched by TF's executor: a memory-bound (vector path)
// kernel drops the compute ramp, a GEMM keeps it, and the host cost per kernel is
// GraphHostPerKernel instead of the launch overhead.
func TestGraphWork(t *testing.T) {
	g, err := LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	e := g.Efficiency
	add := Work{Kind: KindElementwise, FLOPs: 1.5e6, Bytes: 9.4e6, DType: BFloat16} // a BERT b16 residual add
	gemm := Work{Kind: KindMatMul, FLOPs: 2 * 2048 * 768 * 768, Bytes: 3 * 2048 * 768 * 2, DType: BFloat16}
	// A graph kernel streams at the rate of the XLA kernels (MemXLAFusion).
	mem := func(w Work) float64 { return w.Bytes/g.ByteRate(withGraph(w)) + e.MemoryRamp + e.KernelGap }
	tests := []struct {
		name               string
		w                  Work
		wantExec, wantHost float64
	}{
		{"add, executor", add, add.FLOPs/g.ComputeRate(add) + e.ComputeRamp + e.KernelGap, g.LaunchOverhead},
		{"add, graph", withGraph(add), mem(add), GraphHostPerKernel},
		{"gemm, executor", gemm, gemm.FLOPs/g.ComputeRate(gemm) + e.ComputeRamp + e.KernelGap, g.LaunchOverhead},
		{"gemm, graph", withGraph(gemm), gemm.FLOPs/g.ComputeRate(gemm) + e.ComputeRamp + e.KernelGap, GraphHostPerKernel},
	}
	for _, tc := range tests {
		c, err := g.Cost(tc.w)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(c.Exec-tc.wantExec) > 1e-12 || math.Abs(c.Issue-tc.wantHost) > 1e-15 {
			t.Errorf("%s: exec %.3g s, issue %.3g s; want %.3g, %.3g", tc.name, c.Exec, c.Issue, tc.wantExec, tc.wantHost)
		}
	}
	// A graph of 1000 tiny kernels never waits for the host; launched one by one it does.
	tiny := Work{Kind: KindElementwise, FLOPs: 1, Bytes: 8}
	var ws, gs []Work
	for range 1000 {
		ws = append(ws, tiny)
		gs = append(gs, withGraph(tiny))
	}
	b, err := g.Step(ws)
	if err != nil {
		t.Fatal(err)
	}
	bg, err := g.Step(gs)
	if err != nil {
		t.Fatal(err)
	}
	if b.Launch <= 0 {
		t.Errorf("1000 tiny executor kernels: launch wait %.3g s, want > 0", b.Launch)
	}
	if bg.Launch > GraphHostPerKernel*(1+1e-9) {
		t.Errorf("1000 tiny graph kernels: launch wait %.3g s, want at most one kernel's host time %.3g s", bg.Launch, GraphHostPerKernel)
	}
}

func withGraph(w Work) Work {
	w.Graph = true
	return w
}
