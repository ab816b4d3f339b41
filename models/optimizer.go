package models

import (
	"fmt"
	"sort"
	"strings"
)

// OptimizerSpec is what an optimizer costs per trainable variable.
type OptimizerSpec struct {
	Name string
	// Slots is the number of slot variables per trainable variable, each the variable's
	// shape in float32 (Keras optimizer.build / add_variable_from_reference).
	Slots int
	// FLOPsPerElement of one update; BytesPerElement read plus written (variable, gradient,
	// slots, all float32).
	FLOPsPerElement, BytesPerElement float64
	// Kernels per variable: TF's fused training ops (ResourceApplyAdam, ...) and the
	// XLA-compiled update_step of Keras 3 optimizers (jit_compile=True on GPU) are one launch;
	// LAMB adds two norm reductions.
	Kernels int
	// OutsideXLA: the update runs as TF ops of its own even under XLA (not compiled into the
	// train step's clusters, so not fused and not replayed from CUDA graphs).
	OutsideXLA bool
	// AssignBytesPerElement and AssignKernels are the part of BytesPerElement and Kernels that
	// an update written as TF ops spends assigning its results to TF1 reference variables:
	// Assign copies the new value into the variable's initialized buffer (read it, write it:
	// 8 bytes per element and one kernel per assign; tensorflow/core/kernels/assign_op.h,
	// AssignOp::Compute, "1. Try to copy into an existing buffer"). A resource variable's
	// AssignVariableOp adopts the value's buffer when it is the value's last user
	// (resource_variable_ops.cc, AssignVariableOp::Compute: forward_input, "Copying is
	// unnecessary if we are the last user of the value tensor"), and an assign XLA compiles
	// makes the cluster's output buffer the variable's (xla_launch_util.cc, PopulateOutputs):
	// no copy either way (ResourceVariables).
	AssignBytesPerElement float64
	AssignKernels         int
	// MicroStepBytesPerElement and MicroStepKernels are what the optimizer's own code does to
	// every micro-step's gradients when it accumulates them, before adding them to the
	// accumulators (0: nothing); MixedMicroStepBytesPerElement and MixedMicroStepKernels what
	// mixed precision adds to that.
	MicroStepBytesPerElement, MixedMicroStepBytesPerElement float64
	MicroStepKernels, MixedMicroStepKernels                 int
	// EarlyTemps: for an update written as separate TF graph ops, the float32 tensors of the
	// variable's shape it computes from the variable and its slots alone, with one more for a
	// variable it decays (DecayExclude). TF's executor runs an op as soon as its inputs are
	// ready (tensorflow/core/common_runtime/executor.cc: the root nodes' successors first), so
	// these run at the start of the step and are held to the update, through the forward and
	// backward passes.
	EarlyTemps int
	// DecayExclude: substrings of the variable names weight decay skips; nil: no decay tensor.
	DecayExclude []string
	// UpdateTemps: float32 tensors per variable alive at once when TF runs the updates of all
	// variables breadth first (the executor's ready queue is first in, first out, and every
	// variable's update becomes ready together, after clip_by_global_norm): the first level of
	// every variable's update runs before the second level of any.
	UpdateTemps int
}

// Sources: slot variables as the Keras optimizers create them in build()
// (keras/src/optimizers/sgd.py: "momentum" only when momentum != 0; adam.py: "momentum" and
// "velocity" (+ "velocity_hat" with amsgrad); adamw.py as adam; rmsprop.py: "velocity"
// (+ "momentum" when momentum > 0, + "average_gradient" when centered); adagrad.py:
// "accumulator"; lamb.py: "momentum" and "velocity"). FLOPs count the arithmetic of the
// update_step formulas of the same files.
var optimizers = map[string]OptimizerSpec{
	"sgd":              {Name: "sgd", Slots: 0, FLOPsPerElement: 2, BytesPerElement: 12, Kernels: 1},
	"momentum":         {Name: "momentum", Slots: 1, FLOPsPerElement: 4, BytesPerElement: 20, Kernels: 1},
	"nesterov":         {Name: "nesterov", Slots: 1, FLOPsPerElement: 6, BytesPerElement: 20, Kernels: 1},
	"adam":             {Name: "adam", Slots: 2, FLOPsPerElement: 12, BytesPerElement: 28, Kernels: 1},
	"adamw":            {Name: "adamw", Slots: 2, FLOPsPerElement: 14, BytesPerElement: 28, Kernels: 1},
	"rmsprop":          {Name: "rmsprop", Slots: 1, FLOPsPerElement: 8, BytesPerElement: 20, Kernels: 1},
	"rmsprop-momentum": {Name: "rmsprop-momentum", Slots: 2, FLOPsPerElement: 10, BytesPerElement: 28, Kernels: 1},
	"adagrad":          {Name: "adagrad", Slots: 1, FLOPsPerElement: 6, BytesPerElement: 20, Kernels: 1},
	"lamb":             {Name: "lamb", Slots: 2, FLOPsPerElement: 20, BytesPerElement: 36, Kernels: 3},
	// model-garden-adamw is the TF Model Garden's AdamWeightDecay as NVIDIA's TF2 BERT scripts
	// run it (TensorFlow2/LanguageModeling/BERT/optimization.py; official/modeling/
	// model_training_utils.py): the training step clips every gradient by the global norm
	// first (tf.clip_by_global_norm: an l2 reduction and a mul per gradient, 12 bytes), then
	// _resource_apply_dense decays the variable (var.assign_sub(lr * var * weight_decay_rate):
	// 8 bytes fused) before Keras Adam's fused ResourceApplyAdam (28 bytes): 48 bytes, 18 FLOPs
	// and 4 kernels per element and variable. Resource variables: XLA compiles it.
	"model-garden-adamw": {Name: "model-garden-adamw", Slots: 2, FLOPsPerElement: 18, BytesPerElement: 48, Kernels: 4},
	// bert-adamw is the BERT reference code's optimizer, which NVIDIA's TF1 BERT scripts run
	// (DeepLearningExamples TensorFlow/LanguageModeling/BERT/optimization.py, from
	// google-research/bert): AdamWeightDecayOptimizer.apply_gradients writes Adam as separate
	// TF ops per variable (mul, mul, add; mul, square, mul, add; sqrt, add, div; mul, add for
	// the weight decay; mul by the learning rate, sub) and three assigns, after
	// clip_by_global_norm (an l2 reduction and a mul per gradient): 19 kernels, 14 FLOPs and
	// 42 float32 tensor passes (168 bytes) per element. Its variables are TF1 reference
	// variables (tf.get_variable in a graph), whose Assign has no XLA kernel, and gpusim runs
	// the whole update outside the XLA clusters under --use_xla, op by op. (By the source the
	// element-wise ops between the reads and the assigns could be clustered: auto-clustering
	// rejects only the Identity that reads a reference, xla_cluster_util.cc
	// HasForwardedRefInput; the op-by-op price is what the TF 19.0x-container tables match.)
	// Its three assigns are 24 of those bytes and 3 of those kernels (AssignBytesPerElement),
	// which resource variables do without (run_squad.py and run_pretraining.py call
	// tf.enable_resource_variables() under --use_xla --amp from NVIDIA's 20.06 tables on:
	// tools/dle/select.py sets tf.resource_variables for those rows).
	// With gradient accumulation (num_accumulation_steps > 1, NVIDIA's create_optimizer) every
	// micro-step's gradients are clipped before they are added to the accumulators
	// (tf.clip_by_global_norm: the l2 reduction and the mul, 12 bytes and 2 kernels per
	// element); under --amp, enable_mixed_precision_graph_rewrite's compute_gradients unscales
	// them (a mul, 8 bytes) and all_are_finite checks them (is_finite and its reduction, 4
	// bytes) on every micro-step too (MicroStep fields). The update at the last micro-step
	// still counts its own clip: 12 bytes per element once per update, which the clips of the
	// micro-steps before it outweigh by the number of micro-steps.
	// Memory (google-research/bert optimization.py, the same code): beta_1 * m, beta_2 * v and,
	// for every variable whose name has none of "LayerNorm", "layer_norm", "bias"
	// (create_optimizer's exclude_from_weight_decay), weight_decay_rate * param depend on
	// variables alone (EarlyTemps 2 + the decay); after the clip, (1 - beta_1) * grad and
	// tf.square(grad) of every variable are written before any next_m (UpdateTemps 2; the word
	// embedding's IndexedSlices gradient is converted to a dense tensor for each of the two).
	"bert-adamw": {Name: "bert-adamw", Slots: 2, FLOPsPerElement: 14, BytesPerElement: 168, Kernels: 19, OutsideXLA: true,
		AssignBytesPerElement: 24, AssignKernels: 3,
		EarlyTemps: 2, DecayExclude: []string{"LayerNorm", "layer_norm", "bias"}, UpdateTemps: 2,
		MicroStepBytesPerElement: 12, MicroStepKernels: 2, MixedMicroStepBytesPerElement: 12, MixedMicroStepKernels: 2},
	// bert-lamb is the LAMBOptimizer of the same file, which NVIDIA's TF1 pre-training runs
	// (run_pretraining.py --optimizer_type=lamb): per variable, after clip_by_global_norm (an
	// l2 reduction and a mul), next_m (mul, mul, add), next_v (square, mul, mul, add), the two
	// bias corrections (div, div), update = m / (sqrt(v) + eps) (sqrt, add, div), the weight
	// decay (mul, add), the two norms of param and update (square, sum, sqrt each: one pass
	// each), ratio * lr * update (mul), param - update (sub) and three assigns: 24 kernels,
	// 20 FLOPs and 48 float32 tensor passes (192 bytes) per element, outside the XLA clusters
	// as bert-adamw's, and the same per micro-step when it accumulates; its three assigns are
	// bert-adamw's (24 bytes, 3 kernels).
	"bert-lamb": {Name: "bert-lamb", Slots: 2, FLOPsPerElement: 20, BytesPerElement: 192, Kernels: 24, OutsideXLA: true,
		AssignBytesPerElement: 24, AssignKernels: 3,
		MicroStepBytesPerElement: 12, MicroStepKernels: 2, MixedMicroStepBytesPerElement: 12, MixedMicroStepKernels: 2},
}

// WithResourceVariables is the update when its variables are resource variables: an update
// that assigns reference variables (AssignBytesPerElement) loses its assigns' copies of the
// new values. Any other update is returned as is.
func (o OptimizerSpec) WithResourceVariables() OptimizerSpec {
	if o.AssignKernels == 0 {
		return o
	}
	o.BytesPerElement -= o.AssignBytesPerElement
	o.Kernels -= o.AssignKernels
	o.AssignBytesPerElement, o.AssignKernels = 0, 0
	return o
}

// Optimizers lists the optimizer names Plan accepts.
func Optimizers() []string {
	out := make([]string, 0, len(optimizers))
	for k := range optimizers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LookupOptimizer returns an optimizer's cost; "" is sgd.
func LookupOptimizer(name string) (OptimizerSpec, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = "sgd"
	}
	o, ok := optimizers[n]
	if !ok {
		return OptimizerSpec{}, fmt.Errorf("unknown optimizer %q (known: %s)", name, strings.Join(Optimizers(), ", "))
	}
	return o, nil
}
