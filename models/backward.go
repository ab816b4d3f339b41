package models

import (
	"fmt"
	"slices"
	"strings"
)

// backward emits the gradient ops in reverse forward order: each allocates the gradients of
// its inputs and weights and frees the gradient of its output and the tensors it was the last
// to need (TF's gradient tape releases a saved tensor when its last gradient function has run).
func (pl *planner) backward() {
	pl.grad = make([]int, len(pl.pn))
	for i := range pl.grad {
		pl.grad[i] = -1
	}
	pl.wgrad = make([]int, len(pl.g.weights))
	for i := range pl.wgrad {
		pl.wgrad[i] = -1
	}
	saved, read := pl.gradBuffers()
	for i := len(pl.pn) - 1; i >= 0; i-- {
		p := &pl.pn[i]
		if !p.needGrad {
			continue
		}
		s := &bwdStep{i: i, p: p, dy: pl.grad[i], op: Op{Name: p.name + "/grad", Phase: Backward, DType: p.dt}}
		switch {
		case p.isLoss:
			s.op.Kind, s.op.Kernels = Elementwise, 2
			s.op.FLOPs = 3 * float64(p.elems*pl.B)
			for j := range p.in {
				if pl.needDx(p, j) {
					pl.newDx(s, j)
				}
			}
			pl.pf = append(pl.pf, pl.labels)
		case s.dy < 0:
			// No gradient reaches this op: its output feeds nothing that needs one.
			pl.releaseSaved(i, saved[i])
			pl.flush()
			continue
		case p.n != nil && (p.n.alias || p.n.bwdShareDy):
			// Reshape and Add hand dy on unchanged: no kernel, no buffer.
			for j := range p.in {
				if pl.needDx(p, j) {
					pl.contribute(p.in[j], s.dy, true)
				}
			}
			pl.decref(s.dy)
			pl.releaseSaved(i, saved[i])
			pl.flush()
			continue
		case p.isCast:
			s.op.Kind, s.op.Kernels = KindCast, 1
			if p.fused {
				s.op.Kernels = 0
			}
			s.op.FLOPs = float64(p.elems * pl.B)
			s.op.Bytes += float64(pl.p.Tensors[s.dy].Bytes)
			pl.newDx(s, 0)
		default:
			pl.layerGrad(s, read[i])
		}
		pl.decref(s.dy)
		pl.releaseSaved(i, saved[i])
		pl.emit(s.op)
		pl.handOn(s)
	}
	pl.flush()
}

// bwdStep is one gradient op while backward builds it: the pnode whose gradient it is (index
// i), the gradient of its output (dy), the op, and the gradients it writes: of inputs (dxs)
// and of weights (wgs).
type bwdStep struct {
	i   int
	p   *pnode
	dy  int
	op  Op
	dxs []struct{ j, t int } // input p.in[j]'s gradient, tensor t
	wgs []struct{ w, t int } // weight w's gradient, tensor t
}

// gradBuffers lists per pnode the buffers its gradient is the first to need (saved, freed
// after it) and those it reads, for its bytes (read; under XLA also what backward fusions
// recompute it from rather than keep).
func (pl *planner) gradBuffers() (saved, read [][]int) {
	saved = make([][]int, len(pl.pn))
	read = make([][]int, len(pl.pn))
	for b := range pl.bufs {
		if s := pl.bufs[b].saver; s >= 0 && pl.bufs[b].tensor >= 0 {
			saved[s] = append(saved[s], b)
		}
		if s := pl.bufs[b].reader; s >= 0 && (pl.bufs[b].tensor >= 0 || !pl.bufs[b].material) {
			read[s] = append(read[s], b)
		}
	}
	return saved, read
}

// releaseSaved frees what pnode i's gradient was the last to need: its saved buffers and the
// tensors forward kept for it.
func (pl *planner) releaseSaved(i int, saved []int) {
	for _, b := range saved {
		pl.decref(pl.bufs[b].tensor)
	}
	for _, t := range pl.keep[i] {
		pl.decref(t)
	}
}

// newDx allocates the gradient of input j that the op writes.
func (pl *planner) newDx(s *bwdStep, j int) {
	x := &pl.pn[s.p.in[j]]
	t := pl.tensor(x.name+"/grad", x.elems*pl.B*x.dt.Size(), Gradient, x.dt, x.shape)
	s.op.Alloc = append(s.op.Alloc, t)
	s.op.Bytes += float64(pl.p.Tensors[t].Bytes)
	s.dxs = append(s.dxs, struct{ j, t int }{j, t})
}

// layerGrad fills in the gradient op of a layer's node: FLOPs, what it reads, the gradients
// and the scratch it writes. read is the buffers the gradient reads.
func (pl *planner) layerGrad(s *bwdStep, read []int) {
	g, p, n, op := pl.g, s.p, s.p.n, &s.op
	op.Name, op.Kind, op.Kernels = n.name+"/grad", n.kind, n.kB
	op.GEMM = pl.gemm(n)
	anyDx := pl.anyDx(p)
	var trainable []int
	for _, w := range n.weights {
		if g.weights[w].trainable {
			trainable = append(trainable, w)
		}
	}
	if anyDx {
		op.FLOPs += n.dxFLOPs * float64(pl.B)
	}
	if len(trainable) > 0 {
		op.FLOPs += n.dwFLOPs * float64(pl.B)
	}
	if !anyDx && (n.kind == Conv || n.kind == MatMul || n.kind == Attention) && op.Kernels > 1 {
		op.Kernels--
	}
	op.Bytes += float64(pl.p.Tensors[s.dy].Bytes)
	for _, b := range read {
		op.Bytes += float64(pl.bufs[b].bytes)
	}
	for _, w := range n.weights {
		if pl.mixed && g.weights[w].cast && p.dt == pl.half {
			op.Bytes += float64(g.weights[w].elems * pl.half.Size())
		} else {
			op.Bytes += float64(4 * g.weights[w].elems)
		}
	}
	if p.bwdFused && n.ew {
		pl.inPlaceGrad(s, len(trainable) > 0)
	} else {
		nd := 0
		for j := range p.in {
			if pl.needDx(p, j) {
				pl.newDx(s, j)
				nd++
			}
		}
		if n.kind == Copy && n.kB == len(p.in) {
			op.Kernels = max(nd, 1)
		}
	}
	if pl.o.XLA && anyDx && n.kind == Pool && strings.HasSuffix(n.name, "/MaxPool") {
		op.Bytes, op.Kernels = pl.xlaMaxPoolGradBytes(p), 2
	}
	pl.gradWorkspaces(s, anyDx)
	pl.weightGrads(s, trainable)
	if n.tf != nil && !pl.o.XLA {
		op.Bytes, op.Kernels, op.ClassBytes, op.ClassElems = tfPrice(n.tf.bwd, pl.B, p.dt)
	}
}

// inPlaceGrad is the gradient of a fused element-wise op: it runs inside its neighbour's
// fusion and overwrites dy in place; a bias gradient (weights) still needs its reduction.
func (pl *planner) inPlaceGrad(s *bwdStep, weights bool) {
	p, op := s.p, &s.op
	op.Kernels = 0
	if weights {
		op.Kernels = 1
	}
	for j := range p.in {
		if !pl.needDx(p, j) {
			continue
		}
		if pl.pn[p.in[j]].elems < p.elems {
			// A broadcast operand (squeeze-excite's per-channel scale times the
			// activation): its gradient is dy*x reduced over the broadcast axes, a
			// tensor of the operand's own size that a reduction writes, not dy.
			pl.newDx(s, j)
			op.Kernels = 1
			continue
		}
		pl.contribute(p.in[j], s.dy, true)
	}
	if pl.o.XLA && pl.o.JAX && !weights && pl.feedsNormGrad(s.i) {
		// XLA fuses the activation's derivative into the batch norm gradient's
		// reduction and dx fusions as a producer (it recomputes the normalized
		// input there): no pass of its own. Keras's EfficientNetB0 step on the
		// H200 has no activation-gradient kernel apart from the batch norm's
		// (testdata/h200/keras/trace: every swish/bwd sits in a bn/bwd fusion).
		op.Bytes = 0
	}
	if pl.o.XLA && pl.o.JAX && weights && pl.readByNorm(s.i) {
		// A convolution's bias gradient when a batch norm reads the convolution: its
		// reduction of dy joins the batch norm gradient's dx fusion as a second
		// output (ResNet-50's trace: conv/bwd inside bn/bwd fusions), reading
		// nothing of its own; it writes the bias gradient (weightGrads).
		op.Bytes = 0
	}
}

// gradWorkspaces adds the scratch the gradient's library calls take and free: cuBLAS's
// workspace under XLA, cuDNN's for a convolution's input gradient (anyDx).
func (pl *planner) gradWorkspaces(s *bwdStep, anyDx bool) {
	p, n, op := s.p, s.p.n, &s.op
	if ws := pl.blasWorkspace(p); ws > 0 {
		// The gradient's two GEMMs run one after the other on the stream; each takes the
		// workspace for its call.
		t := pl.tensor(n.name+"/grad/cublas_workspace", ws, Workspace, Int32, []int64{ws / 4})
		op.Alloc = append(op.Alloc, t)
		pl.pf = append(pl.pf, t)
	}
	if n.workspace && anyDx {
		ws := pl.bufs[p.buf].bytes
		if b := pl.bufs[pl.pn[p.in[0]].buf].bytes; b > ws {
			ws = b
		}
		t := pl.tensor(n.name+"/grad/workspace", min(ws, workspaceLimit), Workspace, p.dt, []int64{min(ws, workspaceLimit)})
		op.Alloc = append(op.Alloc, t)
		pl.pf = append(pl.pf, t)
		if !pl.o.XLA {
			// Conv2DBackpropInput profiles with the input gradient wrapped; the filter
			// gradient's profiling after it wraps only the (smaller) filter.
			op.Autotune = autotuneScratch("bwd", op.GEMM, p.dt, pl.bufs[pl.pn[p.in[0]].buf].bytes, min(ws, workspaceLimit))
		}
	}
}

// weightGrads allocates the gradients of the trainable weights that the op writes.
func (pl *planner) weightGrads(s *bwdStep, trainable []int) {
	g, p := pl.g, s.p
	for _, w := range trainable {
		dt := Float32
		if pl.mixed && g.weights[w].cast && p.dt == pl.half && !pl.o.XLA {
			// The gradient of the cast copy is half; the Cast op's gradient casts it
			// back to float32 (math_grad.py _CastGrad).
			dt = pl.half
		}
		t := pl.tensor(g.weights[w].name+"/grad", g.weights[w].elems*dt.Size(), Gradient, dt, dims(g.weights[w].shape))
		s.op.Alloc = append(s.op.Alloc, t)
		s.op.Bytes += float64(pl.p.Tensors[t].Bytes)
		s.wgs = append(s.wgs, struct{ w, t int }{w, t})
	}
}

// handOn passes the emitted op's gradients on: each input's to its producer, each weight's
// (cast to float32 first where it is half) to the weight.
func (pl *planner) handOn(s *bwdStep) {
	for _, d := range s.dxs {
		pl.contribute(s.p.in[d.j], d.t, false)
	}
	for _, x := range s.wgs {
		t := x.t
		if pl.p.Tensors[t].DType != Float32 {
			w := &pl.g.weights[x.w]
			t32 := pl.tensor(w.name+"/grad/Cast", 4*w.elems, Gradient, Float32, dims(w.shape))
			pl.decref(t)
			pl.emit(Op{Name: w.name + "/grad/Cast", Phase: Backward, Kind: KindCast, DType: Float32,
				FLOPs: float64(w.elems), Bytes: float64(w.elems * (4 + pl.half.Size())), Kernels: 1, Alloc: []int{t32}})
			t = t32
		}
		pl.addWeightGrad(x.w, t)
	}
}

// earlyTemps allocates, before the step's first op, the update's tensors that depend on
// variables alone (OptimizerSpec.EarlyTemps) and returns them per weight, for the update to
// free.
func (pl *planner) earlyTemps() map[int][]int {
	out := map[int][]int{}
	if pl.opt.EarlyTemps == 0 && pl.opt.DecayExclude == nil || len(pl.p.Ops) == 0 {
		return out
	}
	for w, wt := range pl.g.weights {
		if pl.wgrad[w] < 0 {
			continue
		}
		n := pl.opt.EarlyTemps
		if pl.opt.DecayExclude != nil && !slices.ContainsFunc(pl.opt.DecayExclude, func(s string) bool { return strings.Contains(wt.name, s) }) {
			n++
		}
		for j := 0; j < n; j++ {
			t := pl.tensor(fmt.Sprintf("%s/%s/early%d", wt.name, pl.opt.Name, j), 4*wt.elems, Gradient, Float32, dims(wt.shape))
			pl.p.Ops[0].Alloc = append(pl.p.Ops[0].Alloc, t)
			out[w] = append(out[w], t)
		}
	}
	return out
}

// contribute adds a gradient to pnode x's output gradient; a second contribution is summed
// (TF aggregates the gradients of a tensor read by several ops with AddN).
func (pl *planner) contribute(x, t int, shared bool) {
	if shared {
		pl.ref[t]++
	}
	if pl.grad[x] < 0 {
		pl.grad[x] = t
		return
	}
	old := pl.grad[x]
	b := pl.p.Tensors[old].Bytes
	y := pl.tensor(pl.pn[x].name+"/grad/AddN", b, Gradient, pl.p.Tensors[old].DType, pl.p.Tensors[old].Shape)
	pl.decref(old)
	pl.decref(t)
	pl.emit(Op{Name: pl.pn[x].name + "/grad/AddN", Phase: Backward, Kind: Elementwise, DType: pl.p.Tensors[old].DType,
		FLOPs: float64(b / pl.p.Tensors[old].DType.Size()), Bytes: 3 * float64(b), Kernels: 1, Alloc: []int{y}})
	pl.grad[x] = y
}

// addWeightGrad records a weight's float32 gradient; a tied weight's second gradient is added
// into the first.
func (pl *planner) addWeightGrad(w, t int) {
	if pl.wgrad[w] < 0 {
		pl.wgrad[w] = t
		pl.p.Gradients = append(pl.p.Gradients, t)
		return
	}
	b := pl.p.Tensors[t].Bytes
	pl.decref(t)
	pl.emit(Op{Name: pl.g.weights[w].name + "/grad/AddN", Phase: Backward, Kind: Elementwise, DType: Float32,
		FLOPs: float64(b / 4), Bytes: 3 * float64(b), Kernels: 1})
}

// optimizer emits loss-scale bookkeeping (mixed_float16) and one update per trainable variable.
func (pl *planner) optimizer() {
	g := pl.g
	var elems int64
	var n int
	for w := range g.weights {
		if pl.wgrad[w] >= 0 {
			elems += g.weights[w].elems
			n++
		}
	}
	pl.l2DecayGrad()
	if pl.o.Precision == MixedFloat16 && n > 0 {
		// LossScaleOptimizer (keras/src/optimizers/loss_scale_optimizer.py): unscale every
		// gradient, check that all are finite, then update the scale; Keras compile wraps the
		// optimizer only for mixed_float16 (bfloat16 has float32's range). A fixed scale
		// (StaticLossScale) only unscales.
		k1, k2 := n, n+1
		if pl.o.XLA {
			k1, k2 = 1, 1
		}
		pl.emit(Op{Name: "loss_scale/unscale", Phase: Optimizer, Kind: Elementwise, DType: Float32,
			FLOPs: float64(elems), Bytes: 8 * float64(elems), Kernels: k1})
		if !pl.o.StaticLossScale {
			pl.emit(Op{Name: "loss_scale/all_finite", Phase: Optimizer, Kind: Reduction, DType: Float32,
				FLOPs: float64(elems), Bytes: 4 * float64(elems), Kernels: k2 + 2})
		}
	}
	early := pl.earlyTemps()
	k := 0
	for w := range g.weights {
		t := pl.wgrad[w]
		if t < 0 {
			continue
		}
		e := float64(g.weights[w].elems)
		op := Op{Name: g.weights[w].name + "/" + pl.opt.Name, Phase: Optimizer, Kind: KindOptimizer, DType: Float32,
			FLOPs: pl.opt.FLOPsPerElement * e, Bytes: pl.opt.BytesPerElement * e, Kernels: pl.opt.Kernels, OutsideXLA: pl.opt.OutsideXLA}
		switch {
		case pl.opt.UpdateTemps == 0:
			pl.decref(t)
		case k == 0:
			// clip_by_global_norm's scaled copy of each gradient replaces it, and the first
			// level of the breadth-first update reads the copies: every gradient is dead
			// once that level has run.
			for _, x := range pl.wgrad {
				pl.decref(x)
			}
		case k == 1:
			for v := w; v < len(g.weights); v++ {
				if pl.wgrad[v] < 0 {
					continue
				}
				for j := 0; j < pl.opt.UpdateTemps; j++ {
					x := pl.tensor(fmt.Sprintf("%s/%s/update%d", g.weights[v].name, pl.opt.Name, j), 4*g.weights[v].elems, Gradient, Float32, dims(g.weights[v].shape))
					op.Alloc = append(op.Alloc, x)
					if v != w {
						early[v] = append(early[v], x) // freed by its own variable's update
					} else {
						op.Free = append(op.Free, x)
					}
				}
			}
		}
		op.Free = append(op.Free, early[w]...)
		pl.emit(op)
		k++
	}
	pl.flush()
	// Anything still alive (a saved tensor of a branch no gradient reached) ends with the step.
	alive := make([]bool, len(pl.p.Tensors))
	for i := range pl.p.Ops {
		for _, t := range pl.p.Ops[i].Alloc {
			alive[t] = true
		}
		for _, t := range pl.p.Ops[i].Free {
			alive[t] = false
		}
	}
	last := &pl.p.Ops[len(pl.p.Ops)-1]
	for t, a := range alive {
		if a {
			last.Free = append(last.Free, t)
		}
	}
}

// readByNorm reports whether pnode i's only reader is the batch norm just after it.
func (pl *planner) readByNorm(i int) bool {
	if i+1 >= len(pl.pn) || !pl.pn[i].bwdFused {
		return false
	}
	q := &pl.pn[i+1]
	if q.n == nil || q.n.kind != Norm || !strings.HasSuffix(q.n.name, "/FusedBatchNormV3") || len(q.in) == 0 || q.in[0] != i {
		return false
	}
	for j := i + 2; j < len(pl.pn); j++ {
		for _, x := range pl.pn[j].in {
			if x == i {
				return false
			}
		}
	}
	return true
}

// feedsNormGrad reports whether pnode i is an element-wise op on a batch norm's output alone,
// so that under XLA its gradient runs inside the batch norm gradient's fusions.
func (pl *planner) feedsNormGrad(i int) bool {
	p := &pl.pn[i]
	if p.n == nil || !p.n.ew || !p.bwdFused || len(p.in) != 1 || p.in[0] != i-1 {
		return false
	}
	q := pl.pn[i-1].n
	return q != nil && q.kind == Norm && strings.HasSuffix(q.name, "/FusedBatchNormV3")
}

// xlaMaxPoolGradBytes is what a max pool's gradient moves under XLA on a GPU. The gradient is
// a select_and_scatter (JAX's transpose of reduce_window max, tf2xla's MaxPoolGrad), which
// XLA's SelectAndScatterExpander (xla/service/select_and_scatter_expander.cc) rewrites into
// a window reduction and a scatter: a variadic reduce-window reads the pool's input x and
// writes, per output element, the maximum and its position as one int32 index per dimension
// of x; then a scatter reads dy and those indices and adds into the input-shaped gradient (a
// zero tensor it updates in place, which the forward pool's op writes: see plan.go). Two
// kernels. Keras's VGG16 step on the H200 has both at each of its five pools
// (testdata/h200/keras/vgg16.buffer-assignment.txt.gz: loop_reduce_window_fusion{0..4} of
// one float32 and four s32 tensors of the pool's output shape, input_scatter_fusion of its
// input's); ResNet-50's trace times them (testdata/h200/keras/trace/
// resnet50_float32_b128.kernels.csv: loop_reduce_window_fusion_1, input_scatter_fusion).
func (pl *planner) xlaMaxPoolGradBytes(p *pnode) float64 {
	x := &pl.pn[p.in[0]]
	xb := float64(x.elems * pl.B * x.dt.Size())
	dy := float64(p.elems * pl.B * p.dt.Size())
	// The maximum comes out in float32 at every precision (resnet50_mixed_bfloat16_b64's
	// loop_reduce_window_fusion{0} is f32 beside a bf16 input, testdata/h200/keras/xla).
	ymax := float64(p.elems * pl.B * Float32.Size())
	idx := float64(int64(len(x.shape)) * p.elems * pl.B * Int32.Size())
	argmax := xb + ymax + idx // reads x; writes the maximum and its indices
	scatter := dy + idx + xb  // reads dy and the indices; writes dx
	return argmax + scatter
}

// l2Decayed returns the trainable variables with a gradient that PlanOptions.L2Decay
// penalizes, and their elements: every one outside batch norm. NVIDIA's ConvNets model/resnet.py
// (ResnetModel.__call__) filters tf.trainable_variables() with loss_filter_fn, which drops the
// names holding "batchnorm", "batch_norm" or "batch_normalization" (batch norm's gamma and
// beta) and keeps the convolution kernels and the dense kernel and bias.
func (pl *planner) l2Decayed() (ws []int, elems int64) {
	if !pl.o.L2Decay {
		return nil, 0
	}
	seen := make([]bool, len(pl.g.weights))
	for i := range pl.g.nodes {
		n := &pl.g.nodes[i]
		if n.kind == Norm {
			continue
		}
		for _, w := range n.weights {
			if seen[w] || !pl.g.weights[w].trainable {
				continue
			}
			seen[w] = true
			ws = append(ws, w)
			elems += pl.g.weights[w].elems
		}
	}
	return ws, elems
}

// l2DecayForward emits the penalty of PlanOptions.L2Decay after the loss: ConvNets'
// l2_loss = tf.multiply(tf.add_n([tf.nn.l2_loss(v) for v in filtered_params]), weight_decay),
// then total_loss = tf.add(cross_entropy, l2_loss) (model/resnet.py). Each tf.nn.l2_loss reads
// its float32 variable once (sum(v ** 2) / 2, L2Loss's kernel or, under XLA, a reduce fusion
// of its own: the variables' shapes differ, so no two reductions share a fusion), then AddN,
// Mul and Add join the scalars (one fusion under XLA). The variables are float32 and the
// penalty stays so under the mixed precision graph rewrite (L2Loss is on its deny list,
// auto_mixed_precision_lists.h), so tf.cast(v, tf.float32) is the variable itself.
func (pl *planner) l2DecayForward() {
	ws, elems := pl.l2Decayed()
	if len(ws) == 0 {
		return
	}
	k := len(ws) + 3
	if pl.o.XLA {
		k = len(ws) + 1
	}
	pl.emit(Op{Name: "l2_loss", Phase: Forward, Kind: Reduction, DType: Float32,
		FLOPs: 2 * float64(elems), Bytes: 4 * float64(elems), Kernels: k})
}

// l2DecayGrad emits the penalty's gradients: TF's _L2LossGrad is op.inputs[0] * grad, a Mul
// that reads the variable and writes a float32 tensor of its shape (8 bytes per element), and
// since the variable now has two consumers, the model's read and the penalty, gradients.py
// adds the two gradients with an AddN (12 bytes per element). XLA fuses each variable's Mul
// into its AddN (one kernel reading the variable and the model's gradient, writing the sum).
func (pl *planner) l2DecayGrad() {
	ws, _ := pl.l2Decayed()
	for _, w := range ws {
		if pl.wgrad[w] < 0 {
			continue
		}
		wt := &pl.g.weights[w]
		e := float64(wt.elems)
		if pl.o.XLA {
			pl.emit(Op{Name: wt.name + "/l2_loss/grad", Phase: Backward, Kind: Elementwise, DType: Float32,
				FLOPs: 2 * e, Bytes: 12 * e, Kernels: 1})
			continue
		}
		pl.emit(Op{Name: wt.name + "/l2_loss/grad", Phase: Backward, Kind: Elementwise, DType: Float32,
			FLOPs: e, Bytes: 8 * e, Kernels: 1})
		pl.emit(Op{Name: wt.name + "/grad/AddN", Phase: Backward, Kind: Elementwise, DType: Float32,
			FLOPs: e, Bytes: 12 * e, Kernels: 1})
	}
}
