package hw

import "testing"

// algoShapes are matrix ops of the zoo's CNNs and Transformers: ResNet-50's 7x7 stem, 3x3
// and 1x1 convolutions (stride 1 and 2), a VGG16 3x3 layer, and BERT-base's GEMMs, each
// forward and gradient.
func algoShapes() []Work {
	conv := func(m, n, inc int64, f, st int) Work {
		k := inc * int64(f*f)
		return Work{Kind: KindConv, FLOPs: 2 * float64(m*n*k), Bytes: 4 * float64(m*inc*int64(st*st)+m*n+n*k),
			Shape: Shape{M: m, N: n, K: k, FilterH: f, FilterW: f, Stride: st, InC: inc}}
	}
	gemm := func(m, n, k int64) Work {
		return Work{Kind: KindMatMul, FLOPs: 2 * float64(m*n*k), Bytes: 4 * float64(m*k+k*n+m*n), Shape: Shape{M: m, N: n, K: k}}
	}
	base := []Work{
		conv(64*112*112, 64, 3, 7, 2), conv(64*56*56, 64, 64, 3, 1), conv(64*56*56, 256, 64, 1, 1),
		conv(64*28*28, 128, 128, 3, 2), conv(64*14*14, 1024, 512, 1, 2), conv(32*224*224, 64, 64, 3, 1),
		gemm(4096, 768, 768), gemm(4096, 3072, 768), gemm(4096, 768, 3072),
	}
	var out []Work
	for _, w := range base {
		g := w
		g.Grad, g.FLOPs, g.Bytes = true, 2*w.FLOPs, 2*w.Bytes
		out = append(out, w, g)
	}
	return out
}

// TestAutotuneNeverSlower: with TF32 allowed a float32 op is never slower than on the CUDA
// cores, and a float16 op (half the bytes) never slower than the same op in float32, on every
// GPU of the catalog, since the autotuner's candidates include the CUDA-core kernels
// (candidatePaths). Without autotuning (NoAutotune) a convolution takes the path its math mode
// asks for.
func TestAutotuneNeverSlower(t *testing.T) {
	for _, name := range GPUNames() {
		g, _ := LookupGPU(name)
		for _, w := range algoShapes() {
			fp32 := g.Time(w)
			tf32 := w
			tf32.TF32 = true
			if got := g.Time(tf32); got > fp32 {
				t.Errorf("%s %s %+v: %.4g s with TF32 allowed, %.4g s without", name, w.Kind, w.Shape, got, fp32)
			}
			half := w
			half.DType, half.Bytes = Float16, w.Bytes/2
			if got := g.Time(half); got > fp32 {
				t.Errorf("%s %s %+v: %.4g s in float16, %.4g s in float32", name, w.Kind, w.Shape, got, fp32)
			}
			if w.Kind == KindConv {
				tf32.NoAutotune = true
				c, _ := g.Cost(tf32)
				if c.Path != g.Path(tf32) {
					t.Errorf("%s %+v without autotuning ran %s, want the heuristic's %s", name, w.Shape, c.Path, g.Path(tf32))
				}
			}
		}
	}
}

// TestGeForceAmpereTF32Choice: on a GeForce Ampere card TF32 Tensor Cores run at the FP32
// rate (GA102 whitepaper table 9), and an NCHW TF32 convolution pays cuDNN's transposes, so
// the autotuner keeps CUDA-core kernels for some forward convolutions; on an A100 (TF32 at 8x
// FP32) it keeps TF32 for every forward convolution with aligned channels.
func TestGeForceAmpereTF32Choice(t *testing.T) {
	count := func(name string) (tf32, fp32 int) {
		g, _ := LookupGPU(name)
		for _, w := range algoShapes() {
			if w.Kind != KindConv || w.Grad || w.Shape.InC%4 != 0 {
				continue
			}
			w.TF32 = true
			c, _ := g.Cost(w)
			switch c.Path {
			case PathTF32:
				tf32++
			case PathFP32:
				fp32++
			}
		}
		return
	}
	if _, fp32 := count("rtx3080"); fp32 == 0 {
		t.Error("rtx3080: every forward convolution kept TF32, want CUDA-core kernels for some")
	}
	if tf32, fp32 := count("a100-40gb"); fp32 != 0 || tf32 == 0 {
		t.Errorf("a100-40gb: %d TF32, %d FP32 forward convolutions, want TF32 for all", tf32, fp32)
	}
}

// TestWinogradTransformsAddUp: cuDNN's non-fused Winograd runs its tile transforms as kernels
// of their own, before and after the batched GEMM, so a 3x3 convolution that takes Winograd
// costs at least the transforms' traffic at the streaming rate plus the GEMM's reduced math
// (VGG16's 3x3 layers at batch 56 on an RTX 2080 Ti).
func TestWinogradTransformsAddUp(t *testing.T) {
	g, _ := LookupGPU("rtx2080ti")
	g.clk = g.sustainedScale()
	conv := func(m, n, inc int64) Work {
		k := inc * 9
		return Work{Kind: KindConv, FLOPs: 2 * float64(m*n*k), Bytes: 4 * float64(m*inc+m*n+n*k),
			Shape: Shape{M: m, N: n, K: k, FilterH: 3, FilterW: 3, Stride: 1, InC: inc}}
	}
	winograd := 0
	for _, w := range []Work{conv(56*56*56, 256, 256), conv(56*28*28, 512, 512), conv(56*224*224, 64, 64)} {
		rate := g.computeRate(w, PathFP32)
		algo, compute, _ := g.convAlgorithm(w, PathFP32, rate)
		if algo != AlgoWinograd {
			continue
		}
		winograd++
		in, out := 4*float64(w.Shape.M*w.Shape.InC), 4*float64(w.Shape.M*w.Shape.N)
		transforms := (1 + winogradTraffic) * (in + out) / (g.MemBandwidth * g.Efficiency.Memory)
		math := w.FLOPs / winogradMultiplies / rate
		if compute < transforms+math {
			t.Errorf("%+v: Winograd %.4g s, under its transforms %.4g s plus its math %.4g s", w.Shape, compute, transforms, math)
		}
	}
	if winograd == 0 {
		t.Error("no convolution took Winograd")
	}
}
