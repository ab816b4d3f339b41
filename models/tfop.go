package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// TF operations called on Keras tensors. tf.keras 2.x records a TF function applied to a
// KerasTensor in a Functional model (x * 2, tf.expand_dims(x, 1), x[..., ::-1]) as a
// TFOpLambda layer, or a SlicingOpLambda for x[...] (keras/layers/core/tf_op_layer.py); its
// config names the function ("function": "math.multiply") and the call's other arguments
// are keyword arguments of the inbound node (keras/engine/node.py Node.serialize), which
// the importer passes here as "call_kwargs", with the tensors among them after the first
// argument's ("call_first" of them) and their keywords in "call_tensors". Axes in these
// arguments count the batch dimension, as TF does.

// tfUnary: element-wise functions of one tensor, FLOPs per element, and whether the
// gradient reads the output (as for the activations of graph.go). TF's registered
// gradients (math_grad.py) read the output for Exp, Sqrt, Rsqrt and Reciprocal
// (_ExpGrad, _SqrtGrad, _RsqrtGrad, _ReciprocalGrad) and the input for Log, Square, Abs,
// Neg, Erf, Sin and Cos. FLOPs per element count one per arithmetic operation and 4 for a
// transcendental, as the activations do; they are estimates, not measurements.
var tfUnary = map[string]actInfo{
	"nn.relu":           activations["relu"],
	"nn.relu6":          activations["relu6"],
	"nn.elu":            activations["elu"],
	"nn.selu":           activations["selu"],
	"math.sigmoid":      activations["sigmoid"],
	"nn.sigmoid":        activations["sigmoid"],
	"sigmoid":           activations["sigmoid"],
	"math.tanh":         activations["tanh"],
	"nn.tanh":           activations["tanh"],
	"tanh":              activations["tanh"],
	"nn.gelu":           activations["gelu"],
	"nn.silu":           activations["silu"],
	"nn.swish":          activations["swish"],
	"math.softplus":     activations["softplus"],
	"nn.softplus":       activations["softplus"],
	"nn.leaky_relu":     activations["leaky_relu"],
	"math.exp":          {1, true, 1, 0},
	"exp":               {1, true, 1, 0},
	"math.log":          {1, false, 1, 0},
	"math.sqrt":         {1, true, 1, 0},
	"math.rsqrt":        {1, true, 1, 0},
	"math.square":       {1, false, 1, 0},
	"math.abs":          {1, false, 1, 0},
	"math.negative":     {1, false, 1, 0},
	"__operators__.neg": {1, false, 1, 0},
	"math.reciprocal":   {1, true, 1, 0},
	"math.erf":          {4, false, 1, 0},
	"math.sin":          {4, false, 1, 0},
	"math.cos":          {4, false, 1, 0},
	"math.round":        {1, false, 1, 0},
	"math.floor":        {1, false, 1, 0},
	"math.sign":         {1, false, 1, 0},
	"math.logical_not":  {1, false, 1, 0},
	"clip_by_value":     {2, false, 1, 0},
	"nn.l2_normalize":   {3, false, 3, 0},
	"math.l2_normalize": {3, false, 3, 0},
}

// tfBinary: element-wise functions of x and y (a tensor or a constant).
var tfBinary = map[string]bool{
	"math.add": true, "__operators__.add": true, "math.subtract": true, "math.multiply": true,
	"math.truediv": true, "math.divide": true, "math.divide_no_nan": true, "math.floordiv": true,
	"math.maximum": true, "math.minimum": true, "math.pow": true, "math.squared_difference": true,
	"nn.bias_add": true, "math.equal": true, "math.not_equal": true, "__operators__.eq": true,
	"__operators__.ne": true, "math.greater": true, "math.greater_equal": true, "math.less": true,
	"math.less_equal": true, "math.logical_and": true, "math.logical_or": true,
}

// tfAlias: functions that return their input (or a view of it) without a kernel.
var tfAlias = map[string]bool{"convert_to_tensor": true, "identity": true, "stop_gradient": true}

// tfCall is one TF function call on Keras tensors: the function, the call's keyword
// arguments, and its first argument x with the shape TF sees (full, batch first).
type tfCall struct {
	g      *graph
	fn     string
	name   string
	c      cfg
	kw     map[string]any
	first  int   // how many of ins are the first argument's tensors
	tnames []any // the keywords of ins[first:]
	ins    []int
	x      int
	s      []int // x's shape without the batch
	full   []int // x's shape with the batch (-1) first
}

// kwTensor is the model tensor passed as keyword k.
func (t *tfCall) kwTensor(k string) (int, bool) {
	for i, n := range t.tnames {
		if n == k && t.first+i < len(t.ins) {
			return t.ins[t.first+i], true
		}
	}
	return 0, false
}

// arg is the keyword argument k, when given and not None.
func (t *tfCall) arg(k string) (any, bool) { v, ok := t.kw[k]; return v, ok && v != nil }

// axisOf resolves an axis of full (negative from the end); the batch axis is an error.
func (t *tfCall) axisOf(a int) (int, error) {
	if a < 0 {
		a += len(t.full)
	}
	if a < 1 || a >= len(t.full) {
		return 0, fmt.Errorf("function %s: axis %d out of range for shape %v (the batch axis is not supported)", t.fn, a, t.full)
	}
	return a, nil
}

// applyTFOp adds the nodes of one TFOpLambda or SlicingOpLambda call, by function.
func (g *graph) applyTFOp(class, name string, c cfg, ins []int) (int, error) {
	fn, err := c.str("function", "")
	if err != nil {
		return 0, err
	}
	t := &tfCall{g: g, fn: fn, name: name, c: c, ins: ins}
	t.kw, _ = c["call_kwargs"].(map[string]any)
	t.first, _ = c["call_first"].(int)
	t.tnames, _ = c["call_tensors"].([]any)
	if t.first < 1 || t.first > len(ins) {
		t.first = len(ins)
		t.tnames = nil
	}
	t.x = ins[0]
	t.s = g.shape(t.x)
	t.full = append([]int{-1}, t.s...)
	if class == "SlicingOpLambda" || fn == "__operators__.getitem" {
		return t.slice()
	}
	switch {
	case tfAlias[fn]:
		return g.identity(name, t.x), nil
	case fn == "cast":
		// A Cast kernel writes a new tensor; its gradient casts dy back.
		return g.ewNode(name+"/Cast", []int{t.x}, 1, 0), nil
	case fn == "nn.softmax" || fn == "math.softmax" || fn == "nn.log_softmax":
		return g.act(name, "softmax", t.x)
	case tfUnary[fn] != (actInfo{}):
		return t.unary(), nil
	case tfBinary[fn]:
		return t.binary()
	case fn == "linalg.matmul" || fn == "matmul":
		return t.matmul()
	case strings.HasPrefix(fn, "math.reduce_") || strings.HasPrefix(fn, "reduce_"):
		return t.reduce()
	case fn == "expand_dims":
		return t.expandDims()
	case fn == "squeeze" || fn == "compat.v1.squeeze":
		return t.squeeze()
	case fn == "reshape" || fn == "compat.v1.reshape":
		return t.reshape()
	case fn == "transpose" || fn == "compat.v1.transpose":
		return t.transpose()
	case fn == "concat" || fn == "stack":
		return t.concat()
	case fn == "image.resize":
		return t.resize()
	}
	return 0, fmt.Errorf("function %q: %w", fn, errUnsupportedTFOp)
}

// slice is x[...] (a SlicingOpLambda): a strided slice, copied.
func (t *tfCall) slice() (int, error) {
	spec, _ := t.arg("slice_spec")
	out, err := sliceShape(t.full, spec)
	if err != nil {
		return 0, fmt.Errorf("function %s: %w", t.fn, err)
	}
	return t.g.addNode(node{name: t.name + "/StridedSlice", kind: Copy, in: []int{t.x}, shape: out}), nil
}

// unary is an element-wise function of tfUnary.
func (t *tfCall) unary() int {
	a := tfUnary[t.fn]
	e := float64(prod(t.s))
	n := node{name: t.name + "/" + t.fn, kind: Elementwise, in: []int{t.x}, shape: clone(t.s), flops: a.flops * e,
		dxFLOPs: a.flops * e, ew: true, saveOut: a.saveOut, kF: a.kernels}
	if !a.saveOut {
		n.saveIn = 1
	}
	return t.g.addNode(n)
}

// binary is an element-wise function of tfBinary, of x and a broadcast tensor or constant.
func (t *tfCall) binary() (int, error) {
	yk := "y"
	if t.fn == "nn.bias_add" {
		yk = "bias"
	}
	if y, ok := t.kwTensor(yk); ok {
		ys := t.g.shape(y)
		if !broadcastable(t.s, ys) {
			return 0, fmt.Errorf("function %s: shapes %v and %v do not broadcast", t.fn, t.s, ys)
		}
		out := broadcastShape(t.s, ys)
		e := float64(prod(out))
		return t.g.addNode(node{name: t.name + "/" + t.fn, kind: Elementwise, in: []int{t.x, y}, shape: out, flops: e,
			dxFLOPs: 2 * e, ew: true, saveIn: 3}), nil
	}
	// A constant operand (a Python number or an array baked into the call).
	return t.g.ewNode(t.name+"/"+t.fn, []int{t.x}, 1, 0), nil
}

// matmul is tf.linalg.matmul of x and the tensor b: a batched matmul.
func (t *tfCall) matmul() (int, error) {
	fn, s := t.fn, t.s
	y, ok := t.kwTensor("b")
	if !ok {
		return 0, fmt.Errorf("function %s: operand b is not a tensor of the model", fn)
	}
	ys := t.g.shape(y)
	ta, _ := t.c.withKw(t.kw).bool("transpose_a", false)
	tb, _ := t.c.withKw(t.kw).bool("transpose_b", false)
	if len(s) < 2 || len(ys) < 2 {
		return 0, fmt.Errorf("function %s: operands %v and %v need rank 3 with the batch", fn, s, ys)
	}
	m, k := s[len(s)-2], s[len(s)-1]
	if ta {
		m, k = k, m
	}
	k2, n := ys[len(ys)-2], ys[len(ys)-1]
	if tb {
		k2, n = n, k2
	}
	if k != k2 || !slices.Equal(s[:len(s)-2], ys[:len(ys)-2]) {
		return 0, fmt.Errorf("function %s: shapes %v and %v do not multiply", fn, s, ys)
	}
	out := append(clone(s[:len(s)-2]), m, n)
	macs := float64(prod(out)) * float64(k)
	return t.g.addNode(node{name: t.name + "/BatchMatMulV2", kind: MatMul, in: []int{t.x, y}, shape: out, flops: 2 * macs,
		dxFLOPs: 4 * macs, saveIn: 3, kB: 2}), nil
}

// reduce is tf.math.reduce_* over the given axes (all of them without one).
func (t *tfCall) reduce() (int, error) {
	fn, full := t.fn, t.full
	keep, err := t.c.withKw(t.kw).bool("keepdims", false)
	if err != nil {
		return 0, fmt.Errorf("function %s: %w", fn, err)
	}
	red := make([]bool, len(full))
	if v, ok := t.arg("axis"); ok {
		axes, err := intList(v, 0)
		if err != nil {
			return 0, fmt.Errorf("function %s: field \"axis\": %w", fn, err)
		}
		for _, a := range axes {
			a, err := t.axisOf(a)
			if err != nil {
				return 0, err
			}
			red[a] = true
		}
	} else {
		// No axis: a scalar over the whole batch; held as one element per sample.
		for i := range red {
			red[i] = true
		}
	}
	out := []int{}
	for i := 1; i < len(full); i++ {
		switch {
		case !red[i]:
			out = append(out, full[i])
		case keep:
			out = append(out, 1)
		}
	}
	e := float64(prod(t.s))
	n := node{name: t.name + "/" + fn, kind: Reduction, in: []int{t.x}, shape: out, flops: e, dxFLOPs: e}
	if strings.HasSuffix(fn, "max") || strings.HasSuffix(fn, "min") || strings.HasSuffix(fn, "prod") {
		n.saveIn, n.saveOut = 1, true
	}
	return t.g.addNode(n), nil
}

// expandDims is tf.expand_dims: a reshape with a 1 inserted.
func (t *tfCall) expandDims() (int, error) {
	fn, full := t.fn, t.full
	v, _ := t.arg("axis")
	if v == nil {
		return 0, fmt.Errorf("function %s: no axis", fn)
	}
	a, err := toInt(v)
	if err != nil {
		return 0, fmt.Errorf("function %s: field \"axis\": %w", fn, err)
	}
	if a < 0 {
		a += len(full) + 1
	}
	if a < 1 || a > len(full) {
		return 0, fmt.Errorf("function %s: axis %d out of range for shape %v", fn, a, full)
	}
	out := slices.Insert(clone(t.s), a-1, 1)
	return t.g.reshape(t.name, t.x, out), nil
}

// squeeze is tf.squeeze: a reshape without the given axes of size 1 (all of them without one).
func (t *tfCall) squeeze() (int, error) {
	fn, full := t.fn, t.full
	drop := make([]bool, len(full))
	v, ok := t.arg("axis")
	if !ok {
		v, ok = t.arg("squeeze_dims")
	}
	if ok {
		axes, err := intList(v, 0)
		if err != nil {
			return 0, fmt.Errorf("function %s: field \"axis\": %w", fn, err)
		}
		for _, a := range axes {
			a, err := t.axisOf(a)
			if err != nil {
				return 0, err
			}
			if full[a] != 1 {
				return 0, fmt.Errorf("function %s: axis %d of shape %v is not 1", fn, a, full)
			}
			drop[a] = true
		}
	} else {
		for i := 1; i < len(full); i++ {
			drop[i] = full[i] == 1
		}
	}
	var out []int
	for i := 1; i < len(full); i++ {
		if !drop[i] {
			out = append(out, full[i])
		}
	}
	return t.g.reshape(t.name, t.x, out), nil
}

// reshape is tf.reshape to a shape with the batch first, as Keras's Reshape.
func (t *tfCall) reshape() (int, error) {
	v, _ := t.arg("shape")
	l, ok := v.([]any)
	if !ok || len(l) < 1 {
		return 0, fmt.Errorf("function %s: field \"shape\": %v is not a list with the batch", t.fn, v)
	}
	ts := make([]any, 0, len(l)-1)
	for _, d := range l[1:] {
		if d == nil {
			d = -1
		}
		ts = append(ts, d)
	}
	y, err := t.g.apply("Reshape", t.name, cfg{"target_shape": ts}, []int{t.x})
	if err != nil {
		return 0, fmt.Errorf("function %s: %w", t.fn, err)
	}
	return y, nil
}

// transpose is tf.transpose by a permutation that keeps the batch first: a copy.
func (t *tfCall) transpose() (int, error) {
	fn, full := t.fn, t.full
	v, _ := t.arg("perm")
	perm, err := intList(v, len(full))
	if err != nil || perm[0] != 0 {
		return 0, fmt.Errorf("function %s: field \"perm\" %v: want a permutation that keeps the batch first", fn, v)
	}
	out := make([]int, len(t.s))
	seen := make([]bool, len(full))
	for i := 1; i < len(full); i++ {
		p := perm[i]
		if p < 1 || p >= len(full) || seen[p] {
			return 0, fmt.Errorf("function %s: field \"perm\": %v is not a permutation", fn, perm)
		}
		seen[p] = true
		out[i-1] = full[p]
	}
	return t.g.addNode(node{name: t.name + "/Transpose", kind: Copy, in: []int{t.x}, shape: out}), nil
}

// concat is tf.concat of the first argument's tensors, as Keras's Concatenate.
func (t *tfCall) concat() (int, error) {
	fn := t.fn
	if fn == "stack" {
		return 0, fmt.Errorf("function %s: unsupported TF function", fn)
	}
	a, err := t.c.withKw(t.kw).int("axis", -1)
	if err != nil {
		return 0, fmt.Errorf("function %s: %w", fn, err)
	}
	if len(t.ins[:t.first]) < 2 {
		return t.g.identity(t.name, t.x), nil
	}
	y, err := t.g.apply("Concatenate", t.name, cfg{"axis": a}, t.ins[:t.first])
	if err != nil {
		return 0, fmt.Errorf("function %s: %w", fn, err)
	}
	return y, nil
}

// resize is tf.image.resize (bilinear) of an image to a height and width.
func (t *tfCall) resize() (int, error) {
	v, _ := t.arg("size")
	hw, err := intList(v, 2)
	if err != nil || len(t.s) != 3 {
		return 0, fmt.Errorf("function %s: size %v on shape %v", t.fn, v, t.s)
	}
	out := []int{hw[0], hw[1], t.s[2]}
	e := float64(prod(out))
	return t.g.addNode(node{name: t.name + "/ResizeBilinear", kind: Elementwise, in: []int{t.x}, shape: out,
		flops: 4 * e, dxFLOPs: 4 * e, saveIn: 1}), nil
}

var errUnsupportedTFOp = errors.New("unsupported TF function")

// withKw is the config with the call's keyword arguments laid over it.
func (c cfg) withKw(kw map[string]any) cfg {
	out := cfg{}
	for k, v := range c {
		out[k] = v
	}
	for k, v := range kw {
		out[k] = v
	}
	return out
}

// broadcastShape is the numpy broadcast of two per-sample shapes.
func broadcastShape(a, b []int) []int {
	if len(b) > len(a) {
		a, b = b, a
	}
	out := clone(a)
	for i, j := len(a)-1, len(b)-1; j >= 0; i, j = i-1, j-1 {
		if out[i] == 1 {
			out[i] = b[j]
		}
	}
	return out
}

// sliceShape applies a SlicingOpLambda's slice_spec (tf.keras serializes x[a:b:c] as
// {"start", "stop", "step"}, Ellipsis as {"class_name": "__ellipsis__"}, tf.newaxis as
// null) to the batch-first shape full and returns the per-sample shape. The batch axis
// must be kept whole.
func sliceShape(full []int, spec any) ([]int, error) {
	items, ok := spec.([]any)
	if !ok {
		items = []any{spec}
	}
	isEll := func(v any) bool {
		m, ok := v.(map[string]any)
		return ok && m["class_name"] == "__ellipsis__"
	}
	consumed := 0
	for _, it := range items {
		if it != nil && !isEll(it) {
			consumed++
		}
	}
	if consumed > len(full) {
		return nil, fmt.Errorf("slice_spec %v indexes %d axes of shape %v", short(spec), consumed, full)
	}
	var out []int
	d := 0 // next input axis
	seenEll := false
	for _, it := range items {
		switch {
		case it == nil:
			out = append(out, 1)
			continue
		case isEll(it):
			if seenEll {
				return nil, errors.New("slice_spec has two ellipses")
			}
			seenEll = true
			n := len(full) - consumed
			out = append(out, full[d:d+n]...)
			d += n
			continue
		}
		if m, ok := it.(map[string]any); ok {
			n, err := sliceLen(full[d], m)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
			d++
			continue
		}
		if _, err := toInt(it); err != nil {
			return nil, fmt.Errorf("slice_spec item %v: %w", short(it), err)
		}
		if d == 0 {
			return nil, errors.New("slice_spec indexes the batch axis")
		}
		d++ // an index drops the axis
	}
	out = append(out, full[d:]...)
	if len(out) == 0 || out[0] != -1 {
		return nil, fmt.Errorf("slice_spec %v does not keep the batch axis whole", short(spec))
	}
	for _, n := range out[1:] {
		if n <= 0 {
			return nil, fmt.Errorf("slice_spec %v gives an empty tensor from %v", short(spec), full)
		}
	}
	return out[1:], nil
}

// sliceLen is the length of Python's slice(start, stop, step) over n elements
// (slice.indices); n = -1 stands for the batch axis, which a slice must take whole.
func sliceLen(n int, m map[string]any) (int, error) {
	get := func(k string) (int, bool, error) {
		v, ok := m[k]
		if !ok || v == nil {
			return 0, false, nil
		}
		i, err := toInt(v)
		return i, true, err
	}
	start, hasStart, err1 := get("start")
	stop, hasStop, err2 := get("stop")
	step, hasStep, err3 := get("step")
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, fmt.Errorf("slice %v: %w", m, err)
	}
	if n < 0 {
		if hasStart || hasStop || (hasStep && step != 1) {
			return 0, fmt.Errorf("slice %v of the batch axis", m)
		}
		return -1, nil
	}
	if !hasStep {
		step = 1
	}
	if step == 0 {
		return 0, fmt.Errorf("slice %v: step 0", m)
	}
	clamp := func(i, lo, hi int) int { return min(max(i, lo), hi) }
	if step > 0 {
		if !hasStart {
			start = 0
		} else if start < 0 {
			start += n
		}
		if !hasStop {
			stop = n
		} else if stop < 0 {
			stop += n
		}
		start, stop = clamp(start, 0, n), clamp(stop, 0, n)
		if stop <= start {
			return 0, nil
		}
		return (stop - start + step - 1) / step, nil
	}
	if !hasStart {
		start = n - 1
	} else if start < 0 {
		start += n
	}
	if !hasStop {
		stop = -1
	} else if stop < 0 {
		stop += n
	}
	start, stop = clamp(start, -1, n-1), clamp(stop, -1, n-1)
	if start <= stop {
		return 0, nil
	}
	return (start - stop - step - 1) / -step, nil
}
