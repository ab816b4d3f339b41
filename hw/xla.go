package hw

// KindFusion is an XLA fusion: several memory-bound ops run as one generated kernel.
const KindFusion = "fusion"

func init() { Kinds = append(Kinds, KindFusion) }

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
