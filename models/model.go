package models

import "fmt"

// Model is a Keras model as gpusim sees it: its layers with shapes, parameters and FLOPs, and
// the graph of TF ops a training step runs. A Model is immutable once built and safe for
// concurrent use; Get and New return one shared instance per name and options, so callers
// must not modify its fields.
type Model struct {
	Name            string
	Params          int64 // all variables, as model.summary() prints "Total params"
	TrainableParams int64 // "Trainable params"
	// FLOPsPerSample is the forward FLOPs of one sample in convolutions, matmuls, attention
	// einsums and recurrent cells (multiply-add = 2 FLOPs): what published model figures
	// count. OtherFLOPsPerSample is the rest (normalization, activations, pooling, adds), which
	// the plan's ops carry too.
	FLOPsPerSample      float64
	OtherFLOPsPerSample float64
	// ActivationBytesPerSample is the float32 memory one sample's forward pass leaves alive
	// for backward (what TF's gradient functions keep: conv and matmul inputs, batch-norm
	// inputs, ReLU outputs, dropout masks, ...), the input batch included, at the end of the
	// forward pass.
	ActivationBytesPerSample float64
	HasBatchNorm             bool

	Layers       []Layer
	InputShapes  [][]int // per input, without the batch dimension
	OutputShapes [][]int

	g     *graph
	plans *planCache // Plan's results by options (memo.go)
}

// PlanOptions says how one replica runs one step.
type PlanOptions struct {
	Batch     int       // per-replica (micro-)batch, > 0
	Precision Precision // "" = float32
	XLA       bool      // jit_compile=True: element-wise chains fused into their producers
	// JAX: the step is differentiated by JAX (Keras 3 on the JAX backend), not by TF's
	// registered gradients: jax.nn.relu and relu6 differentiate from their input
	// (jax/_src/nn/functions.py, relu.defjvps: lax.select(x > 0, g, lax.full_like(g, 0))).
	JAX bool
	// BlasWorkspace is the cuBLAS workspace XLA gives each GEMM call inside the compiled step
	// (xla/service/gpu/matmul_utils.h GemmConfig: kHopperWorkspace 32 MiB on compute
	// capability 9.0 and newer, kDefaultWorkspace 4 MiB before, "based on NVIDIA
	// recommendation" of the cuBLAS API reference, cublasSetWorkspace); 0: none modelled.
	BlasWorkspace int64
	Optimizer     string // see Optimizers(); "" = sgd
	// BatchNormSpatialPersistent is TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT=1 in the
	// environment (NVIDIA's example scripts set it): grappler's remapper may then fuse a
	// half-precision NHWC batch norm with the ReLU (and residual add) after it (remapper.cc,
	// FindFusedBatchNormEx and FindFusedBatchNormGradEx). Off by default, as in TF.
	BatchNormSpatialPersistent bool
	// GraphRewriteAMP: a mixed_float16 step as TF1's automatic mixed precision graph rewrite
	// runs it (tf.train.experimental.enable_mixed_precision_graph_rewrite, or
	// TF_ENABLE_AUTO_MIXED_PRECISION=1, which NVIDIA's TF1 example scripts use) rather than a
	// Keras dtype policy: grappler's auto_mixed_precision pass picks each op's dtype from its
	// allow, infer and deny lists (see amp.go). False is the Keras policy.
	GraphRewriteAMP bool
	// XLAAutoCluster: XLA is TF's auto-clustering (TF1's global_jit_level, the only XLA of
	// TF 1.x graphs) rather than one jit_compile'd function: stateful random ops stay outside
	// the clusters (mark_for_compilation_pass.cc: allow_stateful_rng_ops only where a device's
	// autoclustering policy is kAlways, and the GPU's is kIfEnabledGlobally), so a dropout's
	// random_uniform runs as a TF kernel that writes its random tensor for the cluster to read.
	XLAAutoCluster bool
	// ResourceVariables: the variables are resource variables (TF 2's only kind; in a TF1
	// graph, tf.compat.v1.enable_resource_variables()) rather than TF1's reference variables
	// (tf.get_variable in a graph). An update written as TF ops then assigns its results
	// without copying them (OptimizerSpec.AssignBytesPerElement, WithResourceVariables).
	ResourceVariables bool
	// L2Decay: the loss adds an L2 penalty of every trainable variable but batch norm's, as
	// TF ops of the graph, and the update reads the gradients it adds (l2DecayForward and
	// l2DecayGrad in backward.go).
	L2Decay bool
	// StaticLossScale: mixed_float16 with a fixed loss scale: the loss is multiplied by it and
	// every gradient divided by it, with no finiteness check and no skipped update (NVIDIA's
	// ConvNets utils/optimizers.py FixedLossScalerOptimizer). False is Keras's dynamic
	// LossScaleOptimizer.
	StaticLossScale bool
}

// WeightBytes is the float32 size of all variables.
func (m *Model) WeightBytes() int64 { return 4 * m.Params }

// Summary prints the layers the way model.summary() does (name, class, output shape,
// parameters), then the totals.
func (m *Model) Summary() string {
	s := fmt.Sprintf("Model: %q\n", m.Name)
	for _, l := range m.Layers {
		s += fmt.Sprintf("%-40s %-22s %-22s %d\n", l.Name, "("+l.Class+")", shapeString(l.OutputShape), l.Params)
	}
	s += fmt.Sprintf("Total params: %d\nTrainable params: %d\nNon-trainable params: %d\n",
		m.Params, m.TrainableParams, m.Params-m.TrainableParams)
	return s
}

func shapeString(s []int) string {
	out := "(None"
	for _, d := range s {
		out += fmt.Sprintf(", %d", d)
	}
	return out + ")"
}

// Precisions lists the policy names Plan accepts.
func Precisions() []Precision { return []Precision{PrecisionFloat32, MixedFloat16, MixedBFloat16} }

// ParsePrecision checks a policy name ("" is float32).
func ParsePrecision(s string) (Precision, error) {
	if s == "" {
		return PrecisionFloat32, nil
	}
	for _, p := range Precisions() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown precision %q (float32, mixed_float16, mixed_bfloat16)", s)
}
