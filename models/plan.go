package models

import (
	"fmt"
	"strings"
)

// The planner turns the node graph into one step's op list for a given batch, precision,
// XLA setting and optimizer. It is linear in the number of nodes.

// cuDNN scratch memory is capped by TF at 4 GiB per convolution
// (tensorflow/core/util/autotune_util / conv_ops_gpu.cc GetDnnWorkspaceLimit: default
// TF_CUDNN_WORKSPACE_LIMIT_IN_MB = 4096).
const workspaceLimit = 4 << 30

// redzoneBytes is one guard band of se::RedzoneAllocator (kDefaultRedzoneSize = 1 << 23,
// tensorflow/stream_executor/gpu/redzone_allocator.h: "8MiB per side, 16MiB total"); its
// requests are rounded up to kRhsRedzoneAlign = 4 bytes.
const redzoneBytes = 8 << 20

// autotuneScratch is the first-run profiling of a convolution whose kernel writes a buffer of
// wrapped bytes (the output forward, the input gradient backward) and whose chosen algorithm
// takes steady bytes of workspace. The candidates priced are the chosen algorithm's workspace
// and the explicit-GEMM algorithm's (CUDNN_CONVOLUTION_*_ALGO_GEMM: the column matrix of the
// input, batch x output pixels x input channels x filter taps, cuDNN API reference), the
// largest request among the algorithms cuDNN lists for a convolution with a filter larger
// than 1x1; a request above the 4 GiB limit is refused (Workspace holds -1 for it).
func autotuneScratch(dir string, gm GEMMShape, dt DType, wrapped, steady int64) *AutotuneScratch {
	if gm.M == 0 {
		return nil
	}
	req := func(b int64) int64 {
		if b > workspaceLimit {
			return -1
		}
		return (b+3)/4*4 + 2*redzoneBytes
	}
	groups := max(gm.Batch, 1)
	col := gm.M * gm.K * groups * dt.Size()
	return &AutotuneScratch{
		Key:       fmt.Sprintf("%s %v %dx%d/%d M%d N%d K%d G%d", dir, dt, gm.FilterH, gm.FilterW, gm.Stride, gm.M, gm.N, gm.K, gm.Batch),
		Wrap:      req(wrapped),
		Workspace: []int64{req(steady), req(col)},
	}
}

type pnode struct {
	n        *node // nil for casts and the loss
	name     string
	in       []int
	elems    int64
	dt       DType
	isCast   bool
	isLoss   bool
	needGrad bool
	fused    bool // XLA or grappler's remapper: fused into the previous pnode's op
	// bwdFused: the gradient runs inside the previous op's gradient kernel (XLA's fusions;
	// the remapper's FusedBatchNormGradEx takes the ReluGrad into the batch norm gradient).
	bwdFused bool
	shape    []int64 // output shape with the batch first (nil for the loss)
	group    int
	buf      int // output buffer, -1 for the loss
}

type buffer struct {
	name    string
	bytes   int64
	dt      DType
	role    Role
	lastFwd int // last pnode reading it in forward
	saver   int // earliest pnode whose gradient reads it; -1: none
	// reader is saver as TF's gradients read the buffer, before XLA's savers (xlaSavers)
	// change what is kept; a gradient op's bytes count what it reads either way.
	reader   int
	material bool
	tensor   int // index in Plan.Tensors once allocated, -1 before
	root     int // producing pnode
	shape    []int64
}

type planner struct {
	g      *graph
	o      PlanOptions
	B      int64
	mixed  bool
	half   DType
	opt    OptimizerSpec
	p      *Plan
	pn     []pnode
	bufs   []buffer
	ref    []int // refcount per tensor
	labels int
	keep   [][]int // per pnode: tensors its gradient frees (cast weights, masks)
	grad   []int   // per pnode: tensor holding the gradient of its output, -1 none yet
	wgrad  []int   // per weight: its float32 gradient tensor
	pf     []int   // frees waiting for the next emitted op
	live   int64
}

// Plan returns one training step for one replica, built at the first call for these options
// (defaults filled in) and shared after: the Plan must not be modified.
func (m *Model) Plan(o PlanOptions) (*Plan, error) {
	if o.Batch <= 0 {
		return nil, fmt.Errorf("plan %s: batch %d: must be positive", m.Name, o.Batch)
	}
	if o.Precision == "" {
		o.Precision = PrecisionFloat32
	}
	if opt, err := LookupOptimizer(o.Optimizer); err == nil {
		o.Optimizer = opt.Name
	}
	if m.plans == nil {
		return m.plan(o)
	}
	return m.plans.get(m, o, func() (*Plan, error) { return m.plan(o) })
}

// plan builds the step for o.
func (m *Model) plan(o PlanOptions) (*Plan, error) {
	pl := &planner{g: m.g, o: o, B: int64(o.Batch)}
	switch o.Precision {
	case PrecisionFloat32:
		pl.half = Float32
	case MixedFloat16:
		pl.mixed, pl.half = true, Float16
	case MixedBFloat16:
		pl.mixed, pl.half = true, BFloat16
	default:
		return nil, fmt.Errorf("plan %s: unknown precision %q (float32, mixed_float16, mixed_bfloat16)", m.Name, o.Precision)
	}
	opt, err := LookupOptimizer(o.Optimizer)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", m.Name, err)
	}
	if o.ResourceVariables {
		opt = opt.WithResourceVariables()
	}
	pl.opt = opt
	o.Optimizer = opt.Name
	nops, ntensors := m.plans.hint()
	pl.p = &Plan{Options: o, Ops: make([]Op, 0, nops), Tensors: make([]Tensor, 0, ntensors)}
	pl.ref = make([]int, 0, ntensors)
	pl.expand()
	pl.buffers()
	pl.weights()
	pl.forward()
	pl.l2DecayForward()
	pl.backward()
	pl.optimizer()
	if o.XLA {
		pl.markRecompute()
	}
	m.plans.sized(pl.p)
	return pl.p, nil
}

// markRecompute sets Tensor.Recompute on the kept forward outputs of cheap fusions, in forward
// order, skipping any whose fusion reads a value already marked (a chain is recomputed one
// instruction at a time from values that stay live; the residual add of a ResNet block reads
// the block before's output, so at most every other block output is dropped).
func (pl *planner) markRecompute() {
	marked := make([]bool, len(pl.bufs))
	for i := range pl.pn {
		p := &pl.pn[i]
		if p.n == nil || p.n.input || p.isLoss || p.buf < 0 || (p.n != nil && p.n.alias) {
			continue
		}
		b := &pl.bufs[p.buf]
		if b.root != i || !b.material || b.saver < 0 || b.tensor < 0 {
			continue
		}
		// The fusion's members: this op and the fused ops before it in its group.
		ok := true
		for j := i; j >= 0 && pl.pn[j].group == p.group; j-- {
			q := &pl.pn[j]
			if !q.isCast && (q.n == nil || !(q.n.ew || q.n.kind == Norm)) {
				ok = false
				break
			}
			for _, x := range q.in {
				if pl.pn[x].group != p.group && marked[pl.pn[x].buf] {
					ok = false
				}
			}
		}
		if ok {
			marked[p.buf] = true
			pl.p.Tensors[b.tensor].Recompute = true
		}
	}
}

// expand lists the ops in forward order with their dtypes, inserting the casts TF runs where a
// float16 op reads a float32 tensor or the reverse (Keras autocasts a layer's floating inputs
// to its compute dtype: keras/src/layers/layer.py __call__ / _maybe_cast_inputs).
func (pl *planner) expand() {
	g := pl.g
	pl.pn = make([]pnode, 0, len(g.nodes)+len(g.nodes)/8+4)
	at := make([]int, len(g.nodes))
	type ck struct {
		src int
		dt  DType
	}
	casts := map[ck]int{}
	isOut := make([]bool, len(g.nodes))
	for _, o := range g.outputs {
		isOut[o] = true
	}
	castTo := func(src int, dt DType) int {
		s := pl.pn[src].dt
		if s == dt || s == Int32 {
			return src
		}
		k := ck{src, dt}
		if c, ok := casts[k]; ok {
			return c
		}
		pl.pn = append(pl.pn, pnode{name: pl.pn[src].name + "/Cast", in: []int{src}, elems: pl.pn[src].elems, dt: dt, isCast: true, shape: pl.pn[src].shape})
		casts[k] = len(pl.pn) - 1
		return len(pl.pn) - 1
	}
	var rewrite []bool
	if pl.mixed && pl.o.GraphRewriteAMP {
		rewrite = graphRewriteHalf(g)
	}
	for i := range g.nodes {
		n := &g.nodes[i]
		dt := pl.half
		switch {
		case n.input && n.intOut:
			dt = Int32
		case n.input, n.f32:
			dt = Float32
		case rewrite != nil:
			if !rewrite[i] {
				dt = Float32
			}
		case pl.mixed && isOut[i] && n.kind == Reduction:
			// The final softmax in float32, as the Keras mixed precision guide has users do
			// (Activation("softmax", dtype="float32")) for numeric stability.
			dt = Float32
		}
		if n.alias && len(n.in) > 0 {
			dt = pl.pn[at[n.in[0]]].dt
		}
		in := make([]int, len(n.in))
		for j, x := range n.in {
			src := at[x]
			if n.kind == Embedding || n.noGradIn&(1<<uint(j)) != 0 || n.alias {
				in[j] = src
				continue
			}
			in[j] = castTo(src, dt)
		}
		pl.pn = append(pl.pn, pnode{n: n, name: n.name, in: in, elems: n.elems, dt: dt, shape: pl.batched(n.shape)})
		at[i] = len(pl.pn) - 1
	}
	// The loss reads the outputs in float32 (Keras losses cast y_pred to float32:
	// keras/src/losses/loss.py squeeze_or_expand_to_same_rank / ops.convert_to_tensor).
	in := make([]int, len(g.outputs))
	var e int64
	for j, o := range g.outputs {
		in[j] = castTo(at[o], Float32)
		e += pl.pn[in[j]].elems
	}
	pl.pn = append(pl.pn, pnode{name: "loss", in: in, elems: e, dt: Float32, isLoss: true})

	// Which ops need a gradient: those with a trainable variable and everything downstream.
	for i := range pl.pn {
		p := &pl.pn[i]
		if p.n != nil {
			for _, w := range p.n.weights {
				if g.weights[w].trainable {
					p.needGrad = true
				}
			}
		}
		for _, x := range p.in {
			if pl.pn[x].needGrad {
				p.needGrad = true
			}
		}
	}
	pl.fuseXLA()
	if !pl.o.XLA {
		pl.remap()
	}
}

// remap applies the fusions of grappler's remapper that TF runs on GPU without XLA
// (tensorflow/core/grappler/optimizers/remapper.cc; it skips them under XLA auto-clustering,
// where XLA fuses itself):
//   - _FusedConv2D: Conv2D + BiasAdd + Relu, when the filter is larger than 1x1
//     (IsGpuCompatible for ContractionWithBiasAddAndActivation: 1x1 convolutions are left
//     alone, "significantly slower in large scale benchmarks"), the convolution is float32
//     (IsGpuCompatibleDataType: a Conv2D on GPU fuses for DT_FLOAT only, in TF 1.15, 2.x and
//     NVIDIA's TF 1.15 builds alike, so a half-precision Conv2D keeps its BiasAdd and Relu
//     kernels) and each intermediate has one consumer. cuDNN's
//     cudnnConvolutionBiasActivationForward writes the activation directly; the backward pass
//     keeps its ReluGrad and BiasAddGrad kernels.
//   - _FusedBatchNormEx: FusedBatchNormV3 + Relu or FusedBatchNormV3 + Add + Relu in training,
//     only for float16 NHWC with channels a multiple of 4 and
//     TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT set (FindFusedBatchNormEx); the gradient
//     fuses ReluGrad into the batch norm gradient (FindFusedBatchNormGradEx).
//
// MatMul + BiasAdd (+ activation) is fused on GPU only with cuBLASLt (TF_USE_CUBLASLT, off by
// default), so dense layers keep their BiasAdd.
func (pl *planner) remap() {
	consumers := make([]int, len(pl.pn))
	for i := range pl.pn {
		for _, x := range pl.pn[i].in {
			consumers[x]++
		}
	}
	single := func(i int) bool { return consumers[i] == 1 && pl.pn[i].n != nil }
	isRelu := func(p *pnode) bool {
		return p.n != nil && p.n.kind == Elementwise && strings.HasSuffix(p.n.name, "/relu") && len(p.in) == 1
	}
	isBias := func(i int) bool {
		p := &pl.pn[i]
		return p.n != nil && strings.HasSuffix(p.n.name, "/BiasAdd") && single(i)
	}
	isBN := func(i int) bool {
		p := &pl.pn[i]
		return p.n != nil && p.n.kind == Norm && strings.HasSuffix(p.n.name, "/FusedBatchNormV3") && single(i) &&
			pl.o.BatchNormSpatialPersistent && p.dt == Float16 && len(p.shape) == 4 && p.shape[3]%4 == 0
	}
	fuse := func(i int, bwd bool) {
		p := &pl.pn[i]
		p.fused, p.bwdFused, p.group = true, bwd, pl.pn[i-1].group
	}
	for i := 2; i < len(pl.pn); i++ {
		p := &pl.pn[i]
		if !isRelu(p) || p.in[0] != i-1 {
			continue
		}
		prev := &pl.pn[i-1]
		switch {
		case isBias(i-1) && prev.in[0] == i-2 && single(i-2):
			c := pl.pn[i-2].n
			if c.kind == Conv && pl.pn[i-2].dt == Float32 && c.gemm.FilterH*c.gemm.FilterW > 1 && c.gemm.Batch == 1 && strings.HasSuffix(c.name, "/Conv") {
				fuse(i-1, false)
				fuse(i, false)
			}
		case isBN(i - 1):
			fuse(i, true)
		case prev.n != nil && prev.n.bwdShareDy && len(prev.in) == 2 && single(i-1):
			// Relu(Add(FusedBatchNormV3(x), side)): the batch norm must be the Add's input just
			// before it.
			for _, x := range prev.in {
				if x == i-2 && isBN(i-2) {
					fuse(i-1, true)
					fuse(i, true)
				}
			}
		}
	}
}

func (pl *planner) needDx(p *pnode, j int) bool {
	if p.n != nil && p.n.noGradIn&(1<<uint(j)) != 0 {
		return false
	}
	return pl.pn[p.in[j]].needGrad && pl.pn[p.in[j]].dt != Int32
}

// buffers assigns every op output a buffer and finds how long each lives.
func (pl *planner) buffers() {
	pl.bufs = make([]buffer, 0, len(pl.pn))
	for i := range pl.pn {
		p := &pl.pn[i]
		switch {
		case p.isLoss:
			p.buf = -1
			continue
		case p.n != nil && p.n.alias:
			p.buf = pl.pn[p.in[0]].buf
			continue
		}
		role := Activation
		if p.n != nil && p.n.input {
			role = Input
		} else if p.isCast {
			role = Cast
		}
		pl.bufs = append(pl.bufs, buffer{name: p.name, bytes: p.elems * pl.B * p.dt.Size(), dt: p.dt, role: role,
			lastFwd: i, saver: -1, tensor: -1, root: i, material: true, shape: p.shape})
		p.buf = len(pl.bufs) - 1
	}
	for i := range pl.pn {
		p := &pl.pn[i]
		for j, x := range p.in {
			b := &pl.bufs[pl.pn[x].buf]
			if i > b.lastFwd {
				b.lastFwd = i
			}
			if p.needGrad && (p.isLoss || (p.n != nil && p.n.saveIn&(1<<uint(j)) != 0)) {
				if b.saver < 0 || i < b.saver {
					b.saver = i
				}
			}
		}
		if p.needGrad && p.n != nil && p.n.saveOut {
			b := &pl.bufs[p.buf]
			if b.saver < 0 || i < b.saver {
				b.saver = i
			}
		}
	}
	for b := range pl.bufs {
		pl.bufs[b].reader = pl.bufs[b].saver
	}
	if pl.o.XLA {
		pl.xlaSavers()
	}
	if !pl.o.XLA && !pl.anyFused() {
		return
	}
	// Under XLA (and inside a remapper fusion) an intermediate that only feeds its own fusion
	// and is not kept for backward never reaches memory.
	readers := make([]bool, len(pl.bufs)) // read outside the producer's fusion
	for i := range pl.pn {
		p := &pl.pn[i]
		for _, x := range p.in {
			b := pl.pn[x].buf
			if p.n != nil && p.n.alias || p.isLoss || pl.pn[pl.bufs[b].root].group != p.group {
				readers[b] = true
			}
		}
	}
	for b := range pl.bufs {
		r := &pl.pn[pl.bufs[b].root]
		if r.n != nil && r.n.input {
			continue
		}
		if !readers[b] && pl.bufs[b].saver < 0 && pl.bufs[b].lastFwd != pl.bufs[b].root {
			pl.bufs[b].material = false
		}
	}
}

func (pl *planner) anyFused() bool {
	for i := range pl.pn {
		if pl.pn[i].fused {
			return true
		}
	}
	return false
}

func (pl *planner) tensor(name string, bytes int64, role Role, dt DType, shape []int64) int {
	pl.p.Tensors = append(pl.p.Tensors, Tensor{Name: name, Bytes: bytes, Role: role, DType: dt, Shape: shape})
	pl.ref = append(pl.ref, 1)
	return len(pl.p.Tensors) - 1
}

// weights adds the variables (float32, alive for the run) and the optimizer slots.
func (pl *planner) weights() {
	g := pl.g
	pl.p.Persistent = make([]int, 0, len(g.weights))
	for _, w := range g.weights {
		pl.p.Persistent = append(pl.p.Persistent, pl.tensor(w.name, 4*w.elems, Weight, Float32, dims(w.shape)))
	}
	for s := 0; s < pl.opt.Slots; s++ {
		for _, w := range g.weights {
			if w.trainable {
				pl.p.Slots = append(pl.p.Slots, pl.tensor(fmt.Sprintf("%s/slot%d", w.name, s), 4*w.elems, Slot, Float32, dims(w.shape)))
			}
		}
	}
}

func (pl *planner) emit(op Op) {
	for _, t := range op.Alloc {
		pl.live += pl.p.Tensors[t].Bytes
	}
	op.Free = append(op.Free, pl.pf...)
	for _, t := range op.Free {
		pl.live -= pl.p.Tensors[t].Bytes
	}
	pl.pf = pl.pf[:0]
	pl.p.Ops = append(pl.p.Ops, op)
}

// flush attaches waiting frees to the last op.
func (pl *planner) flush() {
	if len(pl.pf) == 0 || len(pl.p.Ops) == 0 {
		return
	}
	last := &pl.p.Ops[len(pl.p.Ops)-1]
	for _, t := range pl.pf {
		pl.live -= pl.p.Tensors[t].Bytes
	}
	last.Free = append(last.Free, pl.pf...)
	pl.pf = pl.pf[:0]
}

func (pl *planner) decref(t int) {
	if t < 0 {
		return
	}
	pl.ref[t]--
	if pl.ref[t] == 0 {
		pl.pf = append(pl.pf, t)
	}
}

// bufTensor returns the tensor of a buffer, creating it (the caller allocates it).
func (pl *planner) bufTensor(b int) (int, bool) {
	bf := &pl.bufs[b]
	if bf.tensor >= 0 {
		return bf.tensor, false
	}
	bf.tensor = pl.tensor(bf.name, bf.bytes, bf.role, bf.dt, bf.shape)
	return bf.tensor, true
}

func (pl *planner) bytesOf(b int) float64 {
	if !pl.bufs[b].material {
		return 0
	}
	return float64(pl.bufs[b].bytes)
}

// forward emits the input copy, every forward op and the loss.
func (pl *planner) forward() {
	pl.inputCopy()
	pl.keep = make([][]int, len(pl.pn))
	for i := range pl.pn {
		p := &pl.pn[i]
		if p.n != nil && p.n.input {
			continue
		}
		s := &fwdStep{i: i, p: p, op: Op{Phase: Forward, DType: p.dt}}
		switch {
		case p.isLoss:
			// Cross-entropy: log, multiply, reduce (about 4 FLOPs per output element).
			s.op.Name, s.op.Kind, s.op.Kernels = "loss", Reduction, 2
			s.op.FLOPs = 4 * float64(p.elems*pl.B)
			if pl.o.Precision == MixedFloat16 {
				// LossScaleOptimizer.scale_loss: loss * loss_scale.
				s.op.Kernels++
			}
		case p.isCast:
			s.op.Name, s.op.Kind, s.op.Kernels = p.name, KindCast, 1
			s.op.FLOPs = float64(p.elems * pl.B)
		default:
			pl.layerOp(s)
		}
		pl.finishForward(s)
	}
	pl.p.SavedBytes = pl.live
}

// fwdStep is one forward op while forward builds it: the pnode it runs (index i), the op,
// and the tensors freed as soon as the op is done.
type fwdStep struct {
	i     int
	p     *pnode
	op    Op
	after []int
}

// inputCopy emits the input batch: tf.data hands the step a batch already on the GPU (a
// host-to-device copy per tensor: features and labels).
func (pl *planner) inputCopy() {
	g := pl.g
	in := Op{Name: "input", Phase: Forward, Kind: HostToDevice, DType: Float32}
	var labels int64
	for _, o := range g.outputs {
		s := g.nodes[o].shape
		rows := int64(1)
		if len(s) > 1 {
			rows = prod(s[:len(s)-1])
		}
		labels += rows
	}
	for i := range pl.pn {
		if p := &pl.pn[i]; p.n != nil && p.n.input {
			t, _ := pl.bufTensor(p.buf)
			in.Alloc = append(in.Alloc, t)
			in.Bytes += float64(pl.bufs[p.buf].bytes)
			in.Kernels++
		}
	}
	lshape := []int64{pl.B, labels}
	if labels == 1 {
		lshape = lshape[:1]
	}
	lt := pl.tensor("labels", 4*labels*pl.B, Input, Int32, lshape)
	in.Alloc = append(in.Alloc, lt)
	in.Bytes += float64(4 * labels * pl.B)
	in.Kernels++
	pl.emit(in)
	pl.labels = lt
}

// layerOp fills in the forward op of a layer's node: the copies of its weights it reads, its
// kernels, FLOPs and bytes, and the tensors it writes beside its output.
func (pl *planner) layerOp(s *fwdStep) {
	n := s.p.n
	if pl.mixed && !(pl.o.XLA && n.ew) {
		pl.castWeights(s)
	} else if pl.o.XLA && n.kind == Conv && s.p.needGrad {
		pl.xlaFilterTranspose(s)
	}
	op := &s.op
	op.Name, op.Kind, op.Kernels = n.name, n.kind, n.kF
	op.GEMM = pl.gemm(n)
	op.FLOPs = n.flops * float64(pl.B)
	if n.alias {
		op.Kernels = 0
	}
	if pl.o.XLA && n.kind == Norm {
		// XLA lowers batch norm to a reduction fusion and an element-wise fusion, the
		// moving-average updates fused into them.
		op.Kernels = 2
	}
	if pl.o.XLA && n.maskElems > 0 && n.kind == Elementwise {
		op.Kernels = 1
		if pl.o.XLAAutoCluster {
			pl.autoClusterRandom(s)
		}
	}
	for _, w := range n.weights {
		wt := &pl.g.weights[w]
		if pl.mixed && wt.cast && s.p.dt == pl.half {
			op.Bytes += float64(wt.elems * pl.half.Size())
		} else {
			op.Bytes += float64(4 * wt.elems)
		}
	}
	pl.savedForBackward(s)
	if pl.o.XLA && s.p.needGrad && n.kind == Pool && strings.HasSuffix(n.name, "/MaxPool") && !pl.xlaSubsampleScatter(s.i) {
		pl.xlaPoolZeros(s)
	}
	if t := pl.jaxCentered(s.p); t >= 0 {
		op.Alloc = append(op.Alloc, t)
		pl.keep[s.i] = append(pl.keep[s.i], t)
	}
	pl.workspaces(s)
}

// castWeights emits the cast copies of the weights the node reads through an
// AutoCastVariable (a mixed policy), as one op before the node's own.
func (pl *planner) castWeights(s *fwdStep) {
	n, p := s.p.n, s.p
	var c Op
	for _, w := range n.weights {
		wt := &pl.g.weights[w]
		if !wt.cast || p.dt != pl.half {
			continue
		}
		t := pl.tensor(wt.name+"/Cast", wt.elems*pl.half.Size(), Cast, pl.half, dims(wt.shape))
		c.Alloc = append(c.Alloc, t)
		c.Bytes += float64(wt.elems * (4 + pl.half.Size()))
		c.FLOPs += float64(wt.elems)
		c.Kernels++
		if wt.keep && pl.anyDx(p) && p.needGrad {
			pl.keep[s.i] = append(pl.keep[s.i], t)
		} else {
			s.after = append(s.after, t)
		}
	}
	if c.Kernels > 0 {
		if pl.o.XLA {
			c.Kernels = 1
		}
		c.Name, c.Phase, c.Kind, c.DType = n.name+"/weights/Cast", Forward, KindCast, pl.half
		pl.emit(c)
	}
}

// xlaFilterTranspose adds a convolution's transposed filters under XLA in float32.
// xlaFilterTransposeSuffix names the op of a convolution's filter transpose: XLA's layout
// assignment adds it, so it is no equation of the framework's step (XLACompileSeconds).
const xlaFilterTransposeSuffix = "/filter_transpose"

func (pl *planner) xlaFilterTranspose(s *fwdStep) {
	// XLA's layout assignment gives cuDNN the filter as OHWI (the dumps'
	// dim_labels b01f_o01i->b01f): a transposed copy of Keras's HWIO kernel, written
	// in forward and read again by the input gradient (the 13 to 94 "wrapped_transpose"
	// values of state live at the recorded float32 peaks). Under a mixed policy the
	// cast copy (castWeights) is that transposed copy.
	// The transpose is a kernel of its own, one per convolution and step, before the
	// convolution: the profiles' float32 "wrapped_transpose" fusions (testdata/h200/profiles:
	// 94 in InceptionV3's step, 53 in ResNet-50's, 13 in VGG16's, each f32[O,H,W,I] from the
	// HWIO variable; none in the bfloat16 ResNet-50, whose cast writes OHWI). It reads and
	// writes the filter once.
	var tr Op
	for _, w := range s.p.n.weights {
		wt := &pl.g.weights[w]
		t := pl.tensor(wt.name+"/transpose", 4*wt.elems, Cast, Float32, dims(wt.shape))
		pl.p.Tensors[t].Recompute = true // rematerialization transposes again (b400 under 20.97 GiB keeps 2 of 53)
		s.op.Alloc = append(s.op.Alloc, t)
		if pl.anyDx(s.p) {
			pl.keep[s.i] = append(pl.keep[s.i], t)
		} else {
			s.after = append(s.after, t)
		}
		if len(wt.shape) == 4 {
			tr.Bytes += float64(8 * wt.elems)
		}
	}
	if tr.Bytes > 0 {
		tr.Name, tr.Phase, tr.Kind, tr.DType, tr.Kernels = s.p.n.name+xlaFilterTransposeSuffix, Forward, Copy, Float32, 1
		pl.emit(tr)
	}
}

// autoClusterRandom emits the random tensor of a dropout that TF's auto-clustering leaves
// outside its XLA cluster, before the dropout's own op, which reads it.
func (pl *planner) autoClusterRandom(s *fwdStep) {
	n, p := s.p.n, s.p
	// tf.nn.dropout (nn_ops.py dropout_v2): random_uniform(noise_shape,
	// dtype=x.dtype), then keep_mask = random >= rate and x * scale *
	// cast(keep_mask). Auto-clustering leaves the RandomUniform kernel outside
	// (XLAAutoCluster): it writes the random tensor, the cluster reads it back.
	// TF1 builds the graph in float32, and the graph rewrite's lists do not
	// hold RandomUniform, so there it stays float32. Outside the clusters it is
	// TF's own RandomUniform kernel, the one TF runs without XLA (the Philox
	// generator of random_op_gpu.h): its elements bind it before its bytes
	// where a GPU's bandwidth per SM and clock is high (the PassRandom class,
	// tfunfused.go's tfDropout; hw.MemTFRandom), so it is priced as that class
	// and not as a stream of its output.
	dt := p.dt
	if pl.o.GraphRewriteAMP {
		dt = Float32
	}
	b := n.maskElems * pl.B * dt.Size()
	t := pl.tensor(n.name+"/random_uniform", b, Activation, dt, pl.perSample(n.maskElems, p.shape))
	ru := Op{Name: n.name + "/random_uniform", Phase: Forward, Kind: Elementwise, DType: dt,
		FLOPs: float64(n.maskElems * pl.B), Bytes: float64(b), Kernels: 1, OutsideXLA: true, Alloc: []int{t}}
	ru.ClassBytes[PassRandom] = float64(b)
	ru.ClassElems[PassRandom] = float64(n.maskElems * pl.B)
	pl.emit(ru)
	s.op.Bytes += float64(b)
	s.after = append(s.after, t)
}

// saved allocates a per-sample activation the op writes, kept for backward when it needs
// gradients and freed after the op otherwise.
func (pl *planner) saved(s *fwdStep, suffix string, elems int64) {
	p := s.p
	t := pl.tensor(p.n.name+suffix, elems*pl.B*p.dt.Size(), Activation, p.dt, pl.perSample(elems, p.shape))
	s.op.Alloc = append(s.op.Alloc, t)
	s.op.Bytes += float64(pl.p.Tensors[t].Bytes)
	if p.needGrad {
		pl.keep[s.i] = append(pl.keep[s.i], t)
	} else {
		s.after = append(s.after, t)
	}
}

// savedForBackward adds what the op writes beside its output for its gradient: a dropout's
// mask, a composite's intermediates, and the factors JAX's derivatives keep under XLA.
func (pl *planner) savedForBackward(s *fwdStep) {
	n, p := s.p.n, s.p
	if n.maskElems > 0 {
		pl.saved(s, "/mask", n.maskElems)
	}
	if n.composite > 0 && !pl.o.XLA {
		pl.saved(s, "/intermediates", n.composite)
	}
	if pl.o.XLA && pl.o.JAX && p.needGrad && strings.HasSuffix(n.name, "/gelu") {
		// keras.activations.gelu (approximate=False, Keras 3's default) on JAX is
		// x * erfc(-x / sqrt(2)) * 0.5 (keras/src/backend/jax/nn.py gelu, jax.nn.gelu),
		// and the product's JVP keeps both factors. XLA recomputes 0.5 * x but not
		// erfc, a rational approximation of some forty operations with selects
		// (xla/client/lib/math.cc ErfcImpl32): the forward fusion writes it as a
		// second output and backward reads it (ConvNeXtTiny's float32 step on the
		// H200: loop_multiply_select_fusion{0,1}, the GELU and its erfc factor, both
		// of the 4C-wide shape and both live at the peak,
		// testdata/h200/profiles/convnexttiny_float32_b128.buffer-assignment.txt.gz).
		pl.saved(s, "/erfc", p.elems)
		pl.p.Tensors[len(pl.p.Tensors)-1].Recompute = true
	}
	if pl.o.XLA && pl.o.JAX && p.needGrad && (p.dt == Float16 || p.dt == BFloat16) &&
		(strings.HasSuffix(n.name, "/silu") || strings.HasSuffix(n.name, "/swish")) {
		// Keras 3's silu on JAX is x * sigmoid(x) (jax.nn.silu), whose JVP keeps
		// sigmoid(x). In float32 XLA recomputes it in the backward fusions
		// (EfficientNetB0's recorded float32 step keeps no sigmoid,
		// testdata/h200/keras/xla); in float16 it keeps it: the half-precision
		// EfficientNetV2B0 step writes it beside every silu, as the second output of
		// the silu's fusion (loop_exponential_multiply_fusion{1}) or alone where the
		// silu itself goes to a squeeze-and-excite mean (loop_exponential_fusion),
		// testdata/h200/profiles/efficientnetv2b0_mixed_float16_b128.xplane.pb.gz (the
		// step's buffer assignment in its HloProto). Float16 and bfloat16 both run the
		// exponential in float32 on the GPU; only float16 was recorded.
		pl.saved(s, "/sigmoid", p.elems)
		pl.p.Tensors[len(pl.p.Tensors)-1].Recompute = true
	}
}

// xlaPoolZeros adds the zeros an XLA max-pool gradient scatters into, written in forward.
func (pl *planner) xlaPoolZeros(s *fwdStep) {
	// The max-pool gradient scatters into a zero tensor of the input's shape
	// (select_and_scatter, expanded on GPU to an argmax reduce-window and a
	// scatter that updates its operand in place); XLA materializes the zeros in
	// forward and keeps them to the gradient. Under JAX a ReLU of that shape
	// broadcasts the same zeros (its JVP's lax.full_like(g, 0)); CSE makes them one
	// value that the ReLU gradients read too, so the scatter gets a copy: two
	// tensors (VGG16: five pools, ten; ResNet-50's pool reads a padded tensor
	// no ReLU shares: one).
	x := &pl.pn[s.p.in[0]]
	// The zeros are written once (ResNet-50's trace: loop_broadcast_fusion of the
	// padded input's shape, testdata/h200/keras/trace/resnet50_float32_b128.kernels.csv;
	// VGG16: the second output of the ReLU's loop_broadcast_maximum_fusion) and the
	// scatter's copy is read and written once more (VGG16: copy.77-copy.81,
	// testdata/h200/keras/vgg16.buffer-assignment.txt.gz): a kernel either way,
	// the broadcast's own or the copy (the broadcast then rides in the ReLU's fusion).
	zb := float64(x.elems * pl.B * x.dt.Size())
	share := pl.jaxReluShape(x)
	s.op.Bytes += zb * float64(1+2*share)
	s.op.Kernels++
	for k := 0; k < 1+share; k++ {
		t := pl.tensor(s.p.n.name+"/grad/zeros", x.elems*pl.B*x.dt.Size(), Activation, x.dt, x.shape)
		pl.p.Tensors[t].Recompute = true // a broadcast: rematerialization drops it
		s.op.Alloc = append(s.op.Alloc, t)
		pl.keep[s.i] = append(pl.keep[s.i], t)
	}
}

// workspaces adds the scratch the op's library call takes and frees: cuBLAS's workspace under
// XLA, cuDNN's for a convolution.
func (pl *planner) workspaces(s *fwdStep) {
	n, p, op := s.p.n, s.p, &s.op
	if ws := pl.blasWorkspace(p); ws > 0 {
		t := pl.tensor(n.name+"/cublas_workspace", ws, Workspace, Int32, []int64{ws / 4})
		op.Alloc = append(op.Alloc, t)
		s.after = append(s.after, t)
	}
	if n.workspace {
		ws := min(pl.bufs[p.buf].bytes, workspaceLimit)
		t := pl.tensor(n.name+"/workspace", ws, Workspace, p.dt, []int64{ws})
		op.Alloc = append(op.Alloc, t)
		s.after = append(s.after, t)
		if !pl.o.XLA {
			op.Autotune = autotuneScratch("fwd", op.GEMM, p.dt, pl.bufs[p.buf].bytes, ws)
		}
	}
}

// finishForward adds the bytes the op reads and writes, frees what no later op needs, and
// emits the op, or folds it into its producer's op where it is fused.
func (pl *planner) finishForward(s *fwdStep) {
	p, op := s.p, &s.op
	for _, x := range p.in {
		if p.n == nil || !p.n.alias {
			op.Bytes += pl.bytesOf(pl.pn[x].buf)
			if pl.o.XLA && p.n != nil && p.n.kind == Norm {
				op.NormBytes += 2 * pl.bytesOf(pl.pn[x].buf)
			}
		}
	}
	if p.buf >= 0 && !(p.n != nil && p.n.alias) {
		if pl.bufs[p.buf].material {
			t, _ := pl.bufTensor(p.buf)
			op.Alloc = append(op.Alloc, t)
			op.Bytes += float64(pl.bufs[p.buf].bytes)
		}
	}
	if p.n != nil {
		op.Bytes += p.n.extraBytes * float64(pl.B)
	}
	if p.n != nil && p.n.tf != nil && !pl.o.XLA {
		// TF's kernels for a composite (tfunfused.go) move what the plan's tensors do not show.
		op.Bytes, op.Kernels, op.ClassBytes, op.ClassElems = tfPrice(p.n.tf.fwd, pl.B, p.dt)
	}
	// Frees: buffers whose last forward reader is this op and that backward does not need.
	for _, x := range p.in {
		pl.fwdRelease(pl.pn[x].buf, s.i)
	}
	if p.buf >= 0 {
		pl.fwdRelease(p.buf, s.i)
	}
	pl.pf = append(pl.pf, s.after...)
	if p.fused && len(pl.p.Ops) > 0 {
		pl.fuseForward(*op)
		return
	}
	pl.emit(*op)
}

// fuseForward folds a fused op into its producer's op: the last emitted one, behind the cast
// of this op's own weights (a BiasAdd's bias under a mixed policy) that was just emitted.
func (pl *planner) fuseForward(op Op) {
	j := len(pl.p.Ops) - 1
	for j > 0 && pl.p.Ops[j].Kind == KindCast && strings.HasSuffix(pl.p.Ops[j].Name, "/weights/Cast") {
		j--
	}
	last := &pl.p.Ops[j]
	last.FLOPs += op.FLOPs
	last.Bytes += op.Bytes
	if last.Kind == MatMul || last.Kind == Attention {
		last.EpilogueBytes += op.Bytes
	}
	for _, t := range op.Alloc {
		pl.live += pl.p.Tensors[t].Bytes
	}
	last.Alloc = append(last.Alloc, op.Alloc...)
	pl.flush()
}

// fwdRelease frees a buffer after op i when i is its last forward reader and no gradient
// needs it.
func (pl *planner) fwdRelease(b, i int) {
	bf := &pl.bufs[b]
	if bf.lastFwd != i || bf.saver >= 0 || bf.tensor < 0 || pl.ref[bf.tensor] <= 0 {
		return
	}
	for _, t := range pl.pf {
		if t == bf.tensor {
			return
		}
	}
	pl.decref(bf.tensor)
}

func (pl *planner) anyDx(p *pnode) bool {
	for j := range p.in {
		if pl.needDx(p, j) {
			return true
		}
	}
	return false
}

// gemm is n's matrix-multiply shape for this step's batch: the batch multiplies M (rows of a
// dense layer, output pixels of a convolution) or, for attention, the independent GEMMs (one
// per sample and head).
func (pl *planner) gemm(n *node) GEMMShape {
	gm := n.gemm
	if gm.M == 0 {
		return gm
	}
	if n.kind == Attention {
		gm.Batch *= pl.B
	} else {
		gm.M *= pl.B
	}
	return gm
}

// dims is a variable's shape as TF prints it.
func dims(s []int) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = int64(d)
	}
	return out
}

// batched is a per-sample shape with the batch in front.
func (pl *planner) batched(s []int) []int64 {
	return append([]int64{pl.B}, dims(s)...)
}

// perSample is the shape of a tensor of elems elements per sample saved beside an op of output
// shape out: out itself when the sizes agree (a dropout mask), else [batch, elems].
func (pl *planner) perSample(elems int64, out []int64) []int64 {
	if n := prod64(out); n == elems*pl.B {
		return out
	}
	return []int64{pl.B, elems}
}

func prod64(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}
