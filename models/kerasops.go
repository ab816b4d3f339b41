package models

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Keras 3 operation nodes. A keras.ops function called on a Keras tensor in a functional model
// (x + 3.0, ops.mean(x, axis=[1, 2]), x[:, 1:]) is recorded in the config as an Operation with
// the module of its op ("keras.src.ops.numpy", ".nn", ".core", ".math", ".linalg", ".image"),
// its constructor arguments in "config" (axis, keepdims, newshape) and its call's arguments,
// tensors and constants alike, in the inbound node's "args" and "kwargs"
// (keras/src/models/functional.py serialize_node, keras/src/ops/operation.py get_config). The
// importer names such a node's class "ops.<Class>" so that it never reads as the layer of the
// same name (the Add op of x + 3.0 has one tensor input; the Add layer needs two), and hands
// the builder the arguments as "op_args" and "op_kwargs", each tensor replaced by its index
// among the node's inputs (tensorArg). Axes count the batch axis, as keras.ops does.

const opPrefix = "ops."

// isOpModule reports whether a config's "module" is one of keras.ops.
func isOpModule(mod string) bool {
	return strings.HasPrefix(mod, "keras.src.ops.") || strings.HasPrefix(mod, "keras.ops")
}

// tensorArg stands for the i-th input tensor of an operation node in its arguments.
type tensorArg int

// opInputs returns an operation node's tensors in the order they appear in its arguments
// (positional first, then keywords by name) and the config with "op_args"/"op_kwargs".
func (nc nodeCall) opInputs(c map[string]any) ([]tensorRef, map[string]any) {
	var refs []tensorRef
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		case map[string]any:
			if x["class_name"] == "__keras_tensor__" {
				if cc, ok := x["config"].(map[string]any); ok {
					if r, ok := parseRef(cc["keras_history"]); ok {
						refs = append(refs, r)
						return tensorArg(len(refs) - 1)
					}
				}
			}
			return x
		}
		return v
	}
	args, _ := walk(nc.raw["args"]).([]any)
	kw := map[string]any{}
	if m, ok := nc.raw["kwargs"].(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			kw[k] = walk(m[k])
		}
	}
	lc := make(map[string]any, len(c)+2)
	for k, v := range c {
		lc[k] = v
	}
	lc["op_args"] = args
	lc["op_kwargs"] = kw
	return refs, lc
}

// opCall is one operation node being built: its call arguments with the tensors resolved.
type opCall struct {
	g    *graph
	op   string // the op's class without the prefix: Add, Mean, GetItem
	name string
	c    cfg
	args []any
	kw   map[string]any
	ins  []int
}

func newOpCall(g *graph, l *layerCall) *opCall {
	args, _ := l.c["op_args"].([]any)
	kw, _ := l.c["op_kwargs"].(map[string]any)
	return &opCall{g: g, op: strings.TrimPrefix(l.class, opPrefix), name: l.name, c: l.c, args: args, kw: kw, ins: l.ins}
}

// arg is the call argument at position i or keyword k.
func (o *opCall) arg(i int, k string) (any, bool) {
	if v, ok := o.kw[k]; ok {
		return v, true
	}
	if i >= 0 && i < len(o.args) {
		return o.args[i], true
	}
	return nil, false
}

// tensor resolves an argument to an input node.
func (o *opCall) tensor(v any) (int, bool) {
	t, ok := v.(tensorArg)
	if !ok || int(t) >= len(o.ins) {
		return 0, false
	}
	return o.ins[t], true
}

// operand is argument i (or keyword k): a node, or a constant with its per-sample shape.
func (o *opCall) operand(i int, k string) (node int, isTensor bool, constShape []int, err error) {
	v, ok := o.arg(i, k)
	if !ok {
		return 0, false, nil, fmt.Errorf("op %s: argument %q missing", o.op, k)
	}
	if x, ok := o.tensor(v); ok {
		return x, true, nil, nil
	}
	return 0, false, constShape0(v), nil
}

// constShape0 is the shape of a constant operand: a number is a scalar; a nested list or a
// serialized tensor/array ({"class_name": "__tensor__"|"__numpy__", "config": {"value"}})
// has the shape of its nesting.
func constShape0(v any) []int {
	if m, ok := v.(map[string]any); ok {
		if c, ok := m["config"].(map[string]any); ok {
			v = c["value"]
		}
	}
	var s []int
	for {
		l, ok := v.([]any)
		if !ok {
			return s
		}
		s = append(s, len(l))
		if len(l) == 0 {
			return s
		}
		v = l[0]
	}
}

// perSample drops a batch axis from a constant's shape when it has one more axis than the
// tensor it meets (a constant of the full batch-first rank broadcasts from its trailing axes).
func perSample(cs []int, rank int) []int {
	for len(cs) > rank {
		cs = cs[1:]
	}
	return cs
}

// axisOf maps an axis of a keras.ops call (batch axis 0, negative from the end) onto the
// per-sample shape of rank r (0-based, or an error for the batch axis).
func axisOf(op string, a, r int) (int, error) {
	if a < 0 {
		a += r + 1
	}
	if a < 1 || a > r {
		return 0, fmt.Errorf("op %s: axis %d out of range for rank %d with the batch (the batch axis is not supported)", op, a, r+1)
	}
	return a - 1, nil
}

var errOpUnsupported = errors.New("unsupported keras.ops operation")

func init() {
	names := []string{}
	for k := range opUnary {
		names = append(names, k)
	}
	for k := range opBinary {
		names = append(names, k)
	}
	for k := range opReduce {
		names = append(names, k)
	}
	for k := range opShape {
		names = append(names, k)
	}
	for k := range opOther {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		register(buildOp, opPrefix+n)
	}
}

// buildOp applies an operation node.
func buildOp(g *graph, l *layerCall) (int, error) {
	o := newOpCall(g, l)
	var f func(*opCall) (int, error)
	switch {
	case opUnary[o.op] != (actInfo{}):
		f = opApplyUnary
	case opBinary[o.op] != 0:
		f = opApplyBinary
	case opReduce[o.op] != 0:
		f = opApplyReduce
	case opShape[o.op] != nil:
		f = opShape[o.op]
	default:
		f = opOther[o.op]
	}
	y, err := f(o)
	if errors.Is(err, errOpUnsupported) {
		return 0, fmt.Errorf("keras.ops %s: %w", o.op, err)
	}
	return y, err
}

// opUnary: element-wise ops of one tensor, as the activations of graph.go and the TF
// functions of tfop.go: FLOPs per element and whether the gradient reads the output.
var opUnary = map[string]actInfo{
	"Relu": activations["relu"], "Relu6": activations["relu6"], "Sigmoid": activations["sigmoid"],
	"Tanh": activations["tanh"], "Gelu": activations["gelu"], "Silu": activations["silu"],
	"Softplus": activations["softplus"], "Softsign": activations["softsign"], "Elu": activations["elu"],
	"Selu": activations["selu"], "LeakyRelu": activations["leaky_relu"],
	"HardSigmoid": activations["hard_sigmoid"], "HardSilu": activations["hard_silu"],
	"LogSigmoid": {5, false, 1, 0}, "Celu": {4, false, 1, 0}, "Mish": activations["mish"],
	"SparsePlus": {3, false, 1, 0}, "Squareplus": {4, false, 1, 0}, "SoftShrink": {2, false, 1, 0},
	"HardShrink": {2, false, 1, 0}, "HardTanh": {2, false, 1, 0}, "TanhShrink": {5, false, 1, 0},
	"Threshold": {1, false, 1, 0}, "SparseSigmoid": {3, false, 1, 0},
	"Exp": tfUnary["math.exp"], "Exp2": tfUnary["math.exp"], "Expm1": tfUnary["math.exp"],
	"Log": tfUnary["math.log"], "Log1p": tfUnary["math.log"], "Log2": tfUnary["math.log"],
	"Log10": tfUnary["math.log"], "Sqrt": tfUnary["math.sqrt"], "Rsqrt": tfUnary["math.rsqrt"],
	"Cbrt": {4, true, 1, 0}, "Square": tfUnary["math.square"], "Absolute": tfUnary["math.abs"],
	"Fabs": tfUnary["math.abs"], "Negative": tfUnary["math.negative"],
	"Reciprocal": tfUnary["math.reciprocal"], "Erf": tfUnary["math.erf"], "Erfc": tfUnary["math.erf"],
	"Erfinv": tfUnary["math.erf"], "Sin": tfUnary["math.sin"], "Cos": tfUnary["math.cos"],
	"Tan": {4, false, 1, 0}, "Arcsin": {4, false, 1, 0}, "Arccos": {4, false, 1, 0},
	"Arctan": {4, false, 1, 0}, "Sinh": {4, false, 1, 0}, "Cosh": {4, false, 1, 0},
	"Arcsinh": {4, false, 1, 0}, "Arccosh": {4, false, 1, 0}, "Arctanh": {4, false, 1, 0},
	"Sinc": {5, false, 1, 0}, "Sign": tfUnary["math.sign"], "Round": tfUnary["math.round"],
	"Floor": tfUnary["math.floor"], "Ceil": tfUnary["math.floor"], "Trunc": tfUnary["math.floor"],
	"Clip": tfUnary["clip_by_value"], "NanToNum": {2, false, 1, 0}, "Deg2rad": {1, false, 1, 0},
	"Rad2deg": {1, false, 1, 0}, "I0": {8, false, 1, 0},
	"LogicalNot": tfUnary["math.logical_not"], "Isnan": {1, false, 1, 0}, "Isinf": {1, false, 1, 0},
	"Isfinite": {1, false, 1, 0}, "Isneginf": {1, false, 1, 0}, "Isposinf": {1, false, 1, 0},
	"Signbit": {1, false, 1, 0}, "BitwiseInvert": {1, false, 1, 0}, "BitwiseNot": {1, false, 1, 0},
	"Conjugate": {1, false, 1, 0}, "Real": {1, false, 1, 0}, "Imag": {1, false, 1, 0},
	"Isreal": {1, false, 1, 0},
}

// noGradOps return booleans or integers: no gradient flows back through them.
var noGradOps = map[string]bool{
	"LogicalNot": true, "Isnan": true, "Isinf": true, "Isfinite": true, "Isneginf": true,
	"Isposinf": true, "Signbit": true, "BitwiseInvert": true, "BitwiseNot": true, "Sign": true,
	"Round": true, "Floor": true, "Ceil": true, "Trunc": true, "Isreal": true,
	"Equal": true, "NotEqual": true, "Greater": true, "GreaterEqual": true, "Less": true,
	"LessEqual": true, "LogicalAnd": true, "LogicalOr": true, "LogicalXor": true,
	"BitwiseAnd": true, "BitwiseOr": true, "BitwiseXor": true, "BitwiseLeftShift": true,
	"LeftShift": true, "BitwiseRightShift": true, "RightShift": true, "FloorDivide": true,
	"Argmax": true, "Argmin": true, "Any": true, "All": true, "CountNonzero": true,
	"Isclose": true, "Gcd": true, "Lcm": true, "Heaviside": true, "OneHot": true, "MultiHot": true,
}

func opApplyUnary(o *opCall) (int, error) {
	x, ok := o.tensor(first(o.args))
	if !ok {
		return 0, fmt.Errorf("op %s: its first argument is not a tensor of the model", o.op)
	}
	a := opUnary[o.op]
	s := o.g.shape(x)
	e := float64(prod(s))
	n := node{name: o.name + "/" + o.op, kind: Elementwise, in: []int{x}, shape: clone(s), flops: a.flops * e,
		dxFLOPs: a.flops * e, ew: true, saveOut: a.saveOut, kF: a.kernels, composite: int64(a.composite) * prod(s)}
	if !a.saveOut {
		n.saveIn = 1
	}
	if noGradOps[o.op] {
		n.saveIn, n.saveOut, n.noGradIn, n.dxFLOPs = 0, false, 1, 0
	}
	return o.g.addNode(n), nil
}

func first(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

// Binary element-wise ops, by what their gradient reads: opAddLike reads nothing (add,
// subtract), opMulLike reads both operands (a constant one needs nothing kept),
// opCompare has no gradient.
const (
	opAddLike = iota + 1
	opMulLike
	opCompare
)

var opBinary = map[string]int{
	"Add": opAddLike, "Subtract": opAddLike, "Multiply": opMulLike, "Divide": opMulLike,
	"TrueDivide": opMulLike, "DivideNoNan": opMulLike, "Maximum": opMulLike, "Minimum": opMulLike,
	"Fmax": opMulLike, "Fmin": opMulLike, "Power": opMulLike, "Mod": opMulLike, "Fmod": opMulLike,
	"Arctan2": opMulLike, "Hypot": opMulLike, "Logaddexp": opMulLike, "Logaddexp2": opMulLike,
	"Nextafter": opMulLike, "Ldexp": opMulLike, "Heaviside": opCompare, "FloorDivide": opCompare,
	"Equal": opCompare, "NotEqual": opCompare, "Greater": opCompare, "GreaterEqual": opCompare,
	"Less": opCompare, "LessEqual": opCompare, "LogicalAnd": opCompare, "LogicalOr": opCompare,
	"LogicalXor": opCompare, "BitwiseAnd": opCompare, "BitwiseOr": opCompare, "BitwiseXor": opCompare,
	"BitwiseLeftShift": opCompare, "LeftShift": opCompare, "BitwiseRightShift": opCompare,
	"RightShift": opCompare, "Gcd": opCompare, "Lcm": opCompare,
}

func opApplyBinary(o *opCall) (int, error) {
	var ins []int
	var shape []int
	for i, k := range []string{"x1", "x2"} {
		x, isT, cs, err := o.operand(i, k)
		if err != nil {
			return 0, err
		}
		if isT {
			ins = append(ins, x)
			cs = o.g.shape(x)
		}
		if i > 0 && !broadcastable(shape, cs) {
			return 0, fmt.Errorf("op %s: shapes %v and %v do not broadcast", o.op, shape, cs)
		}
		shape = broadcastShape(shape, cs)
	}
	if len(ins) == 0 {
		return 0, fmt.Errorf("op %s: no operand is a tensor of the model", o.op)
	}
	if len(ins) == 1 {
		shape = perSample(shape, len(o.g.shape(ins[0])))
	}
	e := float64(prod(shape))
	n := node{name: o.name + "/" + o.op, kind: Elementwise, in: ins, shape: shape, flops: e,
		dxFLOPs: e * float64(len(ins)), ew: true}
	switch opBinary[o.op] {
	case opAddLike:
		if o.op == "Add" && (len(ins) == 1 || allSame(o.g, ins)) && slices.Equal(shape, o.g.shape(ins[0])) {
			// AddGrad hands dy on unchanged (a constant addend gets none).
			n.bwdShareDy, n.dxFLOPs = true, 0
		}
	case opMulLike:
		if len(ins) == 2 {
			n.saveIn = 3
		} else if o.op != "Multiply" && o.op != "Divide" && o.op != "TrueDivide" {
			n.saveIn = 1 // max(x, 0), x ** c: the gradient reads x; x * c does not
		}
	case opCompare:
		n.noGradIn, n.dxFLOPs = 1<<uint(len(ins))-1, 0
	}
	return o.g.addNode(n), nil
}

// Reductions over "axis" (None: every axis but the batch is reduced here, a per-sample scalar,
// as the batch axis itself cannot be) with "keepdims": opSum reads nothing for its gradient,
// opMaxLike reads input and output (max, min, prod, norm, logsumexp), opVarLike the input.
const (
	opSum = iota + 1
	opMaxLike
	opVarLike
	opArg
)

var opReduce = map[string]int{
	"Mean": opSum, "Sum": opSum, "Average": opSum, "Nanmean": opSum, "Nansum": opSum, "Trace": opSum,
	"Max": opMaxLike, "Min": opMaxLike, "Amax": opMaxLike, "Amin": opMaxLike, "Prod": opMaxLike,
	"Nanmax": opMaxLike, "Nanmin": opMaxLike, "Nanprod": opMaxLike, "Logsumexp": opMaxLike,
	"Norm": opMaxLike, "Ptp": opMaxLike, "Median": opMaxLike, "Std": opVarLike, "Var": opVarLike,
	"Nanstd": opVarLike, "Nanvar": opVarLike, "Argmax": opArg, "Argmin": opArg, "Any": opArg,
	"All": opArg, "CountNonzero": opArg, "Nanargmax": opArg, "Nanargmin": opArg,
}

func opApplyReduce(o *opCall) (int, error) {
	x, ok := o.tensor(first(o.args))
	if !ok {
		return 0, fmt.Errorf("op %s: its first argument is not a tensor of the model", o.op)
	}
	s := o.g.shape(x)
	red, err := reduceAxes(o, s)
	if err != nil {
		return 0, err
	}
	keep, err := o.c.bool("keepdims", false)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	out := []int{}
	for i, d := range s {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	e := float64(prod(s))
	n := node{name: o.name + "/" + o.op, kind: Reduction, in: []int{x}, shape: out, flops: e, dxFLOPs: e}
	switch opReduce[o.op] {
	case opMaxLike:
		n.saveIn, n.saveOut = 1, true
	case opVarLike:
		n.saveIn, n.flops, n.dxFLOPs = 1, 3*e, 3*e
	case opArg:
		n.noGradIn, n.dxFLOPs = 1, 0
	}
	return o.g.addNode(n), nil
}

// reduceAxes reads the op's "axis" (config or call keyword) as reduced per-sample axes.
func reduceAxes(o *opCall, s []int) ([]bool, error) {
	red := make([]bool, len(s))
	v, ok := o.c.get("axis")
	if kv, ok2 := o.kw["axis"]; ok2 {
		v, ok = kv, kv != nil
	}
	if !ok {
		for i := range red {
			red[i] = true
		}
		return red, nil
	}
	axes, err := intList(v, 0)
	if err != nil {
		return nil, fmt.Errorf("op %s: field \"axis\": %w", o.op, err)
	}
	for _, a := range axes {
		i, err := axisOf(o.op, a, len(s))
		if err != nil {
			return nil, err
		}
		red[i] = true
	}
	return red, nil
}
