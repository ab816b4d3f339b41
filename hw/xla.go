package hw

// KindFusion is an XLA fusion: several memory-bound ops run as one generated kernel.
const KindFusion = "fusion"

func init() { Kinds = append(Kinds, KindFusion) }

// Memory classes of XLA-generated kernels: Efficiency.MemoryByKind keys beside the Work kinds,
// for Works with Graph set (kernels of a compiled XLA step). Measured with JAX 0.11.2 on the
// H200 (testdata/h200/memkinds/micro.csv, kernel_s: the kernels' own device time from a
// profiler trace).
const (
	// MemXLAFusion is an XLA loop or input fusion: element-wise ops, casts, copies,
	// reductions and optimizer updates that XLA emits itself.
	MemXLAFusion = "xla_fusion"
	// MemXLABatchNorm and MemXLABatchNormGrad are a training batch norm as XLA expands it
	// (forward; backward), float32, on the bytes the plan counts (forward x and y, backward x,
	// dy and dx); the Half ones the same with half-precision activations (the statistics in
	// float32, as Keras computes them).
	MemXLABatchNorm         = "xla_batchnorm"
	MemXLABatchNormGrad     = "xla_batchnorm_grad"
	MemXLABatchNormHalf     = "xla_batchnorm_half"
	MemXLABatchNormHalfGrad = "xla_batchnorm_half_grad"
)

// Classes of TF executor kernels whose element rate can bound them before their bytes do: a
// Work's ClassBytes and ClassElems say how many of its bytes and elements each class moves
// (ExecClasses' order; Efficiency.ElementsPerSMCycle and, where set, MemoryByKind keys).
// Without XLA TF runs every op of a composite (a layer norm as nn.moments and
// nn.batch_normalization, softmax's row reductions) as its own kernel, and these are the
// kernels of such a sequence that do more than stream: index arithmetic per element
// (broadcasts, transposes, tiles), Philox rounds (random numbers), a reduction's tree.
const (
	// MemTFBroadcast: a binary op with a row or column vector operand, or an outer
	// broadcast ([T,1] x [D]): BiasAdd, a layer norm's x - mean and x * inv, softmax's
	// normalizing pass.
	MemTFBroadcast = "tf_broadcast"
	// MemTFRowReduce: a reduction over the last axis (Mean, Sum, Max over the features or
	// the keys); MemTFColReduce: over the rows (BiasAddGrad, a layer norm's gamma and beta
	// gradients).
	MemTFRowReduce = "tf_row_reduce"
	MemTFColReduce = "tf_col_reduce"
	// MemTFTile: a row vector written out to a full tensor (_MeanGrad's Tile); MemTFTranspose:
	// attention's [B,S,H,D] <-> [B,H,S,D] transposes; MemTFRandom: RandomUniform (Philox).
	MemTFTile      = "tf_tile"
	MemTFTranspose = "tf_transpose"
	MemTFRandom    = "tf_random"
)

// ExecClasses orders Work.ClassBytes and Work.ClassElems.
var ExecClasses = [NumExecClasses]string{MemTFBroadcast, MemTFRowReduce, MemTFColReduce, MemTFTile, MemTFTranspose, MemTFRandom}

// NumExecClasses is the length of Work.ClassBytes and Work.ClassElems.
const NumExecClasses = 6

// MemoryClasses lists the MemoryByKind keys that are not Work kinds.
var MemoryClasses = []string{MemXLAFusion, MemXLABatchNorm, MemXLABatchNormGrad, MemXLABatchNormHalf, MemXLABatchNormHalfGrad,
	MemTFBroadcast, MemTFRowReduce, MemTFColReduce, MemTFTile, MemTFTranspose, MemTFRandom}

// XLABatchNormKernels and XLABatchNormGradKernels are the kernels of a training batch norm
// and of its gradient in an XLA step. BatchNormExpander (gpu_compiler.cc) lowers
// batch-norm-training to a mean and a variance reduction over batch and space (column
// reductions, two kernels each: input_reduce_fusion and a second stage) and an element-wise
// normalization that the moving-average updates and a following ReLU join; the gradient to
// the reductions of dy and dy*x_hat and an element-wise dx. Counted in the profiler trace of
// Keras's BatchNormalization on the H200 (testdata/h200/memkinds/micro_kernels.csv, bn_fwd:
// 7 kernels, bn_fwd_bwd: 15, at every shape).
const (
	XLABatchNormKernels     = 7
	XLABatchNormGradKernels = 8
)

// xlaMemoryClass returns the MemoryByKind key of a Graph Work, or "" when its kind has none.
func xlaMemoryClass(w Work) string {
	switch w.Kind {
	case KindNorm:
		half := w.DType == Float16 || w.DType == BFloat16
		switch {
		case half && w.Grad:
			return MemXLABatchNormHalfGrad
		case half:
			return MemXLABatchNormHalf
		case w.Grad:
			return MemXLABatchNormGrad
		}
		return MemXLABatchNorm
	case KindElementwise, KindCast, KindCopy, KindReduction, KindOptimizer, KindFusion:
		return MemXLAFusion
	}
	return ""
}

// XLARowReductionPasses and XLARowReductionGradPasses are how many times an XLA without
// normalization fusions moves the bytes the plan counts for a softmax or layer norm
// (input and output; backward: output gradient, saved tensor and input gradient). Such an
// XLA fuses a reduction only as its fusion's root, so a softmax is a max reduction (reads x),
// a sum of exponentials (reads x) and the normalization (reads x, writes y), and a layer norm
// (nn.moments) a mean (reads x), a variance of x minus that mean (reads x) and the
// normalization (reads x, writes y): 4 tensors moved where 2 are counted. Backward, the row
// sums (sum of dy*y; sums of dy and dy*x_hat) read dy and the saved tensor, then the
// element-wise gradient reads both again and writes dx: 5 where 3 are counted.
const (
	XLARowReductionPasses     = 2.0
	XLARowReductionGradPasses = 5.0 / 3
)
