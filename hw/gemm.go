package hw

import "math"

// Shape is the matrix-multiply shape of a matmul, attention or convolution Work, as the
// libraries run it. A GEMM is C[M,N] = A[M,K] B[K,N], Batch independent ones (a batched
// matmul, or the groups of a grouped convolution). A convolution is cuDNN's implicit GEMM
// (cudnn "IMPLICIT_GEMM"/"IMPLICIT_PRECOMP_GEMM" forward algorithms, and the same view in
// XLA's cuDNN custom calls): M = batch x output pixels, N = output channels, K = input
// channels per group x filter taps. A zero M means unknown: the Work is priced by its FLOPs
// alone, at the asymptotic efficiency.
type Shape struct {
	M, N, K int64
	// Batch is the number of independent GEMMs (0 is taken as 1).
	Batch int64
	// FilterH, FilterW and Stride describe a convolution's window (0 for a matmul); InC is its
	// input channels per group (K = InC x FilterH x FilterW).
	FilterH, FilterW, Stride int
	InC                      int64
	// Spatial is a convolution's output positions per sample (0: unknown): where it is no
	// larger than the filter, cuDNN's large depthwise filter gradients run another kernel.
	Spatial int64
}

// Tiles a GEMM kernel may use, as output tile (rows x columns) per thread block. cuBLAS and
// cuDNN pick among kernels of several tile sizes per shape (cublasLt heuristics; the kernel
// names carry them: sm80_xmma_gemm_..._128x128, ampere_sgemm_128x64, ...); a large tile reuses
// each loaded element more, a small one fills more SMs when the output is small. Tensor Core
// kernels go up to 256x128; the FP32 (SIMT) SGEMM kernels to 128x128.
var (
	tensorCoreTiles = [...][2]int64{{256, 128}, {128, 128}, {128, 64}, {64, 64}}
	simtTiles       = [...][2]int64{{128, 128}, {128, 64}, {64, 64}}
)

// tileReuse is the cost of a tile's operand traffic relative to its math: a tile of m x n
// outputs loads (m + n) elements per k step for m*n multiply-adds, so its throughput falls as
// 1 / (1 + tileReuse*(1/m + 1/n)) of the largest tile's. 16 puts a 64x64 tile at 0.79 of a
// 256x128 one, which is what the H200's BF16 GEMMs show between 8192x3072x768 (635 TFLOP/s)
// and 2048x768x768 (288 TFLOP/s per kernel in kernels.csv, where 64x64 tiles are the only ones
// that fill 132 SMs), with the ComputeRamp.
const tileReuse = 16.0

func tileRate(m, n int64) float64 { return 1 / (1 + tileReuse*(1/float64(m)+1/float64(n))) }

// largestTileRate normalizes tileRate: the efficiencies of Efficiency are those of large GEMMs,
// which run the largest tile over many full waves.
var (
	largestTCRate   = tileRate(256, 128)
	largestSIMTRate = tileRate(128, 128)
	// Each tile's rate relative to the largest of its family, computed once.
	tensorCoreRel = tileRels(tensorCoreTiles[:], largestTCRate)
	simtRel       = tileRels(simtTiles[:], largestSIMTRate)
)

func tileRels(ts [][2]int64, top float64) []float64 {
	r := make([]float64, len(ts))
	for i, t := range ts {
		r[i] = tileRate(t[0], t[1]) / top
	}
	return r
}

// alignment is how many elements the Tensor Core kernels need N and K (a convolution: the
// input and output channels) to be multiples of: 8 for FP16/BF16, 4 for TF32 (cuBLAS
// documentation, "Tensor Core Usage"; cuDNN developer guide, "Tensor Core Operations":
// channels a multiple of 8 for FP16, 4 for TF32). cuDNN pads smaller channel counts (the
// 3-channel first convolution of every ImageNet CNN) with zeros, so their math grows by
// the padding; cuBLAS runs unaligned shapes with slower kernels, modelled the same way.
func alignment(path string) int64 {
	switch path {
	case PathFP16TC, PathBF16TC:
		return 8
	case PathTF32:
		return 4
	}
	return 1
}

// unalignedRate is the fraction of the aligned rate that Tensor Core GEMMs keep when N or K
// (a convolution's channels) is not a multiple of alignment: the kernels fall back to
// element-wise operand loads. Measured on the H200 (testdata/h200/micro.csv, matmul
// 4096x50257x768, the GPT-2 vocabulary projection): FP16 118, BF16 124 TFLOP/s against 754
// and 784 aligned (4096^3): 0.16; TF32 114 against 396: 0.29. The 3-channel first convolution
// of ImageNet CNNs shows the same in cuDNN (FP16 7x7, batch 128: 289 us, 104 TFLOP/s).
func unalignedRate(path string) float64 {
	if path == PathTF32 {
		return 0.29
	}
	return 0.16
}

// shapeEfficiency returns the fraction of the asymptotic rate that a GEMM of shape s reaches
// on path: the best over the tile sizes of the tile's operand reuse times the wave
// quantization over the SMs (tiles / (waves x SMs)), allowing cuBLAS's split-K for a short,
// wide K (the output cut into too few tiles to fill the GPU: each tile's K range is split
// over several thread blocks, cublasLt's split-K and stream-K kernels), and the padding to
// the Tensor Cores' alignment. 1 for an unknown shape.
func (g *GPU) shapeEfficiency(s Shape, path string) float64 {
	if path == PathFP16TC || path == PathBF16TC || path == PathTF32 {
		return g.tileEfficiency(s, path, tensorCoreTiles[:], tensorCoreRel)
	}
	return g.tileEfficiency(s, path, simtTiles[:], simtRel)
}

// tileEfficiency is shapeEfficiency over the given tiles, rel holding each tile's rate
// relative to the largest GEMMs' (nil: tileRate's, relative to the largest Tensor Core tile).
func (g *GPU) tileEfficiency(s Shape, path string, tiles [][2]int64, rel []float64) float64 {
	if s.M <= 0 || s.N <= 0 || s.K <= 0 || g.SMs <= 0 {
		return 1
	}
	batch := max(s.Batch, 1)
	n, k := s.N, s.K
	pad := 1.0
	if a := alignment(path); a > 1 {
		inner := k
		if s.InC > 0 {
			inner = s.InC
		}
		if n%a != 0 || inner%a != 0 {
			pad = unalignedRate(path)
		}
	}
	sms := float64(g.SMs)
	best := 0.0
	for ti, t := range tiles {
		ct := float64(batch * ceilDiv64(s.M, t[0]) * ceilDiv64(n, t[1]))
		// Split K while the tiles fill less than one wave and each slice keeps at least 256
		// of K (four k-steps of 64 per block).
		split := 1.0
		for split*2*ct <= sms && float64(k)/(split*2) >= 256 {
			split *= 2
		}
		blocks := ct * split
		waves := math.Ceil(blocks / sms)
		// Useful work: the real M x N inside the padded tiles.
		fill := float64(batch*s.M*n) / (ct * float64(t[0]*t[1]))
		r := 0.0
		if rel != nil {
			r = rel[ti]
		} else {
			r = min(tileRate(t[0], t[1])/largestTCRate, 1)
		}
		eff := r * blocks / (waves * sms) * fill
		if eff > best {
			best = eff
		}
	}
	return best * pad
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// Convolution algorithms cuDNN chooses among (TF autotunes every convolution,
// TF_CUDNN_USE_AUTOTUNE on by default: conv_ops_gpu.cc AutotuneConvImpl times every algorithm
// and keeps the fastest).
const (
	AlgoImplicitGEMM = "implicit_gemm"
	AlgoWinograd     = "winograd"
	AlgoDepthwise    = "depthwise"
)

// winogradMultiplies is the multiply reduction of Winograd F(2x2, 3x3): 36 multiplies of the
// direct 3x3 convolution per 2x2 output tile become 16 (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016); ConvFP32 was read from the H200 against it.
// cuDNN's WINOGRAD_NONFUSED algorithm transforms input and output tiles through memory, in
// kernels named for 4x4 output tiles (winogradWgradData4x4, winogradWgradDelta4x4 in
// testdata/h200/nchw/kernels.csv): F(4x4, 3x3)'s 6x6 tiles at stride 4 hold 36/16 = 2.25
// times a tensor's elements, which each transform writes and the GEMM reads back. Those
// kernels took 2.48 ms in VGG16's twelve 3x3 filter gradients at batch 32 (fp32 NCHW), where
// this traffic at the streaming rate gives 1.90 ms (F(2x2)'s four times the elements: 2.92).
const (
	winogradMultiplies = 36.0 / 16.0
	winogradTraffic    = 36.0 / 16.0
)

// ConvAlgorithm returns the cuDNN algorithm that autotuning would keep for w and its compute
// and memory time (without autotuning, Work.NoAutotune, the heuristic's implicit GEMM). Winograd is a candidate for 3x3 stride-1 ungrouped convolutions on the
// FP32 path only: cuDNN's Tensor Core kernels are implicit GEMMs, and its Winograd kernels run
// on the CUDA cores (cudnnConvolutionFwdAlgo_t CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED
// supports FLOAT and PSEUDO_HALF configurations). FFT algorithms are left out: they win only
// for filters of 5x5 and larger with many channels, which the zoo's CNNs do not have outside
// their first layer (cuDNN developer guide, "Supported Algorithms": FFT needs the filter's
// spatial size under the input's and large workspaces). A grouped convolution with one
// channel per group (depthwise) is not a GEMM: see depthwise.
func (g *GPU) convAlgorithm(w Work, p string, rate float64) (algo string, compute, memory float64) {
	s := w.Shape
	if s.InC == 1 && s.Batch > 1 {
		compute, memory = g.depthwise(w)
		return AlgoDepthwise, compute, memory
	}
	algo = AlgoImplicitGEMM
	compute = w.FLOPs / (rate * g.shapeEfficiency(s, p))
	memory = w.Bytes / g.byteRate(w)
	if (!w.NoAutotune || w.Graph) && (p == PathFP32 || p == PathPseudoHalf) && s.FilterH == 3 && s.FilterW == 3 && s.Stride == 1 && max(s.Batch, 1) == 1 {
		// Winograd: the batched GEMM over the 16 transform positions has M = batch x output
		// tiles (a quarter of the output pixels), the same N and K = input channels.
		ws := Shape{M: ceilDiv64(s.M, 4), N: s.N, K: s.InC, Batch: 16}
		wc := w.FLOPs / winogradMultiplies / (rate * g.shapeEfficiency(ws, p))
		el := dtypeSize(dtypeOf(w))
		in, out := float64(s.M*s.InC)*el, float64(s.M*s.N)*el
		// The transforms are kernels of their own (winogradWgradData4x4, ...Delta4x4,
		// ...Output4x4 in testdata/h200/nchw/kernels.csv), before and after the batched
		// GEMM, so their time adds to its: the input's reads x and writes its tiles, the
		// output's reads the GEMM's tiles and writes y; only the GEMM's own reads and writes
		// of the tiles overlap its math.
		stream := g.MemBandwidth * g.Efficiency.Memory
		tiles := winogradTraffic * (in + out) / stream
		wt := (in+out)/stream + tiles
		if wm := max(memory-(in+out)/stream, 0) + tiles; max(wc, wm)+wt < max(compute, memory) {
			return AlgoWinograd, wc + wt, wm + wt
		}
	}
	return algo, compute, memory
}

// DepthwiseCompute and DepthwiseComputeHalf are the fractions of the CUDA cores' rate
// (vectorRate) that cuDNN's depthwise kernels reach (conv2d_c1_k1_nhwc for the forward and
// input gradient, the depthwise wgrad kernels for the filter gradient, as XLA calls them for a
// convolution with one channel per group). They are bound by their multiply-adds, not by
// memory: at MobileNetV2's and EfficientNetB0's stride-1 layers (3x3 and 5x5, batch 128)
// the H200 ran 2 k^2 FLOPs per output element at 6.9 TFLOP/s in float32 and 10.0 in bfloat16
// (testdata/h200/memkinds/micro.csv, dwconv_* rows of 100 us and more, ComputeRamp per kernel
// taken out: 0.21 of 33.5 and 0.15 of 66.9). Float16 is taken as bfloat16 (not measured).
const (
	DepthwiseCompute     = 0.21
	DepthwiseComputeHalf = 0.15
)

// Depthwise convolutions with filters larger than 5x5 (ConvNeXt's 7x7) are a kind of their
// own. The forward and input-gradient kernels are the same conv2d_c1_k1_nhwc family at another
// rate; the filter gradient is not: cuDNN's depthwise wgrad kernels cover the 3x3 and 5x5
// filters of memkinds/micro.csv (sm90_xmma_depthwise_convolution_wgrad in float32,
// wgrad2d_c1_k1_nhwc in bfloat16), and for a 7x7 filter in float32 the autotuner is left with
// cuDNN's generic algorithms, each an order of magnitude slower: FFT (fft2d_r2c_64x64 over
// eight streams) at 56x56, a TF32 implicit GEMM (sm80_xmma_wgrad_implicit_gemm_indexed) at 28x28
// and 14x14, at 0.0124-0.0129 of the float32 CUDA-core rate alike; half precision keeps
// wgrad2d_c1_k1_nhwc. Where the output is no larger than the filter (7x7 at 7x7, "same"
// padding) both precisions run cuDNN's grouped direct kernel (conv2d_grouped_direct_kernel)
// in 2.06 ms for 0.47 GFLOP, 0.0069 of the float32 rate. Read from the H200's 7x7 depthwise
// micro-benchmark at ConvNeXtTiny's four stage shapes, batch 128
// (testdata/h200/profiles/dw7_micro.csv, kernel_s, ComputeRamp per kernel taken out):
// forward and input gradient 0.150-0.160 of the float32 rate and 0.170-0.205 of the bfloat16
// one at the three larger shapes; filter gradient in bfloat16 0.278-0.287 of the bfloat16 rate
// at 56x56 and 28x28 (0.18 at 14x14). Float16 is taken as bfloat16.
const (
	depthwiseSmallTaps            = 25 // 5x5: the largest filter cuDNN's depthwise wgrad kernels were seen on
	DepthwiseLargeCompute         = 0.155
	DepthwiseLargeComputeHalf     = 0.175
	DepthwiseLargeWgrad           = 0.0127 // of the float32 rate: cuDNN's generic algorithms
	DepthwiseLargeWgradHalf       = 0.278
	DepthwiseGroupedDirectCompute = 0.0069 // of the float32 rate, either precision
)

// depthwiseRates are the FLOP rates of the depthwise kernels of w: the forward and input
// gradient's (fwd) and the filter gradient's (wgrad).
func (g *GPU) depthwiseRates(w Work) (fwd, wgrad float64) {
	s := w.Shape
	dt := dtypeOf(w)
	half := dt == Float16 || dt == BFloat16
	taps := int64(s.FilterH) * int64(max(s.FilterW, 1))
	if taps <= depthwiseSmallTaps {
		frac := DepthwiseCompute
		if half {
			frac = DepthwiseComputeHalf
		}
		r := g.vectorRate(dt) * frac
		return r, r
	}
	fwd = g.vectorRate(dt) * DepthwiseLargeCompute
	wgrad = g.vectorRate(Float32) * DepthwiseLargeWgrad
	if half {
		fwd = g.vectorRate(dt) * DepthwiseLargeComputeHalf
		wgrad = g.vectorRate(dt) * DepthwiseLargeWgradHalf
	}
	if s.Spatial > 0 && s.Spatial <= taps {
		wgrad = g.vectorRate(Float32) * DepthwiseGroupedDirectCompute
	}
	return fwd, wgrad
}

// depthwise returns the compute and memory time of a depthwise convolution or its gradient.
// A gradient holding two kernels' FLOPs is the input and the filter gradient, one after the
// other; one kernel's FLOPs is the filter gradient alone (a layer whose input needs none).
// At stride s > 1 the input gradient runs as a stride-1 convolution over dy dilated to the
// input's grid (cuDNN has no input dilation, so XLA pads dy with interior zeros in a pass of
// its own first): s^2 times the taps of the forward, after that pass's read of dy and write of
// an input-sized tensor, and before the filter gradient, which streams x and dy. The three
// run one after another, so their times add up: measured for MobileNetV2's 112x112x96
// stride-2 layer at batch 128 in float32 (memkinds/micro_kernels.csv: input gradient 414 us,
// filter gradient 207 us, the dilation 193 us). Not modelled: cuDNN's strided half-precision
// kernels run at about half the stride-1 rate (the bfloat16 stride-2 rows there).
func (g *GPU) depthwise(w Work) (compute, memory float64) {
	s := w.Shape
	fwd, wgrad := g.depthwiseRates(w)
	stream := g.MemBandwidth * g.Efficiency.Memory
	if !w.Grad {
		return w.FLOPs / fwd, w.Bytes / stream
	}
	// One kernel's FLOPs (2 x outputs x taps); the op holds the input gradient when its
	// FLOPs hold two of them.
	one := 2 * float64(s.M) * float64(s.K) * float64(max(s.Batch, 1))
	dx := w.FLOPs >= 2*one*0.999
	if !dx {
		return w.FLOPs / wgrad, w.Bytes / stream
	}
	if s.Stride > 1 {
		st2 := float64(s.Stride * s.Stride)
		out := float64(s.M) * float64(max(s.Batch, 1)) * dtypeSize(dtypeOf(w))
		dilate := (out + out*st2) / stream
		dgrad := one * st2 / fwd
		wg := max((w.FLOPs-one)/wgrad, max(w.Bytes-out*st2, out)/stream)
		t := dilate + dgrad + wg
		return t, t
	}
	return one/fwd + (w.FLOPs-one)/wgrad, w.Bytes / stream
}

// vectorRate is the CUDA-core rate for element-wise math in dtype, at the clock the GPU trains
// at.
func (g *GPU) vectorRate(dtype string) float64 { return g.vectorRateAtBoost(dtype) * g.clockScale() }

// vectorRateAtBoost is vectorRate at the boost clock of the profile's peaks.
func (g *GPU) vectorRateAtBoost(dtype string) float64 {
	peak := g.PeakFP32
	switch dtype {
	case Float16:
		if g.PeakFP16Vector > 0 {
			peak = g.PeakFP16Vector
		}
	case BFloat16:
		if g.PeakBF16Vector > 0 {
			peak = g.PeakBF16Vector
		}
	}
	return peak * g.Efficiency.Vector
}

// TF32 convolutions and the layout. cuDNN's TF32 Tensor Core kernels read and write NHWC
// (channels last). TF keeps float32 training graphs in NCHW (generic_layout_optimizer.cc,
// GetSrcAndDstDataFormats: NHWC only when most convolutions are half precision, or TF32 with
// no float32 backprop convolution, which a training step always has), and so does XLA's
// layout assignment below Hopper (layout_assignment.cc, HeuristicLayoutAssignment: NHWC for
// F16/BF16 on Volta and newer, NCHW for F32; TF 1.15's gpu_layout_assignment.cc the same). On
// an NCHW TF32 convolution cuDNN transposes its operands to NHWC and its result back, in
// kernels of their own (nchwToNhwcKernel, nhwcToNchwKernel), which add to the convolution's
// time: each reads and writes its tensor once. The forward transposes x and y; the gradient's
// data-gradient kernel dy and dx, its filter-gradient kernel x and dy. A 1x1 stride-1
// convolution in NCHW is a GEMM over the channels that cuBLAS runs in place (sm90_xmma_gemm
// kernels in the NCHW profile), so only its filter gradient transposes (x and dy).
// Measured on the H200 (PyTorch, cuDNN 9.19, TF32, NCHW runs in testdata/h200/nchw against
// NHWC runs in testdata/h200; convolution forward plus backward per step): ResNet-50 48.8 ms
// against 33.5 at batch 256 and 14.3 against 10.0 at 64; VGG16 61.8 against 45.1 at 128 and
// 16.2 against 11.9 at 32, where these rules predict 16.7, 4.2, 16.5 and 4.1 ms of transposes
// (train's TestNCHWTransposesMatchH200).
//
// convTransposedBytes returns the bytes the NCHW transposes of w move (0 for NHWC, for paths
// other than TF32, and for an unknown shape).
func (g *GPU) convTransposedBytes(w Work, path string) float64 {
	s := w.Shape
	if w.Kind != KindConv || path != PathTF32 || w.NHWC || s.M <= 0 {
		return 0
	}
	st := int64(max(s.Stride, 1))
	groups := max(s.Batch, 1)
	el := dtypeSize(dtypeOf(w))
	in := float64(s.M*st*st*s.InC*groups) * el
	out := float64(s.M*s.N*groups) * el
	gemm := s.FilterH*s.FilterW <= 1 && st == 1
	switch {
	case w.Grad && gemm:
		return 2 * (in + out) // the filter gradient: x and dy
	case w.Grad:
		return 2 * 2 * (in + out) // dy and dx, then x and dy
	case gemm:
		return 0
	}
	return 2 * (in + out) // read and write x, then y
}

// TF32GradRate is the rate of cuDNN's TF32 input- and filter-gradient kernels relative to the
// forward ones: measured on the H200 in ResNet-50 at batch 256 in NHWC (testdata/h200/
// kernels.csv, tf32: convolution_backward 23.9 ms for twice the forward's FLOPs,
// cudnn_convolution 9.56 ms: 2.0 x 9.56 / 23.9; 0.81 at batch 64). In NHWC half precision the gradients run at the
// forward rate (kernels.csv, fp16 batch 256: 9.70 ms against 4.64).
const TF32GradRate = 0.80

// stridedDgradScale is the factor on a convolution gradient's compute time for its input
// gradient's zeros: cuDNN's FP32 (CUDA-core) data-gradient kernels for a convolution of stride
// s > 1 run as a stride-1 correlation over dy dilated to the input's grid, s^2 times the
// multiply-adds of the forward (as the depthwise input gradient does, see depthwise); the
// Tensor Core paths have strided data-gradient kernels that skip the zeros ("_strided"
// xmma_dgrad kernels in the H200 profiles). Measured on the H200 in FP32 NCHW (testdata/
// h200/nchw/kernels.csv, PyTorch, batch 64): ResNet-50's convolution backward 36.0 ms, where
// the shapes alone give 28.3 ms and this rule 36.8; VGG16 (no strided convolution) 28.6 ms
// against 28.4 (train's TestFP32StridedDgradMatchesH200). w.FLOPs holds the input gradient
// when they are at least twice the forward's (a first layer has none).
func (g *GPU) stridedDgradScale(w Work, path, algo string) float64 {
	s := w.Shape
	if !w.Grad || s.Stride <= 1 || algo != AlgoImplicitGEMM || (path != PathFP32 && path != PathPseudoHalf) || w.FLOPs <= 0 {
		return 1
	}
	fwd := 2 * float64(s.M) * float64(s.N) * float64(s.K) * float64(max(s.Batch, 1))
	if w.FLOPs < 2*fwd*0.999 {
		return 1
	}
	st2 := float64(s.Stride * s.Stride)
	return (w.FLOPs + fwd*(st2-1)) / w.FLOPs
}

// Epilogue: after its main loop each thread block of a GEMM writes its output tile to device
// memory, and in the kernels cuBLAS runs for FP32 (the CUDA-core sm80_xmma_*_ffma and
// cutlass_80_simt_sgemm kernels) and TF32 (sm90_xmma_*_tf32f32 and cutlass_80_tensorop_s1688)
// that write does not overlap the math: the blocks of one wave reach it together and the next
// wave starts after it. So a GEMM costs its math plus its output bytes at the streaming
// bandwidth, K0 = 2 x rate / bandwidth extra k-steps per output element (fp32 output): 24 on
// the H200 in FP32, 190 in TF32, about 40 on a V100 in FP32. Measured on the H200
// (testdata/h200/bertgemm/layout/ksweep.csv: 4096 x 4096 x K for K from 64 to 4096, and
// BERT-Large's attention scores, 160 x 384 x 384 x K; bertgemm/kernels.csv, BERT-Large's
// GEMMs): TestGEMMEpilogueMatchesH200. The efficiencies of DefaultEfficiency were measured at
// K of 4096 and 8192, where the write is 0.6-4% of the time. Half-precision Tensor Core GEMMs
// are left without it: the H200's BF16 kernels (nvjet_sm90_tst_*_coop, warp-specialized, the
// epilogue's stores issued while other warps run the next tile's math) showed 0.4-0.6 of the
// write at 4096 x 4096 and all of it in the batched attention shape, which ComputeRamp and
// the shape rules already price within their spread; the kernels of earlier GPUs were not
// measured.

// gemmEpilogue returns the time w's kernels spend writing their outputs after their main
// loops on the FP32, pseudo-half and TF32 paths: the forward's M x N, a gradient's M x K input
// gradient and K x N weight gradient (only the latter when w.FLOPs hold one kernel: a first
// layer's gradient).
func (g *GPU) gemmEpilogue(w Work, path string) float64 {
	s := w.Shape
	if s.M <= 0 || s.N <= 0 || s.K <= 0 {
		return 0
	}
	el := 4.0
	switch path {
	case PathFP32, PathTF32:
	case PathPseudoHalf:
		el = 2
	default:
		return 0
	}
	batch := float64(max(s.Batch, 1))
	out := float64(s.M*s.N) * batch
	if w.Grad {
		out = float64(s.K*s.N) * batch
		if w.FLOPs >= 2*g.gemmFLOPs(s)*0.999 {
			out += float64(s.M*s.K) * batch
		}
	}
	return out * el / (g.MemBandwidth * g.Efficiency.Memory)
}

func (g *GPU) gemmFLOPs(s Shape) float64 {
	return 2 * float64(s.M) * float64(s.N) * float64(s.K) * float64(max(s.Batch, 1))
}

// TF32 operand layout. The Tensor Cores read TF32 operands K-major only: Hopper's wgmma
// transposes its shared-memory operands for .f16 and .bf16 alone, and Ampere's ldmatrix
// loads transposed 16-bit elements only (PTX ISA, "wgmma.mma_async" matrix layouts and
// "ldmatrix"), so a TF32 GEMM whose operand is contiguous along M or N pays for a transpose
// on the way in; FP32 (CUDA cores) and 16-bit GEMMs do not. TF's matmuls have one such
// operand in the forward (X W: W is [K, N]), none in the input gradient (dY W^T) and two in
// the weight gradient (X^T dY). Efficiency.TF32 was measured with the forward's layout;
// TF32DgradLayout and TF32WgradLayout are the time of the gradient's two kernels relative
// to it, measured on the H200 (testdata/h200/bertgemm/layout/layout.csv, the three BERT-Large
// shapes 4096x4096x1024, 3840x1024x4096 and 1024x4096x3840: both operands K-major 0.87, 0.90,
// 0.77 of the forward layout's time; both M/N-major 1.28, 1.26, 1.26; the medians). BF16 and
// FP32 rows there move by under 10% with the layout, either way.
const (
	TF32DgradLayout = 0.87
	TF32WgradLayout = 1.26
)

// tf32LayoutScale is the factor on the main-loop time of a TF32 matmul gradient for its
// kernels' operand layouts (1 for other Works; attention products are left at 1).
func (g *GPU) tf32LayoutScale(w Work, path string) float64 {
	if path != PathTF32 || !w.Grad || w.Kind != KindMatMul || w.Shape.M <= 0 || w.FLOPs <= 0 {
		return 1
	}
	if w.FLOPs >= 2*g.gemmFLOPs(w.Shape)*0.999 {
		return (TF32DgradLayout + TF32WgradLayout) / 2
	}
	return TF32WgradLayout
}
