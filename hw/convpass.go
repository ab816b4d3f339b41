package hw

import "math"

// Convolutions on Hopper, pass by pass. cuDNN 9's Tensor Core convolution kernels on compute
// capability 9.0 are implicit GEMMs over NHWC tensors and KRSC filters (CUTLASS's "Implicit
// GEMM Convolution" document names the three GEMMs: Fprop, Dgrad, Wgrad;
// sm90_xmma_fprop_implicit_gemm_*, sm90_xmma_dgrad_implicit_gemm_*,
// sm90_xmma_wgrad_indexed_implicit_gemm_*_execute_segment_k_on, and cuBLAS GEMMs for 1x1
// windows, in testdata/h200/convbench/convbench.csv and the traces of testdata/h200/keras/
// trace). Each pass is the GEMM it is, with its own operand layout and output:
//
//	forward      y[NPQ, K]   = x[NPQ, CRS] w[K, CRS]^T  reduction over C x R x S
//	data grad    dx[NHW, C]  = dy[NHW, KRS] w[KRS, C]   reduction over K x R x S
//	filter grad  dw[K, CRS]  = dy[NPQ, K]^T x[NPQ, CRS] reduction over the N x P x Q pixels
//
// XLA's convolution algorithm picker (xla/service/gpu/autotuning/conv_algorithm_picker.cc)
// times every cuDNN engine for each of these and keeps the fastest, as PyTorch does under
// torch.backends.cudnn.benchmark, so one microbenchmark of the shapes stands for both: the
// H200's per-pass sums over InceptionV3 and ResNet-50 in convbench.csv are within 5% of the
// traced Keras steps (testdata/h200/convbench/README.md).

// Which pass of a convolution a priced kernel is.
const (
	passFwd = iota
	passDgrad
	passWgrad
)

// WgradTF32 is the rate of Hopper's TF32 filter-gradient kernels, as a fraction of the TF32
// GEMM rate (PeakTF32 x Efficiency.TF32), with 128x128 output tiles and a long reduction.
// Both of the filter gradient's operands are strided along the reduction (the pixels): TF32
// wgmma reads its operands K-major only (PTX ISA, "wgmma.mma_async", matrix layouts:
// transposed shared-memory operands are for .f16/.bf16 alone), so these kernels transpose
// every operand element on its way in, and their rate is set by how many elements a tile
// loads per multiply-add: tileIntensity, relative to 128x128's. Fitted on the H200's ResNet-50
// and VGG16 filter gradients at batch 128 (convbench.csv, tf32 wgrad rows; InceptionV3 held
// out): see TestConvPassesMatchH200.
const WgradTF32 = 0.525

// WgradSplitK0 is the fixed cost of one slice of a split filter-gradient reduction, in
// reduction steps (pixels): cuDNN's segment-k and split-K kernels cut the N x P x Q reduction
// into as many slices as fill the SMs when the K x CRS output has few tiles, and each slice
// pays its prologue, its partial tile's write and its share of the reduction kernel
// (cublasLt splitKreduce_kernel, the xmma segment-k fixup) whatever its length. Fitted with
// WgradTF32.
const WgradSplitK0 = 500.0

// tileIntensity is the multiply-adds per loaded operand element of an m x n output tile.
func tileIntensity(m, n int64) float64 { return float64(m*n) / float64(m+n) }

// hopperConvTiles are the output tiles of cuDNN's and cuBLAS's Hopper convolution kernels
// (tilesize in the kernel names of convbench.csv: 256x128, 128x192 through 64x64).
var hopperConvTiles = [...][2]int64{{256, 128}, {128, 256}, {128, 192}, {192, 128}, {128, 128}, {256, 64}, {64, 256}, {128, 64}, {64, 128}, {64, 64}}

// hopperConv reports whether w is priced pass by pass (hopperConvPasses): a Tensor Core
// convolution of known shape, not depthwise, on compute capability 9.0 or newer.
func (g *GPU) hopperConv(w Work, path string) bool {
	if g.CCMajor < 9 || w.Kind != KindConv || w.Shape.M <= 0 || w.Shape.N <= 0 || w.Shape.K <= 0 {
		return false
	}
	if w.Shape.InC == 1 && w.Shape.Batch > 1 {
		return false
	}
	switch path {
	case PathTF32, PathFP16TC, PathBF16TC:
		return true
	}
	return false
}

// hopperConvPasses returns the device time of w's kernels: the forward, or a gradient's
// filter gradient and, when w.FLOPs hold two passes, its data gradient.
func (g *GPU) hopperConvPasses(w Work, path string) float64 {
	s := w.Shape
	if !w.Grad {
		return g.convPass(w, path, passFwd)
	}
	t := g.convPass(w, path, passWgrad)
	if w.FLOPs >= 2*g.gemmFLOPs(s)*0.999 {
		t += g.convPass(w, path, passDgrad)
	}
	return t
}

// convPass prices one pass: its main loop bound by its math or by its operand reads, then its
// output write, which follows the main loop in TF32 kernels (gemmEpilogue) and overlaps it in
// 16-bit ones.
func (g *GPU) convPass(w Work, path string, pass int) float64 {
	s := w.Shape
	el := dtypeSize(dtypeOf(w))
	stream := g.MemBandwidth * g.Efficiency.Memory
	groups := max(s.Batch, 1)
	inc := s.InC
	if inc <= 0 {
		inc = s.K
	}
	taps := max(s.K/inc, 1)
	st := int64(max(s.Stride, 1))
	// Elements of each tensor: the output's pixels M; the input's M x stride^2 (its grid).
	x := float64(s.M*st*st*inc*groups) * el
	y := float64(s.M*s.N*groups) * el
	wt := float64(s.N*s.K*groups) * el
	// A filter narrower than its stride reads only the sampled pixels of x.
	xRead := x
	if int64(max(s.FilterH, 1)) < st && int64(max(s.FilterW, 1)) < st {
		xRead = x / float64(st*st)
	}
	flops := g.gemmFLOPs(s)
	rate := g.PeakTF32 * g.Efficiency.TF32
	if path != PathTF32 {
		// 16-bit cuDNN convolutions reach ConvHalf of the peak, less than cuBLAS's GEMMs.
		rate = g.PeakBF16 * g.Efficiency.ConvHalf
		if path == PathFP16TC {
			rate = g.PeakFP16 * g.Efficiency.ConvHalf
		}
	}
	rate *= g.clockScale()
	aligned := inc%alignment(path) == 0 && s.N%alignment(path) == 0
	var math, read, write float64
	switch pass {
	case passFwd:
		math = flops / (rate * g.convTileEfficiency(Shape{M: s.M, N: s.N, K: s.K, Batch: s.Batch}, path))
		read, write = xRead+wt, y
	case passDgrad:
		// The strided kernels skip dx's zeros: the math is the forward's. A filter narrower
		// than its stride leaves pixels of dx no tap reaches, which cuDNN zero-fills before
		// the kernel writes the sampled ones.
		math = flops / (rate * g.convTileEfficiency(Shape{M: s.M, N: inc, K: s.N * taps, Batch: s.Batch}, path))
		if path == PathTF32 {
			// The forward reads both operands K-major (channels innermost); the data
			// gradient reads the filter along C, its output's dimension, and TF32 pays for
			// that operand's transpose: the GEMMs' layout ratio (TF32DgradLayout, K-major
			// both against one M/N-major operand).
			math /= TF32DgradLayout
		}
		read, write = y+wt, x
		if xRead < x {
			write = x + xRead
		}
	case passWgrad:
		math = flops / (rate * g.wgradEfficiency(s.N, inc, taps, s.M*groups, path))
		read, write = xRead+y, wt
	}
	if !aligned {
		// The 3-channel first layer: cuDNN pads the channels to the alignment and runs its
		// kernels without shared-memory staging (..._indexed_wo_smem_..._aligna4); its filter
		// gradient pads x to 4 channels first and runs a CUDA-core kernel for 3x3 windows
		// (wgrad_alg0_engine_NHWC) or CUTLASS's unaligned implicit GEMM for 7x7.
		scale := ConvUnalignedScale
		switch {
		case path == PathFP16TC && pass != passDgrad && inc <= 4 && s.FilterH == 7 && s.FilterW == 7 && st == 2:
			// cuDNN's FP16 image first-layer kernels, forward and filter gradient
			// (sm90_xmma_fprop_image_first_layer_..._k64c4r7s7_stride2x2, and its wgrad):
			// ResNet's 7x7 stride-2 stem over 4-padded channels at 110 TFLOP/s (convbench_
			// call2.csv, batch 256), where BF16 pads to 8 and runs CUTLASS's generic
			// kernel at 34.
			scale = FP16FirstLayerScale
		case pass == passWgrad && path == PathTF32:
			scale = ConvUnalignedWgradScale
		}
		math = flops / (rate * unalignedRate(path) * scale)
	}
	if path == PathTF32 {
		return max(math, read/stream) + write/stream
	}
	return max(math, (read+write)/stream)
}

// ConvUnalignedScale and ConvUnalignedWgradScale are the rates of cuDNN's unaligned
// convolution kernels on Hopper (the forward, and the filter gradient) relative to cuBLAS's
// unaligned GEMMs (unalignedRate), fitted on the 3-channel first layers of ResNet-50 (7x7
// stride 2) and VGG16 (3x3) at batch 128 in TF32 (convbench.csv: forward 793 and 879 us,
// filter gradient 892 and 1453 us; InceptionV3's held out).
const (
	ConvUnalignedScale      = 0.39
	ConvUnalignedWgradScale = 0.24
)

// FP16FirstLayerScale is the rate of cuDNN's FP16 first-layer kernels relative to
// unalignedRate: 110 TFLOP/s of the 3-channel 7x7 stride-2 convolution's FLOPs, forward and
// filter gradient alike, against ConvHalf's rate (convbench_call2.csv, ResNet-50 batch 256).
const FP16FirstLayerScale = 1.07

// convTileEfficiency is shapeEfficiency over Hopper's convolution tiles.
func (g *GPU) convTileEfficiency(s Shape, path string) float64 {
	return g.tileEfficiency(s, path, hopperConvTiles[:], nil)
}

// wgradEfficiency is the fraction of the GEMM rate a filter gradient of a k x crs output
// reduced over npq pixels reaches: the best over the tiles of the tile's rate (tileIntensity
// for TF32, the GEMM tile rule for 16-bit), its fill of the padded output, and the split of
// the reduction over the SMs, each slice paying WgradSplitK0.
func (g *GPU) wgradEfficiency(k, c, taps, npq int64, path string) float64 {
	if g.SMs <= 0 || k <= 0 || c <= 0 || npq <= 0 {
		return 1
	}
	top, ref := 1.0, largestTCRate
	if path == PathTF32 {
		top, ref = WgradTF32, tileIntensity(128, 128)
	}
	sms := float64(g.SMs)
	best := 0.0
	for _, t := range hopperConvTiles {
		// Stream-K: the tiles' reduction steps are shared out evenly over the SMs, each SM
		// running its share as segments of whole or partial tiles; a segment pays
		// WgradSplitK0 (a tile split over several SMs pays it on each).
		ct := float64(ceilDiv64(k, t[0]) * taps * ceilDiv64(c, t[1]))
		work := ct * float64(npq) / sms
		segs := 1.0
		if ct > sms {
			segs = math.Ceil(ct/sms) + 1
		}
		fill := float64(k*c*taps) / (ct * float64(t[0]*t[1]))
		rel := tileRate(t[0], t[1]) / ref
		if path == PathTF32 {
			rel = tileIntensity(t[0], t[1]) / ref
		}
		eff := min(rel, 1) * fill * work / (work + segs*WgradSplitK0)
		best = max(best, eff)
	}
	return top * best
}

// skippedInput returns the bytes of x that w.Bytes counts and its kernels never read: with a
// filter narrower than its stride (ResNet-50's 1x1 stride-2 projections) the forward and the
// filter gradient gather only the sampled pixels, 1/stride^2 of x.
func (g *GPU) skippedInput(w Work) float64 {
	s := w.Shape
	st := int64(max(s.Stride, 1))
	if st <= 1 || int64(max(s.FilterH, 1)) >= st || int64(max(s.FilterW, 1)) >= st || s.InC <= 0 {
		return 0
	}
	x := float64(s.M*st*st*s.InC*max(s.Batch, 1)) * dtypeSize(dtypeOf(w))
	return x * (1 - 1/float64(st*st))
}
