package models

import (
	"fmt"
	"slices"
	"strings"
)

// XLA's part of the step plan: the fusions (fuseXLA), which forward values backward keeps when
// the step is one XLA module (the savers), the cuBLAS workspace of XLA's GEMM calls, and what
// JAX's gradients change in them. Buffer assignment and rematerialization of the finished
// plan are xla_buffers.go's, the compile time xla_compile.go's; the planner calls these from
// expand, buffers and forward (plan.go). Which XLA a run has is framework.Profile's (its
// gates reach the plan as PlanOptions).

// fuseXLA groups the pnodes into XLA's fusions (pnode.group; each pnode is its own group
// without XLA): an element-wise op (or cast) joins the fusion of the op just before it when it
// reads that op's output (XLA GPU instruction fusion of a producer-consumer chain; cuDNN
// convolutions absorb bias and activation: gpu/transforms/cudnn_fused_conv_rewriter.cc).
func (pl *planner) fuseXLA() {
	for i := range pl.pn {
		p := &pl.pn[i]
		p.group = i
		if !pl.o.XLA || i == 0 || p.isLoss {
			continue
		}
		if !(p.isCast || (p.n != nil && p.n.ew)) {
			continue
		}
		prev := &pl.pn[i-1]
		if prev.isLoss || (prev.n != nil && (prev.n.input || prev.n.alias)) {
			continue
		}
		for _, x := range p.in {
			if x == i-1 {
				p.fused = true
				p.bwdFused = true
				p.group = prev.group
			}
		}
	}
}

// xlaSavers redoes which forward values backward keeps when the step is one XLA module.
// The gradient is part of the same HLO graph as the forward pass, and XLA keeps a value from
// forward to backward only where a backward instruction reads it; the values kept are those
// of XLA's own buffer assignment of real Keras steps (testdata/h200/keras/xla, the
// after_optimizations-live-range.txt peaks listed by tools/h200/xla_peak.py):
//   - A value read by a cuDNN or cuBLAS call of backward (a convolution's or a matmul's input,
//     for its filter and input gradients) is kept: a library call reads a buffer.
//   - A value read only by backward fusions (activation, batch-norm and multiply gradients,
//     the max-pool gradient's argmax) that is itself an element-wise function (activation,
//     batch norm's normalization, add, multiply, cast, zero padding) of other values is not
//     kept: XLA's fusion passes duplicate cheap element-wise producers into each consumer
//     (xla/service/gpu/transforms/priority_fusion.cc, instruction_fusion.cc), so backward
//     recomputes it from its operands, which are kept in its place. ResNet-50's batch-norm
//     and ReLU outputs are recomputed from the convolution outputs (kept for the batch-norm
//     gradient); a ReLU output is kept only where a convolution reads it.
//   - Convolution and matmul outputs, with the bias (and, when nothing else reads the
//     pre-activation, the ReLU) that cuDNN/cuBLAS fuse into the call
//     (gpu/transforms/cudnn_fused_conv_rewriter.cc, gemm_rewriter.cc), cannot be recomputed
//     and are kept when needed; so are pooling, concatenation and reduction outputs.
//   - A symmetric zero padding in front of a convolution becomes the convolution's window
//     padding (AlgebraicSimplifier folds pad into conv; cuDNN takes symmetric padding only,
//     so gpu/transforms/conv_padding_legalization.cc leaves an asymmetric one a real pad):
//     the convolution's gradient reads the unpadded value.
//   - Max pooling's gradient (select_and_scatter: JAX's reduce_window max transpose, and
//     tf2xla's MaxPoolGrad) reads the pool's input, not its output.
//
// Under JAX the relu family differentiates from its input (see PlanOptions.JAX), so a ReLU
// right after a convolution keeps the convolution's output (VGG16 under XLA keeps every
// pre-activation beside the ReLU output the next convolution reads).
func (pl *planner) xlaSavers() {
	nb := len(pl.bufs)
	kept := make([]bool, nb)
	saver := make([]int, nb)
	for b := range saver {
		saver[b] = -1
	}
	keep := func(b, s int) {
		if saver[b] < 0 || s < saver[b] {
			saver[b] = s
		}
		kept[b] = true
	}
	type read struct{ b, s int }
	var fusible []read
	for i := range pl.pn {
		p := &pl.pn[i]
		if !p.needGrad {
			continue
		}
		if p.isLoss {
			for _, x := range p.in {
				fusible = append(fusible, read{pl.pn[x].buf, i})
			}
			continue
		}
		n := p.n
		if n == nil || n.input {
			continue
		}
		saveIn, saveOut := n.saveIn, n.saveOut
		switch {
		case pl.o.JAX && jaxReadsInput(n):
			saveIn, saveOut = 1, false
		case n.kind == Pool && saveOut:
			saveOut = false
		}
		lib := n.kind == Conv || n.kind == MatMul || n.kind == Attention
		for j, x := range p.in {
			if saveIn&(1<<uint(j)) == 0 {
				continue
			}
			if lib {
				if q := &pl.pn[x]; n.kind == Conv && q.n != nil && q.n.padSym && q.n.kind == Copy && len(q.in) == 1 {
					x = q.in[0] // the padding folded into the convolution
				}
				keep(pl.pn[x].buf, i)
			} else {
				fusible = append(fusible, read{pl.pn[x].buf, i})
			}
		}
		if saveOut && p.buf >= 0 {
			if lib {
				keep(p.buf, i)
			} else {
				fusible = append(fusible, read{p.buf, i})
			}
		}
	}
	var walk func(b, s int)
	walk = func(b, s int) {
		if kept[b] {
			keep(b, s)
			return
		}
		if saver[b] >= 0 && saver[b] <= s {
			return // walked already for an earlier reader
		}
		r := pl.bufs[b].root
		if !pl.xlaRecomputable(r) || pl.xlaReduceSideOutput(r) {
			keep(b, s)
			return
		}
		saver[b] = s
		for _, x := range pl.pn[r].in {
			if pl.pn[x].dt != Int32 {
				walk(pl.pn[x].buf, s)
			}
		}
	}
	for _, r := range fusible {
		walk(r.b, r.s)
	}
	for b := range pl.bufs {
		if kept[b] {
			pl.bufs[b].saver = saver[b]
		} else {
			pl.bufs[b].saver = -1
		}
	}
}

// blasWorkspace is the workspace of a cuBLAS call XLA makes for pnode p (a matmul or an
// attention product): the GEMM rewriter appends an s8 buffer of min(BlasWorkspace, the
// operands' bytes) to the call's outputs, in the step's temp buffer (gemm_rewriter.cc
// GemmWorkspaceRewriteVisitor: "Pass a user-managed workspace to legacy cuBLAS operations, as
// otherwise cuBLAS will use its own internal pool"); VGG16's fc GEMMs on the H200 have
// s8[33554432]. 0 outside XLA or for other ops.
func (pl *planner) blasWorkspace(p *pnode) int64 {
	if !pl.o.XLA || pl.o.BlasWorkspace <= 0 || p.n == nil || (p.n.kind != MatMul && p.n.kind != Attention) {
		return 0
	}
	var operands int64
	for _, x := range p.in {
		operands += pl.bufs[pl.pn[x].buf].bytes
	}
	for _, w := range p.n.weights {
		operands += pl.g.weights[w].elems * p.dt.Size()
	}
	return min(pl.o.BlasWorkspace, operands) / 4 * 4
}

// jaxReluShape is 1 when the step is JAX's and a ReLU-family activation that needs a
// gradient has the shape and dtype of x, else 0.
func (pl *planner) jaxReluShape(x *pnode) int {
	if !pl.o.JAX {
		return 0
	}
	for i := range pl.pn {
		q := &pl.pn[i]
		if q.needGrad && q.n != nil && jaxReadsInput(q.n) && q.dt == x.dt && q.elems == x.elems && fmt.Sprint(q.shape) == fmt.Sprint(x.shape) {
			return 1
		}
	}
	return 0
}

// jaxReadsInput: the JAX gradient of this activation reads its input where TF's reads its
// output (jax.nn.relu and relu6 are custom_jvp rules on x; elu and clip differentiate x).
func jaxReadsInput(n *node) bool {
	if n.kind != Elementwise || !n.saveOut || len(n.in) != 1 {
		return false
	}
	for _, a := range []string{"/relu", "/relu6", "/relu_max_value", "/elu"} {
		if strings.HasSuffix(n.name, a) {
			return true
		}
	}
	return false
}

// xlaRecomputable: XLA recomputes pnode i's output inside the backward fusions that read it
// (a cheap element-wise producer duplicated into its consumers) instead of keeping it.
func (pl *planner) xlaRecomputable(i int) bool {
	p := &pl.pn[i]
	if p.isCast {
		return true
	}
	n := p.n
	if n == nil || n.input || pl.xlaLibOut(i) {
		return false
	}
	return n.ew || n.kind == Norm || (n.kind == Copy && strings.HasSuffix(n.name, "/Pad"))
}

// xlaReduceSideOutput: pnode i is a transcendental activation (swish, sigmoid, ...) that a
// spatial mean and another op both read, where the mean is a race-free column reduction of a
// long extent; XLA then writes the activation as a second output of the reduction's fusion
// and backward reads that buffer instead of recomputing it. The squeeze-and-excitation blocks
// of EfficientNetB0 show it (testdata/h200/keras/xla/efficientnetb0_float32_b128.peak.txt:
// input_multiply_reduce_fusion{1}, the swish beside the se_squeeze reduce_sum, and a plain
// multiply for se_excite, in blocks 2a-3b). Why: priority fusion fuses a producer into all of
// its consumers or none, by GpuPerformanceModel's estimate of the fused and unfused run times
// (gpu/transforms/priority_fusion.cc CalculateProducerPriority), and a producer left unfused
// is merged into its reduction consumer as a multi-output fusion (multi_output_fusion.cc).
//   - Reductions longer than the race-free bound, WarpSize * 128 rows for a column reduction
//     (reduction_utils.cc ReductionDimensionRaceFreeBound), are split in two by the tree
//     reduction rewriter before fusion, and the activation fuses into both halves: block 1a's
//     112x112 = 12544 rows are recomputed.
//   - Below xlaSideOutputMinRows the estimate fuses as well: the recording recomputes the
//     activation at 14x14 = 196 and 7x7 rows and keeps it at 28x28 = 784 and 56x56 = 3136.
//     The threshold is the smallest extent the recording keeps (the cost model's crossing
//     point between 196 and 784 is not modelled). In half precision the activation is half
//     the bytes to keep for the same math to redo, and the float16 recording of
//     EfficientNetV2B0 keeps it down to its 7x7 stage (xlaSideOutputMinRowsHalf;
//     testdata/h200/profiles/efficientnetv2b0_mixed_float16_b128.xplane.pb.gz, the step's
//     buffer assignment in its HloProto: input_multiply_reduce_fusion{1} of every se_squeeze
//     in blocks 4a-6h, 14x14 and 7x7).
func (pl *planner) xlaReduceSideOutput(i int) bool {
	p := &pl.pn[i]
	if !pl.o.XLA || p.n == nil || p.n.kind != Elementwise || len(p.shape) < 3 {
		return false
	}
	transcendental := false
	for _, a := range []string{"/swish", "/silu", "/sigmoid", "/mish", "/softplus", "/elu", "/gelu", "/tanh"} {
		transcendental = transcendental || strings.HasSuffix(p.n.name, a)
	}
	if !transcendental {
		return false
	}
	rows := prod64(p.shape[1 : len(p.shape)-1]) // spatial extent per sample, NHWC
	minRows := int64(xlaSideOutputMinRows)
	if p.dt == Float16 || p.dt == BFloat16 {
		minRows = xlaSideOutputMinRowsHalf
	}
	mean, other := false, false
	for j := range pl.pn {
		q := &pl.pn[j]
		if !slices.Contains(q.in, i) {
			continue
		}
		if q.n != nil && q.n.kind == Reduction && strings.HasSuffix(q.n.name, "/Mean") && len(q.n.in) == 1 &&
			rows >= minRows && rows <= xlaColumnRaceFreeRows {
			mean = true
		} else {
			other = true
		}
	}
	return mean && other
}

// jaxCentered adds the float32 x - mean that Keras 3's batch normalization on JAX keeps for
// backward when the variance's reduction is race-free, and returns it (-1: none). Keras's
// moments (keras/src/backend/jax/nn.py) computes in float32, casting float16 and bfloat16
// inputs, and takes jnp.var, whose x - mean the variance's gradient reads again. XLA emits
// the batch statistics as a column reduction over batch x spatial rows; where those rows are
// within the race-free bound (xlaColumnRaceFreeRows) the centered value is written as a
// second output of the reduction's fusion and kept, as XLA's own buffer assignments of
// ResNet-50 at batch 64 show (testdata/h200/keras/xla/resnet50_*_b64.peak.txt: nine
// "jvp(convN_bn)/jit(_var)/sub" buffers, f32[64,7,7,C], 0.108 GiB in every precision, for the
// 7x7 stage's 64x49 = 3136 rows); longer reductions are split by the tree reduction rewriter
// and backward recomputes x - mean from the convolution output (none at batch 128: 6272 rows).
func (pl *planner) jaxCentered(p *pnode) int {
	n := p.n
	if !pl.o.XLA || !pl.o.JAX || !p.needGrad || n == nil || n.kind != Norm || !strings.HasSuffix(n.name, "/FusedBatchNormV3") || len(p.shape) < 2 {
		return -1
	}
	if rows := prod64(p.shape[:len(p.shape)-1]); rows > xlaColumnRaceFreeRows {
		return -1
	}
	t := pl.tensor(n.name+"/centered", p.elems*pl.B*Float32.Size(), Activation, Float32, p.shape)
	pl.p.Tensors[t].Recompute = true // an element-wise value: rematerialization recomputes it
	return t
}

const (
	// xlaColumnRaceFreeRows is XLA's race-free bound of a column reduction on NVIDIA GPUs:
	// WarpSize (32) times the column tile of 128 rows (reduction_utils.cc GetReductionTiling,
	// ReductionDimensionRaceFreeBound); longer ones are split (tree_reduction_rewriter.cc).
	xlaColumnRaceFreeRows = 32 * 128
	// xlaSideOutputMinRows: the smallest reduced extent at which the recorded EfficientNetB0
	// step keeps the activation as a side output (28x28; 14x14 is recomputed).
	xlaSideOutputMinRows = 28 * 28
	// xlaSideOutputMinRowsHalf: the same in float16, where the recorded EfficientNetV2B0
	// step keeps the activation at its smallest stage, 7x7.
	xlaSideOutputMinRowsHalf = 7 * 7
)

// xlaLibOut: pnode i's output is written by a cuDNN or cuBLAS call: a convolution or matmul,
// the bias add fused into it, and a ReLU fused after that when its input has no other reader
// (TF's ReluGrad reads the output; JAX's reads the input, which stops the fusion).
func (pl *planner) xlaLibOut(i int) bool {
	p := &pl.pn[i]
	n := p.n
	if n == nil {
		return false
	}
	switch {
	case n.kind == Conv || n.kind == MatMul || n.kind == Attention:
		return true
	case pl.xlaSideInput(i):
		return true
	case len(p.in) != 1 || pl.pn[p.in[0]].group != p.group || !pl.xlaLibOut(p.in[0]):
		return false
	case strings.HasSuffix(n.name, "/BiasAdd"):
		return true
	case strings.HasSuffix(n.name, "/relu") && !pl.o.JAX:
		b := &pl.pn[p.in[0]]
		return b.n != nil && strings.HasSuffix(b.n.name, "/BiasAdd")
	}
	return false
}

// xlaSideInput: pnode i is a two-input Add fused onto a convolution's output (the op just
// before it, with its bias): cuDNN's fused convolution takes the other operand as its side
// input, y = conv(x, w) + bias + side (cudnn_fused_conv_rewriter.cc FuseBiasOrSideInput,
// "conv + side_input" when the convolution has no other user), so the sum is the library
// call's own output and the convolution's result never reaches memory on its own. The
// pre-activation ResNets end every block so (keras/src/applications/resnet.py
// block2: Add([shortcut, x]) right after the 1x1 "_3_conv"): ResNet50V2's float32 step on the
// H200 keeps one cudnn-conv-bias-activation output per block, the block's sum, and neither
// operand (testdata/h200/profiles/resnet50v2_float32_b128.buffer-assignment.txt.gz: the
// conv_shortcut blocks' conv2_block1_0_conv value holds the sum).
func (pl *planner) xlaSideInput(i int) bool {
	p := &pl.pn[i]
	if p.n == nil || !p.n.bwdShareDy || len(p.in) != 2 || p.dt == Int32 {
		return false
	}
	for _, x := range p.in {
		q := &pl.pn[x]
		if x == i-1 && q.group == p.group && q.n != nil && (q.n.kind == Conv || strings.HasSuffix(q.n.name, "/BiasAdd")) && pl.xlaLibOut(x) && pl.readers(x) == 1 {
			return true
		}
	}
	return false
}

// xlaSubsampleScatter: pnode i is a max pool with a 1x1 window (a strided subsample:
// MaxPooling2D(1, strides=2) on the shortcut of the pre-activation ResNets' stride-2 blocks)
// whose input another op reads and differentiates too, so the input's gradient is a sum and
// the input itself is kept for that op's gradient. XLA then neither writes zeros in forward
// nor keeps anything of the pool: backward recomputes the argmax reduce-window from the kept
// input and scatters into the other contributions' sum in place. ResNet50V2's step on the
// H200 shows it (testdata/h200/profiles/resnet50v2_float32_b128.hlo.txt.gz: the variadic
// loop_reduce_window_fusion.1 of max_pooling2d runs in backward, input_scatter_fusion.1
// updates loop_add_fusion, and no value of the pool lives at the step's peak). A wider window
// keeps its argmax from forward (InceptionV3's kLoop[iota,reduce-window] values at its peak,
// testdata/h200/keras/xla): the zeros of forward stand for it there.
func (pl *planner) xlaSubsampleScatter(i int) bool {
	p := &pl.pn[i]
	return p.n != nil && p.n.kind == Pool && p.n.flops <= float64(prod(p.n.shape)) && pl.gradSummed(p.in[0], i)
}

// gradSummed: another op than pnode by reads pnode x's output and needs a gradient.
func (pl *planner) gradSummed(x, by int) bool {
	for j := range pl.pn {
		q := &pl.pn[j]
		if j == by || !q.needGrad {
			continue
		}
		for k, y := range q.in {
			if y == x && (q.isLoss || q.n == nil || q.n.noGradIn&(1<<uint(k)) == 0) {
				return true
			}
		}
	}
	return false
}

// readers counts the pnodes that read pnode i's output.
func (pl *planner) readers(i int) int {
	n := 0
	for j := i + 1; j < len(pl.pn); j++ {
		for _, x := range pl.pn[j].in {
			if x == i {
				n++
			}
		}
	}
	return n
}
