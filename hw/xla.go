package hw

// KindFusion is an XLA fusion: several memory-bound ops run as one generated kernel.
const KindFusion = "fusion"

func init() { Kinds = append(Kinds, KindFusion) }

// XLABatchNormPasses is how many times XLA's expansion of a training batch norm moves the
// bytes the plan counts for it (input, output and, backward, the output gradient once each).
// BatchNormExpander (gpu_compiler.cc) lowers batch-norm-training to a mean and variance
// reduction over batch and space and an element-wise normalization, and its gradient to two
// reductions (sum of dy, sum of dy*x_hat) and an element-wise dx: the reductions over all
// but the channel axis are column reductions that cannot share a kernel with the element-wise
// pass, so x is read twice forward (3 tensors moved where 2 are counted) and x and dy twice
// backward (5 where 3 are counted): 1.5 and 1.67, 1.6 over a step. Layer norms reduce along
// rows and XLA fuses them into one pass.
const XLABatchNormPasses = 1.6

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

// fusible reports whether XLA fuses ops of kind k into a loop or input fusion. Matmuls and
// convolutions stay library calls (cuBLAS/cuDNN custom calls in XLA's GPU backend), the
// optimizer update is left alone (one kernel per variable), pooling and gathers are left alone.
func fusible(k string) bool {
	switch k {
	case KindElementwise, KindNorm, KindCast, KindReduction, KindCopy:
		return true
	}
	return false
}

// FuseXLA returns works as XLA (jit_compile=True) would run them: every maximal run of
// consecutive memory-bound ops becomes one KindFusion kernel. Inside a run each op's output is
// assumed to feed the next, so its write and re-read disappear; without tensor identities the
// output is estimated as a third of the op's traffic (two inputs and one output of equal size,
// the common case of adds and activation gradients). The fused kernel runs at the general
// memory efficiency rather than the per-kind one: XLA emits its own reduction and
// element-wise code in place of the framework's BatchNorm kernels (xla/debug_options_flags.cc
// sets xla_gpu_use_cudnn_batchnorm false, "it does not provide a performance win on average",
// and gpu_compiler.cc's BatchNormExpander turns batch norms into reductions and element-wise
// HLO that the fusion passes merge). FLOPs add up; the dtype is the widest in the run.
func FuseXLA(works []Work) []Work {
	out := make([]Work, 0, len(works))
	i := 0
	for i < len(works) {
		if !fusible(works[i].Kind) {
			out = append(out, works[i])
			i++
			continue
		}
		j := i
		f := Work{Kind: KindFusion, Kernels: 1, DType: works[i].DType, TF32: works[i].TF32, Host: works[i].Host}
		for ; j < len(works) && fusible(works[j].Kind); j++ {
			w := works[j]
			f.FLOPs += w.FLOPs
			f.Bytes += w.Bytes
			if j+1 < len(works) && fusible(works[j+1].Kind) {
				f.Bytes -= 2 * w.Bytes / 3
			}
			if dtypeSize(dtypeOf(w)) > dtypeSize(dtypeOf(f)) {
				f.DType = w.DType
			}
		}
		if j-i == 1 {
			out = append(out, works[i])
		} else {
			out = append(out, f)
		}
		i = j
	}
	return out
}
