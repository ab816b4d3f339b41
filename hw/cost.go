package hw

import (
	"fmt"
	"math"
	"sort"
)

// Work kinds. The training engineer maps each models.OpKind to one of these (see doc.go).
const (
	KindMatMul      = "matmul"      // GEMMs: Dense, batched matmul; priced by FLOPs
	KindConv        = "conv"        // convolutions (cuDNN), forward and both gradients; by FLOPs
	KindAttention   = "attention"   // unfused attention score/context products; by FLOPs
	KindElementwise = "elementwise" // activations, adds, dropout, bias; by bytes
	KindNorm        = "norm"        // BatchNorm, LayerNorm (forward and backward); by bytes
	KindReduction   = "reduction"   // sums, means, softmax, losses; by bytes
	KindPool        = "pool"        // max/avg pooling; by bytes
	KindEmbedding   = "embedding"   // gathers and their scatter-add gradients; by bytes
	KindCast        = "cast"        // dtype casts (mixed precision); by bytes
	KindCopy        = "copy"        // device-to-device copies, concatenations; by bytes
	KindOptimizer   = "optimizer"   // optimizer updates (ResourceApply*); by bytes
	KindH2D         = "h2d"         // host-to-device copies over PCIe; by bytes
)

// Kinds lists every kind Time accepts.
var Kinds = []string{KindMatMul, KindConv, KindAttention, KindElementwise, KindNorm,
	KindReduction, KindPool, KindEmbedding, KindCast, KindCopy, KindOptimizer, KindH2D}

// Data types of Work.DType (the compute type of the op, TF's names).
const (
	Float32  = "float32"
	Float16  = "float16"
	BFloat16 = "bfloat16"
)

// Work is one op of a training step as the cost model sees it.
type Work struct {
	// Kind is one of the Kind constants.
	Kind string
	// FLOPs counts multiply and add separately (2 per MAC). Bytes is the device memory the op
	// reads plus writes.
	FLOPs, Bytes float64
	// Kernels is the number of kernel launches (0 is taken as 1).
	Kernels int
	// DType is the compute type: Float32, Float16 or BFloat16 ("" is Float32).
	DType string
	// TF32 allows TF32 Tensor Core math for float32 matmul/conv on Ampere and newer
	// (tf.config.experimental.enable_tensor_float_32_execution, TF's default true).
	TF32 bool
	// Host is the host time to issue each of the op's kernels (framework dispatch plus the
	// launch); 0 means the GPU profile's LaunchOverhead, or GraphHostPerKernel when Graph.
	Host float64
	// Graph marks a kernel of a compiled XLA executable replayed from a CUDA graph (XLA's
	// command buffers, on by default for fusions, cuBLAS, cuDNN and custom calls: see
	// GraphHostPerKernel). The host submits the whole graph at once, so the kernel costs the
	// host GraphHostPerKernel instead of a launch; and a memory-bound kernel of the graph
	// (PathVector: an XLA loop, reduction or input fusion, one generated kernel per Work) pays
	// no ComputeRamp (see Cost).
	Graph bool
	// Grad marks the gradient of a matmul or convolution (its input and filter gradient
	// kernels).
	Grad bool
	// Shape is the GEMM shape of a matmul, attention or convolution (zero: unknown, priced by
	// FLOPs at the asymptotic efficiency).
	Shape Shape
	// ClassBytes is the part of Bytes that TF executor kernels of each class in ExecClasses
	// move (broadcasts, row and column reductions, tiles, transposes, random numbers), and
	// ClassElems the elements those kernels process (a kernel's output, a reduction's
	// input); such a class takes the longer of its bytes at its memory rate and its elements
	// at its element rate (Efficiency.ElementsPerSMCycle). The rest of Bytes streams at the
	// kind's rate.
	ClassBytes, ClassElems [NumExecClasses]float64
	// NHWC marks a convolution whose tensors are channels last, as XLA lays out every
	// convolution on Hopper and newer. False is the layout TF gives float32 convolutions,
	// NCHW, where a TF32 convolution pays cuDNN's transposes to and from NHWC
	// (convTransposedBytes); half precision convolutions are priced NHWC either way (TF and
	// XLA run them NHWC from Volta on).
	NHWC bool
	// NoAutotune is TF_CUDNN_USE_AUTOTUNE=0: a TF convolution (not Graph: XLA autotunes its
	// own) runs cuDNN's heuristic's first choice rather than the fastest algorithm timed
	// (candidatePaths).
	NoAutotune bool
	// CuDNN is the cuDNN release as major*10+minor (0: a current one). Before 7.0 cuDNN has
	// no Tensor Core math (CUDNN_TENSOR_OP_MATH came with cuDNN 7.0 for Volta), so a
	// half-precision convolution runs on the CUDA cores.
	CuDNN int
}

// Math paths: which arithmetic units run an op.
const (
	PathFP32       = "fp32"        // CUDA cores, FP32
	PathTF32       = "tf32"        // Tensor Cores, TF32 inputs, FP32 accumulate
	PathFP16TC     = "fp16-tc"     // Tensor Cores, FP16 inputs, FP32 accumulate
	PathBF16TC     = "bf16-tc"     // Tensor Cores, BF16 inputs, FP32 accumulate
	PathPseudoHalf = "pseudo-half" // half storage, FP32 math (no fast half units): conversions cost
	PathVector     = "vector"      // element-wise math on the CUDA cores in the op's dtype
)

// Path returns the math path TF takes for w on g:
//   - float32 matmul/conv/attention: TF32 Tensor Cores when w.TF32 and the GPU has them
//     (compute capability 8.0+), else FP32;
//   - float16: Tensor Cores from compute capability 7.0; before that TF computes FP16
//     convolutions and GEMMs in FP32 (TF_FP16_CONV_USE_FP32_COMPUTE defaults to true in
//     tensorflow/core/kernels/conv_ops_gpu.h; cuBLAS GemmEx with CUBLAS_COMPUTE_32F), so the op
//     runs at the FP32 rate plus in-kernel conversions: PathPseudoHalf;
//   - bfloat16: Tensor Cores from compute capability 8.0, else emulated in FP32 (PathPseudoHalf);
//   - other kinds: PathVector.
func (g GPU) Path(w Work) string { return g.path(w) }

func (g *GPU) path(w Work) string {
	switch w.Kind {
	case KindMatMul, KindConv, KindAttention:
	default:
		return PathVector
	}
	switch dtypeOf(w) {
	case Float16:
		if g.HasTensorCores() && !(w.Kind == KindConv && w.CuDNN > 0 && w.CuDNN < 70) {
			return PathFP16TC
		}
		return PathPseudoHalf
	case BFloat16:
		if g.SupportsBF16() {
			return PathBF16TC
		}
		return PathPseudoHalf
	default:
		if w.TF32 && g.SupportsTF32() {
			return PathTF32
		}
		return PathFP32
	}
}

func dtypeOf(w Work) string {
	if w.DType == "" {
		return Float32
	}
	return w.DType
}

func dtypeSize(dtype string) float64 {
	if dtype == Float16 || dtype == BFloat16 {
		return 2
	}
	return 4
}

// ComputeRate returns the FLOP/s that w reaches on g when large: the path's peak times the
// path's asymptotic efficiency for w's kind.
func (g GPU) ComputeRate(w Work) float64 { return g.computeRate(w, g.path(w)) }

// computeRate is ComputeRate with the matrix math on path p.
func (g *GPU) computeRate(w Work, p string) float64 {
	return g.computeRateAtBoost(w, p) * g.clockScale()
}

// computeRateAtBoost is computeRate at the profile's boost clock, the clock its peaks are
// quoted at (the sustained clock scales every compute rate: clock.go).
func (g *GPU) computeRateAtBoost(w Work, p string) float64 {
	e := &g.Efficiency
	switch p {
	case PathTF32:
		return g.PeakTF32 * e.matrix(w.Kind, p)
	case PathFP16TC:
		return g.PeakFP16 * e.matrix(w.Kind, p)
	case PathBF16TC:
		return g.PeakBF16 * e.matrix(w.Kind, p)
	case PathPseudoHalf:
		return g.PeakFP32 * g.fp32Fraction(e.matrix(w.Kind, PathFP32)) * e.PseudoHalf
	case PathFP32:
		return g.PeakFP32 * g.fp32Fraction(e.matrix(w.Kind, p))
	}
	// Element-wise math on the CUDA cores in the op's own dtype (Eigen's half2 intrinsics run
	// FP16 natively on compute capability 5.3+, which is what makes FP16 element-wise ops slow
	// on GP102). Batch and layer norms compute in float32 whatever their tensors' type
	// (FusedBatchNormV3's U = float; cuDNN's batch norm takes float scale, bias and
	// statistics), and a cast is a conversion instruction, not FP16 arithmetic (the CUDA C++
	// Programming Guide's throughput table lists conversions from and to 16-bit types apart
	// from 16-bit arithmetic), so both run at the FP32 rate.
	if w.Kind == KindNorm || w.Kind == KindCast {
		return g.PeakFP32 * e.Vector
	}
	return g.vectorRateAtBoost(dtypeOf(w))
}

// ByteRate returns the B/s that w's memory traffic reaches on g when large.
func (g GPU) ByteRate(w Work) float64 { return g.byteRate(w) }

func (g *GPU) byteRate(w Work) float64 {
	switch w.Kind {
	case KindH2D:
		return g.PCIeBandwidth * g.Efficiency.PCIe
	}
	if w.Graph || w.Kind == KindFusion {
		// A kernel XLA generated (a Graph Work, or a fusion): its own measured
		// efficiency, else the general streaming one.
		if v := g.Efficiency.MemoryByKind[xlaMemoryClass(w)]; v > 0 {
			return g.MemBandwidth * v
		}
		if w.Kind == KindFusion {
			return g.MemBandwidth * g.Efficiency.Memory
		}
	}
	return g.MemBandwidth * g.Efficiency.memory(w.Kind)
}

// OpCost is the priced Work.
type OpCost struct {
	Path string
	// Compute and Memory are the two roofline terms (seconds) at the size-dependent efficiency;
	// Exec is the device time of all the op's kernels: max(Compute, Memory) plus the GPU-side
	// gap between kernels. Issue is the host time to launch them.
	Compute, Memory, Exec, Issue float64
	// Bound is "compute" or "memory", whichever term is larger.
	Bound string
	// Algo is the convolution algorithm cuDNN's autotuning keeps (AlgoImplicitGEMM,
	// AlgoWinograd, AlgoDepthwise); "" for other kinds or an unknown shape.
	Algo string
}

// Cost prices one Work. It returns an error for an unknown kind or dtype or a negative size.
func (g GPU) Cost(w Work) (OpCost, error) { return g.cost(w) }

func (g *GPU) cost(w Work) (OpCost, error) {
	if !knownKind(w.Kind) {
		return OpCost{}, fmt.Errorf("unknown work kind %q (known: %v)", w.Kind, Kinds)
	}
	switch w.DType {
	case "", Float32, Float16, BFloat16:
	default:
		return OpCost{}, fmt.Errorf("unknown dtype %q for %s work", w.DType, w.Kind)
	}
	if w.FLOPs < 0 || w.Bytes < 0 || w.Kernels < 0 || w.Host < 0 || math.IsNaN(w.FLOPs) || math.IsNaN(w.Bytes) {
		return OpCost{}, fmt.Errorf("negative or NaN size in %s work (flops %g, bytes %g, kernels %d)", w.Kind, w.FLOPs, w.Bytes, w.Kernels)
	}
	g.clk = g.sustainedScale()
	c := g.costOn(w, g.path(w))
	for _, alt := range g.candidatePaths(w) {
		if g.cudaCoreFloor(w, c) >= c.Exec {
			continue // the CUDA cores cannot beat it: no need to price them
		}
		if a := g.costOn(w, alt); a.Exec < c.Exec {
			c = a
		}
	}
	return c, nil
}

// cudaCoreFloor is a lower bound of w's time on the CUDA-core paths (FP32, pseudo-half), given
// tc, its cost on the Tensor Core path: its FLOPs at the full FP32 peak (Winograd's multiply
// saving included for a convolution; every efficiency of those paths is at most 1, as
// fp32Fraction caps it, PseudoHalf taken at 1 or above), or its bytes at tc's memory time,
// which the CUDA-core kernels move at least, plus the same gaps. A Tensor Core kernel at or
// under the floor is the autotuner's pick without pricing the others.
func (g *GPU) cudaCoreFloor(w Work, tc OpCost) float64 {
	if g.PeakFP32 <= 0 || w.Shape.InC == 1 && w.Shape.Batch > 1 {
		// A depthwise convolution runs its own kernels whatever the math path.
		return math.Inf(1)
	}
	rate := g.PeakFP32 * g.clockScale() * max(1, g.Efficiency.PseudoHalf)
	if w.Kind == KindConv {
		rate *= winogradMultiplies
	}
	return max(w.FLOPs/rate, tc.Memory) + float64(max(w.Kernels, 1))*g.Efficiency.KernelGap
}

// candidatePaths are the math paths, besides the one the dtype asks for (path), among whose
// kernels the libraries pick the fastest for w. TF's convolution autotuner
// (conv_ops_gpu.cc AutotuneConvImpl, TF_CUDNN_USE_AUTOTUNE on by default) times every
// algorithm cuDNN lists for the shape, each once with Tensor Core math and once without
// (stream_executor/cuda/cuda_dnn.cc GetConvolveAlgorithms pushes every algorithm with
// tensor_ops true and false; set_use_tensor_op_math gives the descriptor CUDNN_TENSOR_OP_MATH
// or CUDNN_FMA_MATH), and keeps the fastest, so a float32 convolution with TF32 allowed may
// still run on the CUDA cores and a float16 one in PSEUDO_HALF_CONFIG (FP32 math on half
// data). XLA's conv_algorithm_picker does the same for the convolutions it compiles.
// cuBLAS's CUBLAS_TF32_TENSOR_OP_MATH and its default math for half inputs allow Tensor Cores
// without forcing them: cublasLt's heuristic ranks the TF32/HMMA and FFMA kernels for the GPU
// and the shape, priced here as the faster of the two. With Work.NoAutotune
// (TF_CUDNN_USE_AUTOTUNE=0) a TF convolution takes cuDNN's heuristic's first choice instead:
// the path the math mode asks for (path), its implicit GEMM (convAlgorithm).
func (g *GPU) candidatePaths(w Work) []string {
	switch w.Kind {
	case KindMatMul, KindAttention:
	case KindConv:
		if w.NoAutotune && !w.Graph {
			return nil
		}
	default:
		return nil
	}
	switch g.path(w) {
	case PathTF32:
		return []string{PathFP32}
	case PathFP16TC:
		return []string{PathPseudoHalf}
	}
	return nil
}

// costOn prices w with its matrix math on path p.
func (g *GPU) costOn(w Work, p string) OpCost {
	k := float64(max(w.Kernels, 1))
	e := &g.Efficiency
	c := OpCost{Path: p}
	// Size-dependent efficiency: a kernel reaches rate*F/(F+F_half) with F_half = rate*ramp,
	// i.e. time = F/rate + ramp. The ramp (fill and tail of the waves of thread blocks) is paid
	// per kernel.
	var convMemory float64
	hopper := g.hopperConv(w, c.Path)
	if w.FLOPs > 0 {
		rate := g.computeRate(w, c.Path)
		switch {
		case hopper:
			c.Algo, c.Compute = AlgoImplicitGEMM, g.hopperConvPasses(w, c.Path)
			convMemory = max(w.Bytes-g.skippedInput(w), 0) / g.byteRate(w)
		case w.Kind == KindConv && w.Shape.M > 0:
			if w.Grad && c.Path == PathTF32 {
				rate *= TF32GradRate
			}
			c.Algo, c.Compute, convMemory = g.convAlgorithm(w, c.Path, rate)
			c.Compute *= g.stridedDgradScale(w, c.Path, c.Algo)
		case (w.Kind == KindMatMul || w.Kind == KindAttention) && w.Shape.M > 0:
			c.Compute = w.FLOPs/(rate*g.shapeEfficiency(w.Shape, c.Path))*g.tf32LayoutScale(w, c.Path) +
				g.gemmEpilogue(w, c.Path)
		default:
			c.Compute = w.FLOPs / rate
		}
		// ComputeRamp is the fill and tail of a GEMM or convolution (cuBLAS, cuDNN): the waves
		// of large thread-block tiles. A kernel on the vector path is memory-bound and its fill
		// and tail are MemoryRamp's: PyTorch's single element-wise kernels measure 1.3-6 us
		// on the H200 (kernels.csv: mul_ 1.3-1.6 us per call in ResNet-50 and MobileNetV2,
		// Adam's div 1.8 us, BERT-base bf16 batch 16 bfloat16 copy 753 us / 248), not the
		// 14 us a compute ramp would add. A Graph kernel on the vector path (one XLA-generated
		// fusion) never pays it; an executor kernel pays it unless MatrixRampOnly (the ramp of
		// DefaultEfficiency charges it to executor kernels, each a TF op of its own).
		if c.Path != PathVector || !(w.Graph || e.MatrixRampOnly) {
			ramp := e.ComputeRamp
			if w.Kind == KindConv && e.ConvRamp > 0 {
				ramp = e.ConvRamp
			}
			c.Compute += k * ramp
		}
	}
	if w.Bytes > 0 {
		ramp := e.MemoryRamp
		if w.Kind == KindH2D {
			ramp = e.PCIeLatency
		}
		rest, classes := w.Bytes, 0.0
		for i, b := range w.ClassBytes {
			if b <= 0 {
				continue
			}
			rest -= b
			t := b / (g.MemBandwidth * e.memory(ExecClasses[i]))
			if r := e.ElementsPerSMCycle[ExecClasses[i]]; r > 0 && g.PeakFP32 > 0 {
				// SMs x the clock the GPU trains at.
				t = max(t, w.ClassElems[i]/(r*float64(g.SMs)*g.boostClock()*g.clockScale()))
			}
			classes += t
		}
		c.Memory = max(rest, 0)/g.byteRate(w) + classes + k*ramp
		if convMemory > 0 {
			c.Memory = convMemory + k*ramp
		}
	}
	c.Bound = "compute"
	if c.Memory > c.Compute {
		c.Bound = "memory"
	}
	c.Exec = max(c.Compute, c.Memory) + k*e.KernelGap
	if tb := g.convTransposedBytes(w, c.Path); tb > 0 && c.Algo != AlgoDepthwise {
		// NCHW TF32: cuDNN's transposes run as kernels of their own, after and before the
		// convolution's (see convTransposedBytes). Depthwise convolutions run TF's and XLA's
		// own kernels in either layout.
		c.Exec += tb / (g.MemBandwidth * e.Memory)
	}
	c.Issue = k * g.hostPerKernel(w)
	return c
}

// Time returns the device execution time of w in seconds (Cost(w).Exec). It panics on a Work
// that Cost rejects: mapping ops to valid Work is the caller's job.
func (g GPU) Time(w Work) float64 {
	c, err := g.Cost(w)
	if err != nil {
		panic("hw: " + err.Error())
	}
	return c.Exec
}

func (g *GPU) hostPerKernel(w Work) float64 {
	if w.Host > 0 {
		return w.Host
	}
	if w.Graph {
		return GraphHostPerKernel
	}
	return g.LaunchOverhead
}

func knownKind(k string) bool {
	switch k {
	case KindMatMul, KindConv, KindAttention, KindElementwise, KindNorm, KindReduction, KindPool,
		KindEmbedding, KindCast, KindCopy, KindOptimizer, KindH2D, KindFusion:
		return true
	}
	return false
}

// Stream is one CUDA stream fed by one host thread, as TF's executor feeds a GPU: the host
// issues kernels one after another (LaunchOverhead each) and runs ahead of the GPU; the GPU
// runs them in order, each starting when it was issued and the previous one finished. When
// kernels are short the GPU waits for the host (launch-bound); when long, the host waits.
type Stream struct {
	gpu       GPU
	host, dev float64
	busy      float64
	byKind    map[string]float64
	kernels   int
}

// NewStream returns an idle stream at time 0.
func (g GPU) NewStream() *Stream { return &Stream{gpu: g, byKind: map[string]float64{}} }

// Enqueue issues w and returns when its kernels start and end on the device (seconds since
// the stream's start). Errors are Cost's.
func (s *Stream) Enqueue(w Work) (start, end float64, err error) {
	c, err := s.gpu.cost(w)
	if err != nil {
		return 0, 0, err
	}
	k := max(w.Kernels, 1)
	h := s.gpu.hostPerKernel(w)
	// The first kernel can start once it is issued; the host issues the rest while it runs.
	s.host += h
	start = max(s.host, s.dev)
	s.host += float64(k-1) * h
	end = max(start+c.Exec, s.host)
	s.dev = end
	s.busy += c.Exec
	s.byKind[w.Kind] += c.Exec
	s.kernels += k
	return start, end, nil
}

// Sync makes the host wait for the device (a step boundary: Keras reads the loss).
func (s *Stream) Sync() { s.host = max(s.host, s.dev) }

// Breakdown is a step's time split by where it went. Sum(ByKind) + Launch == Total.
type Breakdown struct {
	// Total is the step time in seconds.
	Total float64
	// ByKind is the device execution time per Work kind.
	ByKind map[string]float64
	// Launch is the time the device waited for the host to issue kernels (launch-bound).
	Launch float64
	// Kernels is the number of kernels launched.
	Kernels int
}

// Breakdown returns the time so far.
func (s *Stream) Breakdown() Breakdown {
	b := Breakdown{Total: s.dev, ByKind: make(map[string]float64, len(s.byKind)), Kernels: s.kernels}
	for k, v := range s.byKind {
		b.ByKind[k] = v
	}
	b.Launch = s.dev - s.busy
	return b
}

// SortedKinds returns the kinds of b.ByKind, most time first (ties by name).
func (b Breakdown) SortedKinds() []string {
	ks := make([]string, 0, len(b.ByKind))
	for k := range b.ByKind {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if b.ByKind[ks[i]] != b.ByKind[ks[j]] {
			return b.ByKind[ks[i]] > b.ByKind[ks[j]]
		}
		return ks[i] < ks[j]
	})
	return ks
}

// Step prices one training step given as the ordered list of its Works on one GPU and returns
// the step time with its breakdown. The step starts with an idle host and device and ends
// when the last kernel finishes.
func (g GPU) Step(works []Work) (Breakdown, error) {
	s := g.NewStream()
	for i, w := range works {
		if _, _, err := s.Enqueue(w); err != nil {
			return Breakdown{}, fmt.Errorf("work %d: %w", i, err)
		}
	}
	return s.Breakdown(), nil
}
