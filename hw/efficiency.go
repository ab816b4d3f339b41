package hw

// Efficiency holds the cost model's factors: what fraction of the spec-sheet peaks real kernels
// reach, and the fixed per-kernel costs. DefaultEfficiency gives the values measured on the H200
// (testdata/h200: micro-benchmarks and per-kernel times); they are fractions of each GPU's own peaks, so
// they carry over to other GPUs as a first approximation.
type Efficiency struct {
	// FP32, TF32 and Half are the asymptotic fractions of the path's peak that large GEMMs
	// reach (Half: FP16 and BF16 Tensor Cores).
	FP32 float64 `yaml:"fp32"`
	TF32 float64 `yaml:"tf32"`
	Half float64 `yaml:"half"`
	// ConvFP32, ConvTF32 and ConvHalf are the same fractions for convolutions (cuDNN) in the
	// layout TF uses (NCHW for float32, NHWC for half). They differ from the GEMM ones: FP32
	// 3x3 convolutions use Winograd and can beat the direct-convolution FLOP rate (1.3 of peak
	// measured on the H200 in NCHW), NCHW TF32 convolutions reach far less than TF32 GEMMs.
	ConvFP32 float64 `yaml:"conv_fp32"`
	ConvTF32 float64 `yaml:"conv_tf32"`
	ConvHalf float64 `yaml:"conv_half"`
	// Attention scales the GEMM fraction for unfused attention products.
	Attention float64 `yaml:"attention"`
	// PseudoHalf is the fraction of the FP32 rate left to half-precision GEMMs and convolutions
	// on GPUs that compute them in FP32 (no fast half units): the in-kernel conversions.
	PseudoHalf float64 `yaml:"pseudo_half"`
	// Vector is the fraction of the CUDA-core peak that element-wise math reaches.
	Vector float64 `yaml:"vector"`
	// Memory is the fraction of MemBandwidth a large streaming kernel reaches; MemoryByKind
	// overrides it per kind (BatchNorm reads its input twice, gathers are irregular, ...).
	Memory       float64            `yaml:"memory"`
	MemoryByKind map[string]float64 `yaml:"memory_by_kind,omitempty"`
	// ElementsPerSMCycle is, per executor kernel class (ExecClasses), the elements one SM
	// processes per clock when the kernel's per-element work binds it before its bytes do.
	// SMs and clock count alike on Volta and Hopper for that work (four warp schedulers and
	// 64 INT32 lanes per SM on both: the Volta and Hopper whitepapers), so a rate read on the
	// H200 carries over per SM and clock, while its bytes meet each GPU's own bandwidth.
	ElementsPerSMCycle map[string]float64 `yaml:"elements_per_sm_cycle,omitempty"`
	// ComputeRamp and MemoryRamp are the per-kernel fill-and-drain time (seconds): a kernel of
	// F FLOPs reaches rate*F/(F+rate*ramp).
	ComputeRamp float64 `yaml:"compute_ramp"`
	MemoryRamp  float64 `yaml:"memory_ramp"`
	// ConvRamp, when set, replaces ComputeRamp for convolutions: cuDNN's implicit-GEMM
	// kernels (and their layout transforms) fill the GPU more slowly than cuBLAS GEMMs.
	ConvRamp float64 `yaml:"conv_ramp,omitempty"`
	// MatrixRampOnly charges ComputeRamp to matrix kernels only (GEMMs, convolutions,
	// attention products): a kernel on the vector path (element-wise, cast, reduction, norm,
	// optimizer) is memory-bound and pays MemoryRamp alone, as Graph kernels on the vector
	// path always do. Off in DefaultEfficiency (the ramp on every executor kernel); on in
	// kernelfit.OpsBaseEfficiency (calibrate/kernelfit), fitted on per-kernel times.
	MatrixRampOnly bool `yaml:"matrix_ramp_only,omitempty"`
	// KernelGap is the device idle time between two dependent kernels of one stream.
	KernelGap float64 `yaml:"kernel_gap"`
	// PCIe is the fraction of PCIeBandwidth pinned host-to-device copies reach; PCIeLatency the
	// fixed cost of one copy.
	PCIe        float64 `yaml:"pcie"`
	PCIeLatency float64 `yaml:"pcie_latency"`
}

// matrix returns the fraction of peak for a matmul-like kind on path.
func (e *Efficiency) matrix(kind, path string) float64 {
	if kind == KindConv {
		switch path {
		case PathTF32:
			return e.ConvTF32
		case PathFP16TC, PathBF16TC:
			return e.ConvHalf
		}
		return e.ConvFP32
	}
	var f float64
	switch path {
	case PathTF32:
		f = e.TF32
	case PathFP16TC, PathBF16TC:
		f = e.Half
	default:
		f = e.FP32
	}
	if kind == KindAttention {
		f *= e.Attention
	}
	return f
}

func (e *Efficiency) memory(kind string) float64 {
	if v, ok := e.MemoryByKind[kind]; ok && v > 0 {
		return v
	}
	return e.Memory
}

// DefaultLaunchOverhead is the host time per kernel launch (seconds) of TF's graph executor
// (op dispatch plus cudaLaunchKernel). Not measured (TF is not installed on the H200): it is
// placed between the device floor of 0.96 us per tiny kernel replayed from a CUDA graph and
// PyTorch eager's 11.2 us host time per op, both measured on the H200 machine
// (testdata/h200/micro.csv, kernel_gap_graph and launch_host).
const DefaultLaunchOverhead = 6e-6

// DefaultStepOverhead is the host time per training step outside the ops (GPU.StepOverhead):
// the difference between a step synchronized by itself and steps dispatched back to back,
// measured with JAX on the H200 for BERT-base (testdata/h200/jax/steps.csv: step_s minus
// pipelined_step_s, 3.5, 4.5 and 5.9 ms for bf16 b16, tf32 b16 and bf16 b64; the median).
const DefaultStepOverhead = 4.5e-3

// GraphHostPerKernel is the host time per kernel of an XLA executable run from CUDA graphs
// (Work.Graph). XLA's GPU runtime records the thunks of a compiled program into command
// buffers and replays them with one graph launch: xla/debug_options_flags.cc,
// DefaultDebugOptionsIgnoringFlags, enables xla_gpu_enable_command_buffer for FUSION,
// CUBLAS, CUBLASLT, CUSTOM_CALL and CUDNN with xla_gpu_graph_min_graph_size 5. TF's
// jit_compile=True builds its executables with these defaults
// (tensorflow/compiler/jit/device_compiler_client.cc, GetExecutableBuildOptions, sets only
// xla_detailed_logging, and xla_gpu_deterministic_ops under op determinism, in the debug
// options). The host cost of one graph launch spread over its
// kernels is below the device's own floor per graph kernel, measured at 0.96 us on the H200
// (micro.csv kernel_gap_graph, the KernelGap); charging that floor keeps the host from ever
// binding, which is what replaying a graph means.
const GraphHostPerKernel = 0.96e-6

// DefaultEfficiency returns the factors measured on the H200 (testdata/h200, PyTorch 2.11,
// cuDNN 9.19, 2026-11-29), each a property of a library's kernels for one op kind, read from
// one set of measurements. With the shape mechanisms of Cost (tile and wave quantization,
// Tensor Core alignment, the convolution algorithm, NCHW transposes) they are the rates of
// large, well-shaped kernels:
//
//   - FP32, TF32, Half: cuBLAS GEMMs of 4096^3 and 8192^3 (micro.csv): FP32 51.1, TF32 395.5,
//     BF16 784 and FP16 754 TFLOP/s of 66.9, 494.7 and 989.4 (0.76, 0.80, 0.78).
//   - ConvFP32, ConvTF32: cuDNN convolutions of ResNet-50/VGG16 layer shapes in NCHW, as TF
//     lays float32 graphs out (nchw/micro.csv; the median over the shapes of measured against
//     the implicit-GEMM or Winograd prediction at the GEMM rate: 0.63 and 0.69 of it).
//     ConvHalf: the same in NHWC FP16/BF16 (micro.csv, 0.83 of the GEMM rate).
//   - Memory: streaming element-wise kernels (add, relu, mul, copy of 67-268 M elements,
//     micro.csv): 4.2-4.4 TB/s of 4.8. The kernels XLA generates have their own entries in
//     MemoryByKind (MemXLAFusion, MemXLABatchNorm...; memkinds/micro.csv, measured with JAX on
//     the H200): a batch norm there moves its bytes at about half the streaming rate, since
//     XLA reads the activation once per column reduction. Norm: cuDNN batch norm forward and backward in
//     ResNet-50 (kernels.csv, fp16 NHWC batch 256: 5.73 + 8.08 ms; nchw/kernels.csv, tf32
//     batch 256: 10.4 + 14.3 ms) against the bytes the plan counts: 0.42 and 0.46 of 4.8 TB/s.
//   - ComputeRamp: the per-kernel fill and drain of a GEMM: the 2048x768x768 BF16 GEMM takes
//     8.4 us per kernel (kernels.csv, BERT-base), about 4 us of it its 64x64-tile compute.
//   - KernelGap: device time per tiny kernel replayed from a CUDA graph (micro.csv
//     kernel_gap_graph, 0.96 us); MemoryRamp the same floor. PCIe: pinned H2D 55 GB/s of 63.
//   - PseudoHalf: 1, FP16 tensors with FP32 math run at the FP32 rate (cuDNN's
//     PSEUDO_HALF_CONFIG and cuBLAS's CUBLAS_COMPUTE_32F compute in float; TF uses them where
//     FP16 arithmetic is slow, TF_FP16_CONV_USE_FP32_COMPUTE in conv_ops_gpu.h); what half
//     precision saves there is memory traffic. Vector: 0.5, element-wise math is memory-bound
//     everywhere but FP16 on GP102.
//
// The PyTorch-eager step times are not fitted: their per-op host time and op inventory are
// PyTorch's, not TF's (docs/speed.md); gpusim validate shows how far they are.
func DefaultEfficiency() Efficiency {
	return Efficiency{
		FP32: 0.76, TF32: 0.80, Half: 0.78,
		ConvFP32: 0.48, ConvTF32: 0.55, ConvHalf: 0.65, Attention: 1,
		PseudoHalf: 1.0,
		Vector:     0.5,
		Memory:     0.88,
		MemoryByKind: map[string]float64{
			KindNorm: 0.44,
			// Keras 3's batch norm as XLA compiles it (testdata/h200/memkinds/micro.csv,
			// JAX 0.11.2, kernel_s: the medians over 12 NHWC shapes at batch 128, its 7 and
			// 8 kernels' ramps taken out; float16 at three shapes as bfloat16). XLA's loop
			// fusions need no entry of their own (MemXLAFusion): those of 64M-268M elements
			// stream at 0.86-0.915 (median 0.895; add, the eight-op chain, casts, float32
			// and bfloat16), Memory's 0.88.
			MemXLABatchNorm:         0.425,
			MemXLABatchNormGrad:     0.47,
			MemXLABatchNormHalf:     0.324,
			MemXLABatchNormHalfGrad: 0.318,
		},
		// TF executor kernel classes (testdata/h200/bertunfused/classes, PyTorch eager float32
		// at 67M elements, 5-20x the H200's L2, at 1980 MHz: bfloat16 takes 0.80-1.05 of float32's
		// time for broadcasts, transposes, random numbers and the 384-wide row reduction, so
		// their elements bind them there): elements per SM per clock.
		ElementsPerSMCycle: map[string]float64{
			MemTFBroadcast: 1.31, // row vector 1.31, column vector 1.25, outer 1.57
			MemTFRowReduce: 3.05, // over 384 (softmax's); over 1024 3.47, partly bytes-bound
			MemTFColReduce: 2.78,
			MemTFTile:      1.58,
			MemTFTranspose: 1.22,
			MemTFRandom:    2.36,
		},
		ComputeRamp: 5e-6,
		MemoryRamp:  0.96e-6,
		KernelGap:   1e-6,
		PCIe:        0.87, PCIeLatency: 10e-6,
	}
}
