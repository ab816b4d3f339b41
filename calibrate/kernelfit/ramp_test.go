package kernelfit

import (
	"bytes"
	"math"
	"testing"

	"github.com/gpusim/gpusim/hw"

	"github.com/google/go-cmp/cmp"
)

// With MatrixRampOnly an executor kernel on the vector path pays MemoryRamp alone and a
// GEMM keeps ComputeRamp; ConvRamp, when set, replaces ComputeRamp for convolutions only.
func TestMatrixRampOnly(t *testing.T) {
	g, _ := hw.LookupGPU("h200")
	g.Efficiency = OpsBaseEfficiency()
	e := g.Efficiency
	add := hw.Work{Kind: hw.KindElementwise, FLOPs: 1.5e6, Bytes: 9.4e6, DType: hw.BFloat16}
	gemm := hw.Work{Kind: hw.KindMatMul, FLOPs: 2 * 2048 * 768 * 768, Bytes: 3 * 2048 * 768 * 2, DType: hw.BFloat16}
	conv := hw.Work{Kind: hw.KindConv, FLOPs: 1e9, Bytes: 1e6, DType: hw.BFloat16}
	withConvRamp := g
	withConvRamp.Efficiency.ConvRamp = 30e-6
	tests := []struct {
		name string
		g    hw.GPU
		w    hw.Work
		want float64
	}{
		{"add", g, add, add.Bytes/g.ByteRate(add) + e.MemoryRamp + e.KernelGap},
		{"gemm", g, gemm, gemm.FLOPs/g.ComputeRate(gemm) + e.ComputeRamp + e.KernelGap},
		{"conv", g, conv, conv.FLOPs/g.ComputeRate(conv) + e.ComputeRamp + e.KernelGap},
		{"conv, ConvRamp", withConvRamp, conv, conv.FLOPs/g.ComputeRate(conv) + 30e-6 + e.KernelGap},
		{"gemm, ConvRamp", withConvRamp, gemm, gemm.FLOPs/g.ComputeRate(gemm) + e.ComputeRamp + e.KernelGap},
	}
	for _, tc := range tests {
		c, err := tc.g.Cost(tc.w)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.Exec-tc.want) > 1e-12 {
			t.Errorf("%s: exec %.4g s, want %.4g", tc.name, c.Exec, tc.want)
		}
	}
	// The 2048x768x768 BF16 GEMM measured 8.4 us per kernel on the H200 (kernels.csv, BERT-base
	// bf16 batch 16), a small element-wise kernel 1.3-6 us. The default prices the GEMM with
	// its shape (64x64 tiles fill the 132 SMs) and both stay near the measurements.
	d, _ := hw.LookupGPU("h200")
	sg := gemm
	sg.Shape = hw.Shape{M: 2048, N: 768, K: 768}
	cd, _ := d.Cost(sg)
	ck, _ := g.Cost(gemm)
	t.Logf("2048x768x768 bf16 GEMM: default %.1f us, kernel fit %.1f us; bf16 add of 9.4 MB: default %.1f us, kernel fit %.1f us",
		1e6*cd.Exec, 1e6*ck.Exec, 1e6*d.Time(add), 1e6*g.Time(add))
	if math.Abs(cd.Exec/8.4e-6-1) > 0.25 {
		t.Errorf("default prices the 2048x768x768 bf16 GEMM at %.1f us, want 8.4 us within 25%%", 1e6*cd.Exec)
	}
	if a := d.Time(add); a < 1.3e-6 || a > 6.5e-6 {
		t.Errorf("default prices a 9.4 MB bf16 add at %.1f us, want 1.3-6.5 us", 1e6*a)
	}
}

// A profile file keeps MatrixRampOnly and ConvRamp through WriteProfile and ParseProfile.
func TestKernelFitProfileRoundTrip(t *testing.T) {
	g, _ := hw.LookupGPU("h200")
	g.Efficiency = OpsBaseEfficiency()
	g.Efficiency.ConvRamp = 30e-6
	var buf bytes.Buffer
	if err := g.WriteProfile(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := hw.ParseProfile("h200-kernel-fit", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(g.Efficiency, got.Efficiency); diff != "" {
		t.Errorf("efficiency after a round trip (-want +got):\n%s", diff)
	}
}
