package hw

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/internal/suggest"
)

// Units used throughout this package: bytes, bytes per second, FLOP per second, seconds.
const (
	KiB = 1 << 10
	MiB = 1 << 20
	GiB = 1 << 30

	// TFLOPS and GBps turn spec-sheet numbers (decimal units) into FLOP/s and B/s.
	TFLOPS = 1e12
	GBps   = 1e9
)

// GPU is one GPU model: what the spec sheet says plus the efficiency factors of the cost model.
// Peaks are dense (no structured sparsity) and per GPU. A zero peak means the GPU has no such
// path (no TF32 before Ampere, no BF16 tensor cores before compute capability 8.0).
type GPU struct {
	// Name is the profile name used in scenarios (hardware.gpu), lower case.
	Name string `yaml:"name"`
	// Description is the marketing name and form factor, for reports.
	Description string `yaml:"description,omitempty"`
	// MemoryBytes is the memory the driver reports as total (nvidia-smi "Total").
	MemoryBytes int64 `yaml:"memory_bytes"`
	// ContextBytes is the device memory one process's CUDA context (driver, cuBLAS, cuDNN
	// kernels) takes before any tensor is allocated.
	ContextBytes int64 `yaml:"context_bytes"`
	// CCMajor and CCMinor are the CUDA compute capability.
	CCMajor int `yaml:"cc_major"`
	CCMinor int `yaml:"cc_minor"`
	// SMs is the number of streaming multiprocessors.
	SMs int `yaml:"sms"`
	// MemBandwidth is the peak device-memory bandwidth in B/s.
	MemBandwidth float64 `yaml:"mem_bandwidth"`
	// PeakFP32 is the FP32 rate of the CUDA cores (FMA counted as 2 FLOPs).
	PeakFP32 float64 `yaml:"peak_fp32"`
	// PeakTF32 is the TF32 Tensor Core rate (0: none, before compute capability 8.0).
	PeakTF32 float64 `yaml:"peak_tf32"`
	// PeakFP16 is the FP16 Tensor Core rate with FP32 accumulation, as TF's mixed precision uses
	// it; on a GPU without Tensor Cores it is the FP16 rate of the CUDA cores.
	PeakFP16 float64 `yaml:"peak_fp16"`
	// PeakBF16 is the BF16 Tensor Core rate with FP32 accumulation (0: none, before 8.0).
	PeakBF16 float64 `yaml:"peak_bf16"`
	// PeakFP16Vector and PeakBF16Vector are the non-tensor (CUDA core) half-precision rates,
	// used by element-wise math. Zero means "as PeakFP32" (the math is done in FP32).
	PeakFP16Vector float64 `yaml:"peak_fp16_vector,omitempty"`
	PeakBF16Vector float64 `yaml:"peak_bf16_vector,omitempty"`
	// L2Bytes is the L2 cache size.
	L2Bytes int64 `yaml:"l2_bytes,omitempty"`
	// NVLinkBandwidth is the GPU's total NVLink bandwidth per direction (0: no NVLink).
	NVLinkBandwidth float64 `yaml:"nvlink_bandwidth"`
	// PCIeBandwidth is the host link's bandwidth per direction (theoretical).
	PCIeBandwidth float64 `yaml:"pcie_bandwidth"`
	// PowerLimit is the board's default power limit in W (its TDP or total graphics power);
	// with the architecture's reference it sets the clock the GPU trains at (SustainedClock,
	// clock.go). 0: unknown, the boost clock.
	PowerLimit float64 `yaml:"power_limit_w,omitempty"`
	// Cooling is the board's cooling class (CoolingClasses; "" unknown), reported with the
	// power limit.
	Cooling string `yaml:"cooling,omitempty"`
	// SustainedClockHz is the SM clock (Hz) the GPU was measured to hold under a training
	// load (the median SM clock of an NVML recording while the GPU is busy, or a calibration's
	// fit of it); when set it replaces the power-limit rule's estimate (SustainedClock). It may
	// exceed BoostClock: GPU Boost runs a cool board above its rated boost. 0: the rule.
	SustainedClockHz float64 `yaml:"sustained_clock_hz,omitempty"`
	// LaunchOverhead is the host time to issue one kernel (framework op dispatch plus
	// cudaLaunchKernel); a step whose kernels are shorter than this is host-bound.
	LaunchOverhead float64 `yaml:"launch_overhead"`
	// StepOverhead is the host time of one Keras fit step outside its ops, which the GPU
	// waits for: the Python training loop, callbacks, the input iterator and the dispatch of
	// the step function (divided by steps_per_execution). A host-side cost like
	// LaunchOverhead, kept in the profile so that calibrate can fit it.
	StepOverhead float64 `yaml:"step_overhead"`
	// HostDispatchScale multiplies Keras 3 on JAX's host costs per train-step call and per
	// state array (train's JAXDispatch*, KerasJAXStep*, KerasJAXEpochPerArray, measured on the
	// H200's recording host): how much slower this host's Python and jaxlib run that code.
	// JAX's counterpart of StepOverhead, kept in the profile so that calibrate can fit it;
	// 0 = 1, the recording host.
	HostDispatchScale float64 `yaml:"host_dispatch_scale,omitempty"`
	// PredictionError is, for a profile gpusim calibrate fit wrote, the standard deviation of
	// log(measured/predicted) it expects of a step like the fitted ones (the fit's
	// observation error, widened by its parameters' share of the data); the prediction
	// intervals add it to the validation residuals' spread. 0: not a fitted profile.
	PredictionError float64 `yaml:"prediction_error,omitempty"`
	// Efficiency holds the cost model's fitted factors.
	Efficiency Efficiency `yaml:"efficiency"`

	// clk is clockScale while Cost prices a Work on its own copy of the profile (0 outside:
	// computed from the profile).
	clk float64
}

// DispatchScale is HostDispatchScale with its zero value read as 1.
func (g GPU) DispatchScale() float64 {
	if g.HostDispatchScale == 0 {
		return 1
	}
	return g.HostDispatchScale
}

// PCIeP2P reports whether the GPU reaches its peers' memory over PCIe. NVIDIA's driver
// disables PCIe peer-to-peer on GeForce boards (cudaDeviceCanAccessPeer returns 0 between two
// GeForce cards without a bridge; CUDA's simpleP2P sample reports "Peer access not supported"
// there), so NCCL falls back to its SHM transport through host memory
// (collective.Topology.SHM); an NVLink bridge still gives a pair peer access.
func (g GPU) PCIeP2P() bool { return !strings.Contains(g.Description, "GeForce") }

// CC returns the compute capability as major*10+minor (70 for V100, 90 for H100).
func (g GPU) CC() int { return g.CCMajor*10 + g.CCMinor }

// HasTensorCores reports whether the GPU has Tensor Cores (compute capability 7.0 and later).
func (g GPU) HasTensorCores() bool { return g.CC() >= 70 }

// SupportsTF32 reports whether TF32 Tensor Core math exists (Ampere, compute capability 8.0+).
func (g GPU) SupportsTF32() bool { return g.CC() >= 80 && g.PeakTF32 > 0 }

// SupportsBF16 reports whether BF16 Tensor Core math exists (compute capability 8.0+).
func (g GPU) SupportsBF16() bool { return g.CC() >= 80 && g.PeakBF16 > 0 }

// FastFP16 reports whether FP16 matrix math is faster than FP32 on this GPU. Keras warns
// ("your GPU may run slowly with dtype policy mixed_float16") below compute capability 7.0
// (keras/src/mixed_precision/device_compatibility_check.py).
func (g GPU) FastFP16() bool { return g.HasTensorCores() && g.PeakFP16 > g.PeakFP32 }

// Sources of the built-in table (all peaks dense, boost clock):
//
//	[V100]   NVIDIA Tesla V100 datasheet (SXM2) and "Volta Architecture" whitepaper, table 1
//	[A100]   NVIDIA A100 Tensor Core GPU datasheet and "Ampere GA100" whitepaper, table 1
//	[H100]   NVIDIA H100 Tensor Core GPU datasheet (SXM5) and "Hopper H100" whitepaper, table 2
//	[H200]   NVIDIA H200 Tensor Core GPU datasheet (SXM): H100 compute, 141 GB HBM3e at 4.8 TB/s
//	[T4]     NVIDIA T4 datasheet and "Turing TU102/104" whitepaper, appendix A
//	[L4]     NVIDIA L4 datasheet (sparse figures halved) and "Ada Lovelace" whitepaper, appendix
//	[A10]    NVIDIA A10 datasheet (sparse figures halved), "Ampere GA102" whitepaper
//	[GA102]  NVIDIA "Ampere GA102 GPU Architecture" whitepaper, table 9 (GeForce RTX 3090)
//	[AD102]  NVIDIA "Ada Lovelace GPU Architecture" whitepaper, table 2 (GeForce RTX 4090)
//	[GP102]  NVIDIA GeForce GTX 1080 Ti spec page and "Pascal GP102" tuning guide (FP16 at 1/64)
//	[P100]   NVIDIA Tesla P100 datasheet (SXM2) and "Pascal GP100" whitepaper, table 1
//	[SMI]    nvidia-smi "Total" memory as reported in public logs of each card; H200 measured
//	         here (docs/sources.md: NVML total 150,754,820,096 B)
//	[CTX]    context model: contextBytes below
//	[LAUNCH] fitted on the H200: see DefaultEfficiency and testdata/h200
//
// PCIe per direction: Gen3 x16 15.75 GB/s, Gen4 x16 31.5 GB/s, Gen5 x16 63 GB/s (PCI-SIG
// base specifications, 128b/130b encoding). NVLink per direction is half the datasheet's
// bidirectional total.
var builtin = []GPU{
	{
		Name: "v100-16gb", Description: "NVIDIA Tesla V100-SXM2-16GB",
		MemoryBytes: 16160 * MiB,            // [SMI]
		CCMajor:     7, CCMinor: 0, SMs: 80, // [V100]
		MemBandwidth: 900 * GBps,    // [V100] HBM2
		PeakFP32:     15.7 * TFLOPS, // [V100]
		PeakFP16:     125 * TFLOPS,  // [V100] Tensor Cores
		// PeakFP16Vector: 2x FP32 on GV100 [V100].
		PeakFP16Vector:  31.4 * TFLOPS,
		L2Bytes:         6 * MiB,      // [V100]
		NVLinkBandwidth: 150 * GBps,   // [V100] 300 GB/s total, 6 links
		PCIeBandwidth:   15.75 * GBps, // Gen3 x16
	},
	{
		Name: "v100-32gb", Description: "NVIDIA Tesla V100-SXM2-32GB",
		MemoryBytes: 32510 * MiB,            // [SMI]
		CCMajor:     7, CCMinor: 0, SMs: 80, // [V100]
		MemBandwidth: 900 * GBps, PeakFP32: 15.7 * TFLOPS, PeakFP16: 125 * TFLOPS, // [V100]
		PeakFP16Vector: 31.4 * TFLOPS, L2Bytes: 6 * MiB, // [V100]
		NVLinkBandwidth: 150 * GBps, PCIeBandwidth: 15.75 * GBps, // [V100], Gen3 x16
	},
	{
		Name: "a100-40gb", Description: "NVIDIA A100-SXM4-40GB",
		MemoryBytes: 40536 * MiB,             // [SMI]
		CCMajor:     8, CCMinor: 0, SMs: 108, // [A100]
		MemBandwidth: 1555 * GBps,   // [A100] HBM2
		PeakFP32:     19.5 * TFLOPS, // [A100]
		PeakTF32:     156 * TFLOPS,  // [A100] dense
		PeakFP16:     312 * TFLOPS,  // [A100] dense
		PeakBF16:     312 * TFLOPS,  // [A100] dense
		// [A100] whitepaper table 1: non-tensor FP16 78, BF16 39 TFLOPS.
		PeakFP16Vector: 78 * TFLOPS, PeakBF16Vector: 39 * TFLOPS,
		L2Bytes:         40 * MiB,    // [A100]
		NVLinkBandwidth: 300 * GBps,  // [A100] 600 GB/s total, 12 links
		PCIeBandwidth:   31.5 * GBps, // Gen4 x16
	},
	{
		Name: "a100-80gb", Description: "NVIDIA A100-SXM4-80GB",
		MemoryBytes: 81920 * MiB,             // [SMI]
		CCMajor:     8, CCMinor: 0, SMs: 108, // [A100]
		MemBandwidth: 2039 * GBps,                                                                           // [A100] HBM2e, 80GB SXM
		PeakFP32:     19.5 * TFLOPS, PeakTF32: 156 * TFLOPS, PeakFP16: 312 * TFLOPS, PeakBF16: 312 * TFLOPS, // [A100]
		PeakFP16Vector: 78 * TFLOPS, PeakBF16Vector: 39 * TFLOPS, L2Bytes: 40 * MiB, // [A100]
		NVLinkBandwidth: 300 * GBps, PCIeBandwidth: 31.5 * GBps, // [A100], Gen4 x16
	},
	{
		Name: "h100-80gb", Description: "NVIDIA H100 80GB HBM3 (SXM5)",
		MemoryBytes: 81559 * MiB,             // [SMI]
		CCMajor:     9, CCMinor: 0, SMs: 132, // [H100]
		MemBandwidth: 3350 * GBps,    // [H100] HBM3
		PeakFP32:     66.9 * TFLOPS,  // [H100]
		PeakTF32:     494.7 * TFLOPS, // [H100] 989.4 with sparsity
		PeakFP16:     989.4 * TFLOPS, // [H100] 1978.9 with sparsity
		PeakBF16:     989.4 * TFLOPS, // [H100]
		// [H100] whitepaper table 2: non-tensor FP16 and BF16 133.8 TFLOPS.
		PeakFP16Vector: 133.8 * TFLOPS, PeakBF16Vector: 133.8 * TFLOPS,
		L2Bytes:         50 * MiB,   // [H100]
		NVLinkBandwidth: 450 * GBps, // [H100] 900 GB/s total, 18 links
		PCIeBandwidth:   63 * GBps,  // Gen5 x16
	},
	{
		Name: "h200", Description: "NVIDIA H200 141GB HBM3e (SXM)",
		MemoryBytes: 150754820096,            // [SMI] measured: NVML total on the H200 here
		CCMajor:     9, CCMinor: 0, SMs: 132, // [H200]; 132 SMs also read by PyTorch here
		MemBandwidth: 4800 * GBps,                             // [H200]
		PeakFP32:     66.9 * TFLOPS, PeakTF32: 494.7 * TFLOPS, // [H200] = [H100]
		PeakFP16: 989.4 * TFLOPS, PeakBF16: 989.4 * TFLOPS, // [H200] = [H100]
		PeakFP16Vector: 133.8 * TFLOPS, PeakBF16Vector: 133.8 * TFLOPS, // [H100]
		L2Bytes:         60 * MiB,   // PyTorch reported 60 MB of L2 here (docs/sources.md)
		NVLinkBandwidth: 450 * GBps, // [H200] 900 GB/s total
		PCIeBandwidth:   63 * GBps,  // Gen5 x16
	},
	{
		Name: "t4", Description: "NVIDIA Tesla T4",
		MemoryBytes: 15360 * MiB,            // [SMI]
		CCMajor:     7, CCMinor: 5, SMs: 40, // [T4]
		MemBandwidth: 320 * GBps,   // [T4] GDDR6
		PeakFP32:     8.1 * TFLOPS, // [T4]
		PeakFP16:     65 * TFLOPS,  // [T4] mixed FP16/FP32 Tensor Cores
		// Turing runs FP16 on the CUDA cores at 2x FP32 [T4 whitepaper].
		PeakFP16Vector: 16.2 * TFLOPS,
		L2Bytes:        4 * MiB,      // [T4]
		PCIeBandwidth:  15.75 * GBps, // Gen3 x16
	},
	{
		Name: "l4", Description: "NVIDIA L4",
		MemoryBytes: 23034 * MiB,            // [SMI]
		CCMajor:     8, CCMinor: 9, SMs: 58, // [L4]
		MemBandwidth: 300 * GBps,    // [L4] GDDR6
		PeakFP32:     30.3 * TFLOPS, // [L4]
		PeakTF32:     60 * TFLOPS,   // [L4] 120 with sparsity
		PeakFP16:     121 * TFLOPS,  // [L4] 242 with sparsity
		PeakBF16:     121 * TFLOPS,  // [L4]
		// Ada runs non-tensor FP16 at the FP32 rate (Ada whitepaper appendix).
		PeakFP16Vector: 30.3 * TFLOPS,
		L2Bytes:        48 * MiB,    // [L4]
		PCIeBandwidth:  31.5 * GBps, // Gen4 x16
	},
	{
		Name: "a10", Description: "NVIDIA A10",
		MemoryBytes: 23028 * MiB,            // [SMI]
		CCMajor:     8, CCMinor: 6, SMs: 72, // [A10]
		MemBandwidth: 600 * GBps,    // [A10] GDDR6
		PeakFP32:     31.2 * TFLOPS, // [A10]
		PeakTF32:     62.5 * TFLOPS, // [A10] 125 with sparsity
		PeakFP16:     125 * TFLOPS,  // [A10] 250 with sparsity
		PeakBF16:     125 * TFLOPS,  // [A10]
		// GA102 runs non-tensor FP16 at the FP32 rate [GA102].
		PeakFP16Vector: 31.2 * TFLOPS,
		L2Bytes:        6 * MiB,     // [GA102]
		PCIeBandwidth:  31.5 * GBps, // Gen4 x16
	},
	{
		Name: "rtx3090", Description: "NVIDIA GeForce RTX 3090",
		MemoryBytes: 24576 * MiB,            // [SMI]
		CCMajor:     8, CCMinor: 6, SMs: 82, // [GA102]
		MemBandwidth:    936 * GBps,    // [GA102] GDDR6X
		PeakFP32:        35.6 * TFLOPS, // [GA102]
		PeakTF32:        35.6 * TFLOPS, // [GA102] GeForce: TF32 at the FP32 rate
		PeakFP16:        71 * TFLOPS,   // [GA102] FP16 with FP32 accumulate (142 with FP16 acc.)
		PeakBF16:        71 * TFLOPS,   // [GA102] BF16 with FP32 accumulate
		PeakFP16Vector:  35.6 * TFLOPS, // [GA102] 1:1 with FP32
		L2Bytes:         6 * MiB,       // [GA102]
		NVLinkBandwidth: 56.25 * GBps,  // [GA102] NVLink bridge, 112.5 GB/s total
		PCIeBandwidth:   31.5 * GBps,   // Gen4 x16
	},
	{
		Name: "rtx4090", Description: "NVIDIA GeForce RTX 4090",
		MemoryBytes: 24564 * MiB,             // [SMI]
		CCMajor:     8, CCMinor: 9, SMs: 128, // [AD102]
		MemBandwidth:   1008 * GBps,    // [AD102] GDDR6X
		PeakFP32:       82.6 * TFLOPS,  // [AD102]
		PeakTF32:       82.6 * TFLOPS,  // [AD102] GeForce: TF32 at the FP32 rate
		PeakFP16:       165.2 * TFLOPS, // [AD102] FP16 with FP32 accumulate
		PeakBF16:       165.2 * TFLOPS, // [AD102]
		PeakFP16Vector: 82.6 * TFLOPS,  // [AD102] 1:1 with FP32
		L2Bytes:        72 * MiB,       // [AD102]
		PCIeBandwidth:  31.5 * GBps,    // Gen4 x16 (no NVLink on Ada GeForce)
	},
	{
		Name: "gtx1080ti", Description: "NVIDIA GeForce GTX 1080 Ti (Pascal GP102)",
		MemoryBytes: 11264 * MiB,            // [SMI]
		CCMajor:     6, CCMinor: 1, SMs: 28, // [GP102]
		MemBandwidth: 484 * GBps,     // [GP102] GDDR5X
		PeakFP32:     11.34 * TFLOPS, // [GP102] 3584 cores x 1582 MHz x 2
		// GP102 has no Tensor Cores and runs FP16 arithmetic at 1/64 of FP32 [GP102].
		PeakFP16:       0.177 * TFLOPS,
		PeakFP16Vector: 0.177 * TFLOPS,
		L2Bytes:        2816 * KiB,   // [GP102]
		PCIeBandwidth:  15.75 * GBps, // Gen3 x16
	},
	{
		Name: "p100-16gb", Description: "NVIDIA Tesla P100-SXM2-16GB",
		MemoryBytes: 16280 * MiB,            // [SMI]
		CCMajor:     6, CCMinor: 0, SMs: 56, // [P100]
		MemBandwidth: 732 * GBps,    // [P100] HBM2
		PeakFP32:     10.6 * TFLOPS, // [P100]
		// GP100 runs FP16 at 2x FP32 on its CUDA cores (no Tensor Cores) [P100].
		PeakFP16:        21.2 * TFLOPS,
		PeakFP16Vector:  21.2 * TFLOPS,
		L2Bytes:         4 * MiB,      // [P100]
		NVLinkBandwidth: 80 * GBps,    // [P100] 160 GB/s total, 4 links
		PCIeBandwidth:   15.75 * GBps, // Gen3 x16
	},
}

// contextBytes models the CUDA context of one TF process: 300 MiB with CUDA's lazy module
// loading (public reports collected in docs/sources.md) plus a per-SM part chosen so that the
// H200 gets the 528 MiB measured with JAX (same XLA/TF runtime) on the H200 here
// (docs/sources.md: "CUDA context per process: measured on H200: JAX 528 MiB"); docs/sources.md
// notes that the context grows with the SM count.
func contextBytes(sms int) int64 {
	const base = 300 * MiB
	perSM := float64(528*MiB-base) / 132
	return base + int64(perSM*float64(sms))
}

func init() {
	// The catalog (catalog.go) extends the table; names and aliases are folded once.
	builtin = append(builtin, catalog...)
	buildKeys()
	for i := range builtin {
		g := &builtin[i]
		b, ok := boards[g.Name]
		if !ok {
			panic("hw: no power limit for built-in GPU " + g.Name)
		}
		g.PowerLimit, g.Cooling = b.watts, b.cooling
		g.ContextBytes = contextBytes(g.SMs)
		g.LaunchOverhead = DefaultLaunchOverhead
		g.StepOverhead = DefaultStepOverhead
		g.Efficiency = DefaultEfficiency()
	}
	buildSustainedRefs()
}

// GPUNames returns the built-in profile names, sorted.
func GPUNames() []string {
	names := make([]string, len(builtin))
	for i, g := range builtin {
		names[i] = g.Name
	}
	sort.Strings(names)
	return names
}

// aliases maps other spellings users type to profile names.
var aliases = map[string]string{
	"h100":           "h100-80gb",
	"h100-sxm-80gb":  "h100-80gb",
	"h200-141gb":     "h200",
	"v100":           "v100-16gb",
	"a100":           "a100-40gb",
	"rtx-3090":       "rtx3090",
	"rtx-4090":       "rtx4090",
	"gtx-1080-ti":    "gtx1080ti",
	"p100":           "p100-16gb",
	"a100-sxm4-40gb": "a100-40gb",
	"a100-sxm4-80gb": "a100-80gb",
}

// LookupGPU returns a built-in profile by name (case-insensitive; "h200", "a100-40gb", ...),
// or, for "@path", the profile file at path (LoadProfile).
func LookupGPU(name string) (GPU, error) {
	if path, ok := strings.CutPrefix(name, "@"); ok {
		return LoadProfile(path)
	}
	key := resolveName(name)
	for _, g := range builtin {
		if g.Name == key {
			g.Efficiency.MemoryByKind = cloneMap(g.Efficiency.MemoryByKind)
			g.Efficiency.ElementsPerSMCycle = cloneMap(g.Efficiency.ElementsPerSMCycle)
			return g, nil
		}
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (%s, or @file)", name, suggest.Hint(name, GPUNames(), "gpusim list devices"))
}
