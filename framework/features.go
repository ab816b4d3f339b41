package framework

// Feature is a behaviour that some releases have and older ones lack. A rule that depends on
// a release asks Profile.Has(feature); Gates says which releases have it.
type Feature uint8

const (
	// ResourceVariables: every variable is a resource variable (TF 2's tf.Variable). A TF 1.x
	// graph's variables are reference variables unless the script calls
	// tf.compat.v1.enable_resource_variables() (models.PlanOptions.ResourceVariables).
	ResourceVariables Feature = iota
	// JitCompile: xla compiles the train step whole (tf.function's jit_compile, Keras's
	// jit_compile=True). A TF 1.x graph gets XLA only through auto-clustering (ConfigProto's
	// global_jit_level), which is what its xla means (models.PlanOptions.XLAAutoCluster).
	JitCompile
	// MinSystemMemoryByCC: gpu_device.cc's MinSystemMemory reserves memory for the system by
	// compute capability (allocator.MinSystemMemory); TF 1.x reserves 5% of the free memory
	// (allocator.MinSystemMemoryTF1).
	MinSystemMemoryByCC
	// Keras3: Keras 3 can run on this TensorFlow (it needs TF 2.15 or later).
	Keras3
	// Keras3Default: `pip install tensorflow` brings Keras 3 as tf.keras (TF 2.16 release
	// notes), unless TF_USE_LEGACY_KERAS=1.
	Keras3Default
	// XLATritonNormalization: XLA emits a softmax or a layer norm as one kernel, the Triton
	// normalization fusion (xla/service/gpu softmax_rewriter_triton.cc), which entered XLA in
	// 2023, after TF 2.12 was cut. An older XLA fuses a reduction only as the root of its
	// fusion (the reduction emitter writes the reduced value; gpu_fusible.cc lets element-wise
	// producers into it, never the consumer that broadcasts the result back over the row), so
	// a row-wise normalization is a chain of fusions, each reading the input again
	// (hw.XLARowReductionPasses).
	XLATritonNormalization
	// XLAGEMMEpilogues: XLA may run the element-wise consumers of a GEMM inside the GEMM's
	// kernel: Triton GEMM fusions (xla/service/gpu/gemm_rewriter_triton.cc) and cuBLASLt
	// epilogues (gemm_rewriter.cc FuseVectorBiasAdd, FuseReluActivation, FuseGeluActivation),
	// which entered XLA in 2023 with XLATritonNormalization. Before them gemm_rewriter.cc folds
	// into the cuBLAS call only a scalar factor (HandleMultiply: alpha) and an addend of the
	// output's shape (HandleAdd: beta = 1; a broadcast bias is written out in full to be that
	// addend), and a custom call is no fusion's producer, so a dense layer's bias, activation
	// and casts are a loop fusion that reads the GEMM's output back and writes its own
	// (models.Op.EpilogueBytes).
	XLAGEMMEpilogues
	// XLAHopperConvNHWC: XLA lays out every convolution on Hopper and newer NHWC, float32
	// included (xla/service/gpu/transforms/layout_assignment.cc, HeuristicLayoutAssignment:
	// "we expect GPUs with Tensor Cores work best using NHWC layouts", limited to Hopper by
	// TODO(b/383560056), a change of late 2024, after TF 2.18 was cut). Without it, and below
	// Hopper still, XLA runs F32 convolutions NCHW (F16 and BF16 NHWC from Volta on), and on
	// Ampere a TF32 convolution then pays cuDNN's transposes (hw.Work.NHWC). The JAX of the
	// H200 recordings has it: its ResNet-50 float32 buffers are NHWC,
	// f32[128,56,56,64]{3,2,1,0} (testdata/h200/keras/xla, buffer-assignment).
	XLAHopperConvNHWC

	numFeatures
)

var featureNames = [numFeatures]string{"ResourceVariables", "JitCompile", "MinSystemMemoryByCC", "Keras3",
	"Keras3Default", "XLATritonNormalization", "XLAGEMMEpilogues", "XLAHopperConvNHWC"}

func (f Feature) String() string {
	if f < numFeatures {
		return featureNames[f]
	}
	return "Feature(?)"
}

// Gate is the first release that has a Feature.
type Gate struct {
	Feature Feature
	// TF is the first TensorFlow release with it (the zero Version: every release).
	TF Version
	// XLA marks a behaviour of XLA itself: under JAX, which builds its own XLA, it follows the
	// JAX release (the JAX column) instead of TF's.
	XLA bool
	// JAX is the first JAX release whose XLA has it (the zero Version: every JAX release the
	// simulator models, JAXRelease and later).
	JAX Version
}

// Gates lists, for every Feature, the releases that have it (each Feature's doc gives the
// source).
var Gates = []Gate{
	{Feature: ResourceVariables, TF: v(2, 0)},
	{Feature: JitCompile, TF: v(2, 0)},
	{Feature: MinSystemMemoryByCC, TF: v(2, 0)},
	{Feature: Keras3, TF: v(2, 15)},
	{Feature: Keras3Default, TF: v(2, 16)},
	{Feature: XLATritonNormalization, TF: v(2, 13), XLA: true},
	{Feature: XLAGEMMEpilogues, TF: v(2, 13), XLA: true},
	{Feature: XLAHopperConvNHWC, TF: v(2, 19), XLA: true},
}

// JAXRelease is the JAX every JAX run uses: 0.11.2, the release of the H200 recordings
// (testdata/h200) that the JAX constants are measured with.
var JAXRelease = v(0, 11)
