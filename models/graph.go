package models

import (
	"fmt"
	"math"
	"strings"
)

// A model is held as two views of the same thing: Keras layers (what model.summary() prints:
// names, classes, output shapes, parameter counts) and a graph of primitive nodes, one per TF
// op a layer runs in training (Conv2D, BiasAdd, FusedBatchNormV3, Relu, ...). The plan is built
// from the nodes.

// weight is one Keras variable.
type weight struct {
	name      string
	shape     []int
	elems     int64
	trainable bool
	// cast: under a mixed policy the layer reads the variable through an AutoCastVariable,
	// so every step casts it to the compute dtype (keras mixed_precision/autocast_variable.py).
	// Normalization parameters and embedding tables are read in float32.
	cast bool
	// keep: the cast copy is an input of the op's gradient (a kernel: dx = dy * W^T), so TF
	// keeps it until backward; a bias's cast copy is freed after the forward op.
	keep bool
}

// node is one primitive op of the forward pass.
type node struct {
	name  string
	kind  OpKind
	in    []int   // producer nodes
	shape []int   // output shape per sample (no batch dimension)
	elems int64   // output elements per sample
	flops float64 // forward FLOPs per sample
	// dxFLOPs/dwFLOPs: backward FLOPs per sample for the input gradients and the weight
	// gradients (a conv or matmul costs its forward FLOPs for each).
	dxFLOPs, dwFLOPs float64
	weights          []int
	saveIn           uint32 // bit i: input i is an input of the gradient op (TF keeps it)
	saveOut          bool   // the output is an input of the gradient op (Relu, Softmax, MaxPool)
	maskElems        int64  // elements per sample of an extra saved tensor (dropout mask, RNN reserve space)
	// composite: elements per sample of intermediates that TF's composite implementation of
	// the op keeps for backward (tf.nn.gelu's erf input and product operands; Keras
	// LayerNormalization's normalized tensor before scale and offset). Under XLA the chain
	// is one fusion and only the op's input is kept.
	composite  int64
	alias      bool   // the output is a view of input 0 (Reshape, Flatten): no buffer
	padSym     bool   // a zero padding with the same amount before and after on every axis
	ew         bool   // element-wise: XLA fuses it into its producer
	f32        bool   // computes in float32 even under a mixed policy
	intOut     bool   // int32 output (token ids)
	input      bool   // a model input (Keras InputLayer)
	workspace  bool   // a cuDNN convolution that takes scratch memory (kernel larger than 1x1)
	kF, kB     int    // kernel launches forward and backward (non-XLA)
	noGradIn   uint32 // bit i: input i receives no gradient (indices, shapes)
	bwdShareDy bool   // the gradient of every input is dy itself (Add): no kernel, no buffer
	// tf lists the kernels TF runs for the node without XLA when it is a composite of TF ops
	// (tfunfused.go); nil prices the node as one kernel of its kind.
	tf *tfSeq
	// extraBytes: memory traffic per sample of the forward kernel beyond its input and output
	// tensors (a custom layer's bytes_per_sample).
	extraBytes float64
	// gemm is the op's matrix-multiply shape per sample (M per sample; the plan multiplies it
	// by the batch), zero for non-matrix ops.
	gemm GEMMShape
}

// Layer is one Keras layer as model.summary() prints it.
type Layer struct {
	Name            string
	Class           string
	Inputs          []string
	OutputShape     []int // without the batch dimension
	Params          int64
	TrainableParams int64
	FLOPs           float64 // forward FLOPs per sample of the layer's ops
	// BackwardFLOPs per sample when every gradient is needed (input and weights).
	BackwardFLOPs float64
	// Kernel launches of the layer's ops without XLA, forward and backward.
	ForwardKernels, BackwardKernels int
}

// graph is the model under construction.
type graph struct {
	name    string
	layers  []Layer
	nodes   []node
	weights []weight
	inputs  []int // input nodes
	outputs []int // output nodes
	// f32Out: the output layers compute in float32 under a mixed policy (the Keras mixed
	// precision guide: the final softmax gets dtype="float32").
	f32Out bool
	// records of the Keras layers for the JSON export: class, config, inbound layer names.
	records []record
	lnode   []int // node producing each layer's output
	byName  map[string]int
	weight  map[string]int // index in weights by full name, so a shared layer finds its own
	auto    map[string]int // Keras auto-name counters
	pending string         // name of the layer being applied
	specs   *LayerSpecs    // the sidecar's custom layer descriptions (ImportOptions.Layers)
}

type record struct {
	class   string
	name    string
	config  map[string]any
	inbound []string
	in      []int // input nodes
	out     int   // output node
}

func newGraph(name string) *graph {
	return &graph{name: name, byName: map[string]int{}, weight: map[string]int{}, auto: map[string]int{}}
}

// autoName returns Keras's default layer name for a class: conv2d, conv2d_1, ...
// (keras backend.unique_object_name via to_snake_case of the class name).
func (g *graph) autoName(class string) string {
	base := snake(class)
	n := g.auto[base]
	g.auto[base] = n + 1
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s_%d", base, n)
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 && !(s[i-1] >= 'A' && s[i-1] <= 'Z') {
				b.WriteByte('_')
			} else if i > 0 && i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z' && s[i-1] >= 'A' && s[i-1] <= 'Z' {
				b.WriteByte('_')
			}
			b.WriteRune(r - 'A' + 'a')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func prod(s []int) int64 {
	n := int64(1)
	for _, d := range s {
		n *= int64(d)
	}
	return n
}

func clone(s []int) []int { return append([]int(nil), s...) }

// addWeight appends a variable and returns its index.
func (g *graph) addWeight(layer, name string, shape []int, trainable, cast, keep bool) int {
	full := layer + "/" + name
	g.weights = append(g.weights, weight{name: full, shape: clone(shape), elems: prod(shape),
		trainable: trainable, cast: cast, keep: keep})
	if _, dup := g.weight[full]; !dup {
		g.weight[full] = len(g.weights) - 1 // the first of a name, as w's scan found it
	}
	return len(g.weights) - 1
}

// addNode appends a node, fills elems, and returns its index.
func (g *graph) addNode(n node) int {
	n.elems = prod(n.shape)
	if n.kF == 0 && !n.alias {
		n.kF = 1
	}
	if n.kB == 0 && !n.alias && !n.bwdShareDy {
		n.kB = 1
	}
	g.nodes = append(g.nodes, n)
	return len(g.nodes) - 1
}

func (g *graph) shape(x int) []int { return g.nodes[x].shape }

// finish computes the model's summary figures.
func (g *graph) finish() (*Model, error) {
	if len(g.outputs) == 0 {
		return nil, fmt.Errorf("model %q has no outputs", g.name)
	}
	m := &Model{Name: g.name, g: g, Layers: g.layers, plans: &planCache{}}
	for _, w := range g.weights {
		m.Params += w.elems
		if w.trainable {
			m.TrainableParams += w.elems
		}
	}
	for _, n := range g.nodes {
		switch n.kind {
		case Conv, MatMul, Attention, Recurrent:
			m.FLOPsPerSample += n.flops
		default:
			m.OtherFLOPsPerSample += n.flops
		}
		if n.kind == Norm && strings.HasSuffix(n.name, "/FusedBatchNormV3") {
			m.HasBatchNorm = true
		}
	}
	for _, n := range g.nodes {
		if n.input {
			m.InputShapes = append(m.InputShapes, clone(n.shape))
		}
	}
	for _, o := range g.outputs {
		m.OutputShapes = append(m.OutputShapes, clone(g.nodes[o].shape))
	}
	p, err := m.Plan(PlanOptions{Batch: 1, Precision: PrecisionFloat32, Optimizer: "sgd"})
	if err != nil {
		return nil, err
	}
	m.ActivationBytesPerSample = float64(p.SavedBytes)
	return m, nil
}

// convOut is the output length of a convolution or pooling window
// (keras/src/ops/operation_utils.py compute_conv_output_shape).
func convOut(n, k, stride, dilation int, padding string) int {
	ke := (k-1)*dilation + 1
	if padding == "same" {
		return (n + stride - 1) / stride
	}
	if n < ke {
		return 0
	}
	return (n-ke)/stride + 1
}

// activation kinds: FLOPs per element forward, and whether the gradient needs the output
// (TF's registered gradients: _ReluGrad/_SigmoidGrad/_TanhGrad/_SoftmaxGrad/_EluGrad use
// op.outputs[0]; gelu, swish/silu, softplus, selu, hard activations differentiate from the input).
type actInfo struct {
	flops     float64
	saveOut   bool
	kernels   int
	composite int // extra tensors of the input's size a composite TF implementation keeps
}

var activations = map[string]actInfo{
	"linear":       {0, false, 0, 0},
	"relu":         {1, true, 1, 0},
	"relu6":        {2, true, 1, 0},
	"elu":          {4, true, 1, 0},
	"selu":         {5, false, 1, 0},
	"sigmoid":      {4, true, 1, 0},
	"hard_sigmoid": {3, false, 1, 0},
	"tanh":         {4, true, 1, 0},
	"softmax":      {5, true, 1, 0},
	"log_softmax":  {5, true, 1, 0},
	// tf.nn.gelu (nn_ops.py): 0.5 * x * (1 + erf(x / sqrt(2))) as separate ops; the gradients
	// of Erf and of the final Mul keep x/sqrt(2), 0.5*x and 1+erf: three tensors where x
	// alone would do (counted here as x plus two composite intermediates).
	"gelu":           {8, false, 1, 2},
	"swish":          {5, false, 1, 0},
	"silu":           {5, false, 1, 0},
	"hard_swish":     {4, false, 1, 0},
	"hard_silu":      {4, false, 1, 0},
	"softplus":       {4, false, 1, 0},
	"softsign":       {3, false, 1, 0},
	"exponential":    {2, true, 1, 0},
	"mish":           {8, false, 1, 0},
	"leaky_relu":     {2, false, 1, 0},
	"relu_max_value": {2, true, 1, 0},
}

// act appends an activation node; "linear" returns x unchanged.
func (g *graph) act(name, fn string, x int) (int, error) {
	if fn == "" || fn == "linear" {
		return x, nil
	}
	a, ok := activations[fn]
	if !ok {
		return 0, fmt.Errorf("unsupported activation %q", fn)
	}
	s := g.shape(x)
	e := float64(prod(s))
	n := node{name: name + "/" + fn, kind: Elementwise, in: []int{x}, shape: clone(s), flops: a.flops * e,
		dxFLOPs: a.flops * e, ew: true, saveOut: a.saveOut, composite: int64(a.composite) * prod(s)}
	if !a.saveOut {
		n.saveIn = 1
	}
	if fn == "softmax" || fn == "log_softmax" {
		n.kind = Reduction
		n.ew = false
	}
	return g.addNode(n), nil
}

// bias appends a BiasAdd node.
func (g *graph) bias(name string, x, w int) int {
	s := g.shape(x)
	e := float64(prod(s))
	// BiasAddGrad is a reduction of dy over all but the channel axis (nn_grad.py _BiasAddGrad).
	return g.addNode(node{name: name + "/BiasAdd", kind: Elementwise, in: []int{x}, shape: clone(s), flops: e,
		dxFLOPs: 0, dwFLOPs: e, weights: []int{w}, ew: true, bwdShareDy: false})
}

// conv appends a convolution node (Conv1D/2D, DepthwiseConv2D, or the depthwise half of a
// SeparableConv2D). kernel: spatial kernel dims; cin, cout channels; groups = cin for depthwise.
func (g *graph) conv(name string, x int, out []int, kernel []int, stride, cin, cout, groups int, w int) int {
	k := prod(kernel)
	macs := float64(prod(out)) * float64(k) * float64(cin/groups)
	ws := k > 1
	fh, fw := kernel[0], 1
	if len(kernel) > 1 {
		fw = int(prod(kernel[1:]))
	}
	gm := GEMMShape{M: prod(out[:len(out)-1]), N: int64(cout / groups), K: k * int64(cin/groups), Batch: int64(groups),
		FilterH: fh, FilterW: fw, Stride: stride, InC: int64(cin / groups), Spatial: prod(out[:len(out)-1])}
	return g.addNode(node{name: name + "/Conv", kind: Conv, in: []int{x}, shape: out, flops: 2 * macs,
		dxFLOPs: 2 * macs, dwFLOPs: 2 * macs, weights: []int{w}, saveIn: 1, workspace: ws, kB: 2, gemm: gm})
}

// matmul appends a dense projection over the last axis.
func (g *graph) matmul(name string, x int, units int, w int) int {
	s := clone(g.shape(x))
	in := s[len(s)-1]
	s[len(s)-1] = units
	macs := float64(prod(s)) * float64(in)
	gm := GEMMShape{M: prod(s[:len(s)-1]), N: int64(units), K: int64(in), Batch: 1}
	return g.addNode(node{name: name + "/MatMul", kind: MatMul, in: []int{x}, shape: s, flops: 2 * macs,
		dxFLOPs: 2 * macs, dwFLOPs: 2 * macs, weights: []int{w}, saveIn: 1, kB: 2, gemm: gm})
}

// batchNorm appends FusedBatchNormV3 (training mode). Its gradient reads x, scale and the
// saved batch statistics (nn_grad.py _FusedBatchNormV3Grad), not the output.
func (g *graph) batchNorm(name string, x int, ws []int) int {
	s := g.shape(x)
	e := float64(prod(s))
	// Forward: mean, variance, normalize, scale and shift, about 8 FLOPs per element; the
	// backward pass about twice that. kF = 3: the fused kernel plus Keras's two moving-average
	// updates (keras/src/layers/normalization/batch_normalization.py, moving_mean.assign and
	// moving_variance.assign; tf.keras 2.x _assign_moving_average).
	return g.addNode(node{name: name + "/FusedBatchNormV3", kind: Norm, in: []int{x}, shape: clone(s), flops: 8 * e,
		dxFLOPs: 16 * e, weights: ws, saveIn: 1, kF: 3})
}

// layerNorm appends a layer normalization over the last axis.
func (g *graph) layerNorm(name string, x int, ws []int) int {
	s := g.shape(x)
	e := float64(prod(s))
	// tf.keras LayerNormalization (layer_normalization.py) normalizes with
	// nn.fused_batch_norm on a reshaped input, then multiplies by gamma and adds beta: the
	// Mul's gradient keeps the normalized tensor besides the input.
	return g.addNode(node{name: name + "/LayerNorm", kind: Norm, in: []int{x}, shape: clone(s), flops: 8 * e,
		dxFLOPs: 16 * e, weights: ws, saveIn: 1, kF: 3, kB: 3, composite: prod(s)})
}

// pool appends a pooling window node. Max pooling's gradient (MaxPoolGrad) reads the input
// and the output; average pooling's (AvgPoolGrad) only the input shape.
func (g *graph) pool(name string, x int, out []int, window int, max bool) int {
	n := node{name: name + "/AvgPool", kind: Pool, in: []int{x}, shape: out, flops: float64(prod(out)) * float64(window),
		dxFLOPs: float64(prod(out)) * float64(window)}
	if max {
		n.name = name + "/MaxPool"
		n.saveIn = 1
		n.saveOut = true
	}
	return g.addNode(n)
}

// ewNode appends an element-wise node over inputs of the same shape.
func (g *graph) ewNode(name string, ins []int, flopsPerElem float64, saveIn uint32) int {
	s := g.shape(ins[0])
	e := float64(prod(s))
	return g.addNode(node{name: name, kind: Elementwise, in: ins, shape: clone(s), flops: flopsPerElem * e,
		dxFLOPs: flopsPerElem * e * float64(len(ins)), ew: true, saveIn: saveIn})
}

// dropout appends a training-mode dropout: x * mask / (1 - rate). The mask (a tensor of the
// compute dtype, the size of noise_shape) is an input of the Mul gradient, so TF keeps it
// (tf.nn.dropout in nn_ops.py: random_uniform, greater_equal, cast, mul).
func (g *graph) dropout(name string, x int, maskElems int64) int {
	s := g.shape(x)
	e := float64(prod(s))
	return g.addNode(node{name: name + "/dropout", kind: Elementwise, in: []int{x}, shape: clone(s), flops: 3 * e,
		dxFLOPs: e, ew: false, maskElems: maskElems, kF: 4})
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func round(x float64) int64 { return int64(math.Round(x)) }
