// Package hw holds gpusim's hardware: GPU and host profiles and the op cost model.
//
// # Profiles
//
// LookupGPU returns a built-in profile by the names of docs/design.md (GPUNames: v100-16gb,
// v100-32gb, a100-40gb, a100-80gb, h100-80gb, h200, t4, l4, a10, rtx3090, rtx4090, and the
// Pascal cards gtx1080ti and p100-16gb) or, for "@path", a profile file. Every built-in number
// cites its spec sheet or whitepaper in gpu.go. Profile files are YAML with the yaml tags of
// GPU as keys; `base: NAME` inherits a built-in profile so a file may change a few numbers.
// WriteProfile writes a complete file (calibrate writes calibrated profiles with it) and
// LoadProfile reads it back unchanged. Errors name file:line: key.
//
// Host profiles (LookupHost, DefaultHost) describe the CPU side: cores and RAM for tf.data,
// PCIe for host-to-device copies.
//
// # Cost model
//
// An op is a Work: a kind, FLOPs, bytes read plus written, kernel launches, compute dtype and
// whether TF32 is allowed. Cost prices it as a roofline with size-dependent efficiency:
//
//	compute = FLOPs / (peak[path] * eff[path] * kindFactor) * layout + write + kernels * ComputeRamp
//	memory  = Bytes / (MemBandwidth * eff.Memory[kind])     + kernels * MemoryRamp
//	exec    = max(compute, memory) + kernels * KernelGap
//
// For a GEMM (a shape known) kindFactor holds the tile and wave quantization (shapeEfficiency),
// write is its output at the streaming bandwidth after the main loop (FP32 and TF32 paths,
// gemmEpilogue) and layout TF32's transposes of operands contiguous along M or N
// (tf32LayoutScale). The ramp term makes efficiency grow with size (F / (F + rate*ramp)):
// small GEMMs do not fill the GPU. The path (GPU.Path) is chosen as TF chooses it: float32 matmul/conv use TF32 Tensor
// Cores on compute capability 8.0+ when Work.TF32 (TF's default), else FP32; float16 uses
// Tensor Cores from 7.0 and, before that, FP32 math on half data at PseudoHalf of the FP32
// rate (pseudo-half: on Pascal FP16 saves memory traffic, not math time);
// bfloat16 uses Tensor Cores from 8.0. Element-wise kinds run at the vector rate of their dtype
// and are nearly always memory-bound.
//
// A Stream replays a step's Works in order with the host issuing kernels (LaunchOverhead each)
// ahead of the device, so short kernels make a step launch-bound. A Work with Graph set is a
// kernel of a compiled XLA executable replayed from a CUDA graph (XLA's command buffers, on
// by default): the host pays GraphHostPerKernel for it rather than a launch, and on the
// vector path (a generated memory-bound fusion) it pays no ComputeRamp. GPU.Step returns the step
// time and a Breakdown by kind plus launch wait that sums to the total; train uses the
// same Stream so its numbers match.
//
// # Work kinds (models.OpKind -> Work.Kind)
//
//	MatMul      -> "matmul"      Dense, batched matmul (FLOPs: 2*M*N*K)
//	Conv        -> "conv"        Conv2D forward, input and filter gradients
//	Attention   -> "attention"   unfused QK^T and scores*V products
//	Elementwise -> "elementwise" activations, bias, residual adds, dropout
//	Norm        -> "norm"        BatchNorm / LayerNorm forward and backward
//	Reduction   -> "reduction"   softmax, losses, sums
//	Pool        -> "pool"        max/average pooling and their gradients
//	Embedding   -> "embedding"   gathers and scatter-add gradients
//	Cast        -> "cast"        mixed-precision casts (Bytes = read + write)
//	Copy        -> "copy"        concatenation, device copies
//	Optimizer   -> "optimizer"   ResourceApply* updates (one kernel per variable in Keras)
//	(input)     -> "h2d"         host-to-device batch copies over PCIe
//	(XLA)       -> "fusion"      a fused run of memory-bound ops (models' XLA fusions)
//
// DType is the op's compute dtype ("float32", "float16", "bfloat16"); under mixed_float16,
// matmul/conv Works are "float16" and the optimizer is "float32".
//
// Under XLA the step's ops are already fused when they arrive (models groups them, train
// lowers a batch norm's expansion to "fusion"); a Work with Graph set is an XLA kernel and is
// priced at the memory class of XLA's own code (hw/xla.go), not the framework kernels'.
//
// # Where the factors come from
//
// DefaultEfficiency is read from the H200's micro-benchmarks and per-kernel times
// (testdata/h200 at the repository root; its doc comment cites each value): the rates of large,
// well-shaped kernels of each library and op kind. The shape mechanisms (gemm.go: tile and
// wave quantization, split-K, Tensor Core alignment, Winograd, depthwise, NCHW transposes)
// turn them into the rate of each op. The factors are fractions of each GPU's own peaks and
// carry over to other GPUs, with one architectural correction: the FP32 path's efficiencies
// are measured on Hopper, whose 128 FP32 lanes per SM lose issue slots to every non-FFMA
// instruction and stall (the H200's 8192^3 SGEMM reaches H200SGEMMFill = 0.76 of peak); GPUs
// with 64 FP32 lanes per SM (GPU.FP32LanesPerSM: GP100, Volta, Turing, GA100) hold each FFMA
// for two clocks, issue the rest in between and reach up to twice the H200's fraction
// (fp32Fraction, from Nsight Compute's counters of the H200's SGEMM). A GEMM also writes its
// output after its main loop (gemmEpilogue), and TF32 operands contiguous along M or N cost a
// transpose (tf32LayoutScale): both measured on the H200 at BERT-Large's shapes.
// docs/speed.md gives the measured accuracy (gpusim validate). calibrate/kernelfit holds the
// kernel-level fitting harness (OpsBaseEfficiency is its fit, not the default).
//
// # Example
//
//	g, _ := hw.LookupGPU("a100-40gb")
//	b, err := g.Step([]hw.Work{
//		{Kind: hw.KindConv, FLOPs: 2e12, Bytes: 4e9, Kernels: 3, DType: hw.Float16},
//		{Kind: hw.KindNorm, Bytes: 2e9, Kernels: 2, DType: hw.Float16},
//	})
//	fmt.Println(b.Total, b.ByKind["conv"], b.Launch)
//
// train feeds ops one at a time through a Stream (GPU.NewStream, Stream.Enqueue) to get
// each op's start and end on the device.
package hw
