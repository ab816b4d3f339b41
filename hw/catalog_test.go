package hw

import (
	"math"
	"testing"
)

// TestCatalogCoversIssue13 looks up every card the catalog promises, by the names people type.
func TestCatalogCoversIssue13(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"GeForce GTX 1080", "gtx1080"}, {"gtx-1080-ti", "gtx1080ti"}, {"NVIDIA TITAN X (Pascal)", "titan-x-pascal"},
		{"TITAN Xp", "titan-xp"}, {"titan v", "titan-v"}, {"TITAN RTX", "titan-rtx"},
		{"rtx 2070", "rtx2070"}, {"RTX2080", "rtx2080"}, {"rtx2080ti", "rtx2080ti"}, {"GeForce RTX 2080 Ti", "rtx2080ti"},
		{"GeForce RTX 2080 with Max-Q Design", "rtx2080-maxq"}, {"rtx2070-max-q", "rtx2070-maxq"},
		{"Quadro RTX 5000", "quadro-rtx5000"}, {"quadro_rtx_6000", "quadro-rtx6000"}, {"rtx8000", "quadro-rtx8000"},
		{"rtx3060", "rtx3060"}, {"RTX 3060 Ti", "rtx3060ti"}, {"rtx3070", "rtx3070"}, {"rtx3070ti", "rtx3070ti"},
		{"rtx3080", "rtx3080"}, {"rtx3080-12gb", "rtx3080-12gb"}, {"rtx 3080 ti", "rtx3080ti"}, {"rtx3090", "rtx3090"},
		{"RTX 3090 Ti", "rtx3090ti"}, {"NVIDIA RTX A2000", "rtx-a2000"}, {"a4000", "rtx-a4000"}, {"a4500", "rtx-a4500"},
		{"RTX A5000", "rtx-a5000"}, {"a5500", "rtx-a5500"}, {"rtx-a6000", "rtx-a6000"},
		{"A10", "a10"}, {"a16", "a16"}, {"A30", "a30"}, {"a40", "a40"}, {"L4", "l4"}, {"l40", "l40"}, {"L40S", "l40s"},
		{"rtx4070", "rtx4070"}, {"RTX 4070 Ti", "rtx4070ti"}, {"rtx4080", "rtx4080"}, {"rtx4090", "rtx4090"},
		{"RTX 5090", "rtx5090"}, {"Tesla T4", "t4"}, {"p100", "p100-16gb"}, {"Tesla P100-PCIE-16GB", "p100-pcie-16gb"},
		{"Tesla V100-PCIE-16GB", "v100-pcie-16gb"}, {"v100-pcie-32gb", "v100-pcie-32gb"}, {"Tesla V100-SXM2-16GB", "v100-16gb"},
		{"v100-sxm2-32gb", "v100-32gb"}, {"Tesla V100-SXM3-32GB", "v100-sxm3-32gb"},
		{"a100-pcie-40gb", "a100-pcie-40gb"}, {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
		{"NVIDIA A100-SXM4-40GB", "a100-40gb"}, {"a100-sxm-80gb", "a100-80gb"},
		{"NVIDIA H100 PCIe", "h100-pcie"}, {"h100-sxm", "h100-80gb"}, {"NVIDIA H100 80GB HBM3", "h100-80gb"},
		{"H100 NVL", "h100-nvl"}, {"NVIDIA H200", "h200"}, {"B200", "b200"},
	} {
		g, err := LookupGPU(tc.typed)
		if err != nil || g.Name != tc.want {
			t.Errorf("LookupGPU(%q) = %q, %v; want %q", tc.typed, g.Name, err, tc.want)
		}
	}
}

// TestCatalogEntries checks what every built-in profile must hold: a named source, a valid
// profile, peaks consistent with its architecture.
func TestCatalogEntries(t *testing.T) {
	for _, n := range GPUNames() {
		g, _ := LookupGPU(n)
		if SpecSource(n) == "" {
			t.Errorf("%s: no spec source", n)
		}
		if err := g.validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if g.HasTensorCores() && g.PeakFP16 < 1.99*g.PeakFP32 {
			t.Errorf("%s: Tensor Core FP16 %.1f T below 2x FP32 %.1f T", n, g.PeakFP16/TFLOPS, g.PeakFP32/TFLOPS)
		}
		if g.CC() >= 80 && (g.PeakTF32 < g.PeakFP32*0.999 || g.PeakBF16 != g.PeakFP16) {
			t.Errorf("%s: TF32 %.1f T / BF16 %.1f T against FP32 %.1f T / FP16 %.1f T", n, g.PeakTF32/TFLOPS, g.PeakBF16/TFLOPS, g.PeakFP32/TFLOPS, g.PeakFP16/TFLOPS)
		}
		if g.CC() < 70 && g.CC() != 60 && g.PeakFP16 > g.PeakFP32/32 {
			t.Errorf("%s: consumer Pascal FP16 %.3f T, want 1/64 of FP32", n, g.PeakFP16/TFLOPS)
		}
		if g.NVLinkBandwidth >= 300e9 && g.CC() >= 80 && g.PCIeBandwidth > 0 && !contains(n, "sxm", "80gb", "40gb", "h200", "b200") {
			t.Errorf("%s: NVLink %.0f GB/s would be simulated as an NVSwitch board", n, g.NVLinkBandwidth/1e9)
		}
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
	}
	return false
}

// TestCatalogFiguresFromSheets pins a few figures straight from the sheets named in
// specSources, so an edit that breaks one shows.
func TestCatalogFiguresFromSheets(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		sms                    int
		fp32, tf32, fp16, bwGB float64
		memGiB                 float64
	}{
		{"rtx2080ti", 68, 13.4, 0, 53.8, 616, 11},
		{"titan-rtx", 72, 16.3, 0, 130.5, 672, 24},
		{"rtx-a6000", 84, 38.7, 77.4, 154.8, 768, 48},
		{"a40", 84, 37.4, 74.8, 149.7, 696, 48},
		{"l40s", 142, 91.6, 183, 362.05, 864, 48},
		{"h100-pcie", 114, 51.2, 378, 756, 2000, 79.6},
		{"a100-pcie-80gb", 108, 19.5, 156, 312, 1935, 80},
		{"v100-sxm3-32gb", 80, 15.7, 0, 125, 900, 31.7},
	} {
		g, err := LookupGPU(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{float64(g.SMs), g.PeakFP32 / TFLOPS, g.PeakTF32 / TFLOPS, g.PeakFP16 / TFLOPS, g.MemBandwidth / GBps, float64(g.MemoryBytes) / GiB}
		want := []float64{float64(tc.sms), tc.fp32, tc.tf32, tc.fp16, tc.bwGB, tc.memGiB}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 0.05 {
				t.Errorf("%s: field %d = %g, want %g", tc.name, i, got[i], want[i])
			}
		}
	}
	if a := Aliases("rtx-a6000"); len(a) != 1 || a[0] != "a6000" {
		t.Errorf("Aliases(rtx-a6000) = %q, want [a6000]", a)
	}
}
