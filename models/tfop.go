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

func (g *graph) applyTFOp(class, name string, c cfg, ins []int) (int, error) {
	fn, err := c.str("function", "")
	if err != nil {
		return 0, err
	}
	kw, _ := c["call_kwargs"].(map[string]any)
	first, _ := c["call_first"].(int)
	tnames, _ := c["call_tensors"].([]any)
	if first < 1 || first > len(ins) {
		first = len(ins)
		tnames = nil
	}
	kwTensor := func(k string) (int, bool) {
		for i, n := range tnames {
			if n == k && first+i < len(ins) {
				return ins[first+i], true
			}
		}
		return 0, false
	}
	arg := func(k string) (any, bool) { v, ok := kw[k]; return v, ok && v != nil }
	x := ins[0]
	s := g.shape(x)
	full := append([]int{-1}, s...) // the shape TF sees, batch first
	axisOf := func(a int) (int, error) {
		if a < 0 {
			a += len(full)
		}
		if a < 1 || a >= len(full) {
			return 0, fmt.Errorf("function %s: axis %d out of range for shape %v (the batch axis is not supported)", fn, a, full)
		}
		return a, nil
	}
	if class == "SlicingOpLambda" || fn == "__operators__.getitem" {
		spec, _ := arg("slice_spec")
		out, err := sliceShape(full, spec)
		if err != nil {
			return 0, fmt.Errorf("function %s: %w", fn, err)
		}
		return g.addNode(node{name: name + "/StridedSlice", kind: Copy, in: []int{x}, shape: out}), nil
	}
	switch {
	case tfAlias[fn]:
		return g.identity(name, x), nil
	case fn == "cast":
		// A Cast kernel writes a new tensor; its gradient casts dy back.
		return g.ewNode(name+"/Cast", []int{x}, 1, 0), nil
	case fn == "nn.softmax" || fn == "math.softmax" || fn == "nn.log_softmax":
		return g.act(name, "softmax", x)
	case tfUnary[fn] != (actInfo{}):
		a := tfUnary[fn]
		e := float64(prod(s))
		n := node{name: name + "/" + fn, kind: Elementwise, in: []int{x}, shape: clone(s), flops: a.flops * e,
			dxFLOPs: a.flops * e, ew: true, saveOut: a.saveOut, kF: a.kernels}
		if !a.saveOut {
			n.saveIn = 1
		}
		return g.addNode(n), nil
	case tfBinary[fn]:
		yk := "y"
		if fn == "nn.bias_add" {
			yk = "bias"
		}
		if y, ok := kwTensor(yk); ok {
			ys := g.shape(y)
			if !broadcastable(s, ys) {
				return 0, fmt.Errorf("function %s: shapes %v and %v do not broadcast", fn, s, ys)
			}
			out := broadcastShape(s, ys)
			e := float64(prod(out))
			return g.addNode(node{name: name + "/" + fn, kind: Elementwise, in: []int{x, y}, shape: out, flops: e,
				dxFLOPs: 2 * e, ew: true, saveIn: 3}), nil
		}
		// A constant operand (a Python number or an array baked into the call).
		return g.ewNode(name+"/"+fn, []int{x}, 1, 0), nil
	case fn == "linalg.matmul" || fn == "matmul":
		y, ok := kwTensor("b")
		if !ok {
			return 0, fmt.Errorf("function %s: operand b is not a tensor of the model", fn)
		}
		ys := g.shape(y)
		ta, _ := c.withKw(kw).bool("transpose_a", false)
		tb, _ := c.withKw(kw).bool("transpose_b", false)
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
		return g.addNode(node{name: name + "/BatchMatMulV2", kind: MatMul, in: []int{x, y}, shape: out, flops: 2 * macs,
			dxFLOPs: 4 * macs, saveIn: 3, kB: 2}), nil
	case strings.HasPrefix(fn, "math.reduce_") || strings.HasPrefix(fn, "reduce_"):
		keep, err := c.withKw(kw).bool("keepdims", false)
		if err != nil {
			return 0, fmt.Errorf("function %s: %w", fn, err)
		}
		red := make([]bool, len(full))
		if v, ok := arg("axis"); ok {
			axes, err := intList(v, 0)
			if err != nil {
				return 0, fmt.Errorf("function %s: field \"axis\": %w", fn, err)
			}
			for _, a := range axes {
				a, err := axisOf(a)
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
		e := float64(prod(s))
		n := node{name: name + "/" + fn, kind: Reduction, in: []int{x}, shape: out, flops: e, dxFLOPs: e}
		if strings.HasSuffix(fn, "max") || strings.HasSuffix(fn, "min") || strings.HasSuffix(fn, "prod") {
			n.saveIn, n.saveOut = 1, true
		}
		return g.addNode(n), nil
	case fn == "expand_dims":
		v, _ := arg("axis")
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
		out := slices.Insert(clone(s), a-1, 1)
		return g.reshape(name, x, out), nil
	case fn == "squeeze" || fn == "compat.v1.squeeze":
		drop := make([]bool, len(full))
		v, ok := arg("axis")
		if !ok {
			v, ok = arg("squeeze_dims")
		}
		if ok {
			axes, err := intList(v, 0)
			if err != nil {
				return 0, fmt.Errorf("function %s: field \"axis\": %w", fn, err)
			}
			for _, a := range axes {
				a, err := axisOf(a)
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
		return g.reshape(name, x, out), nil
	case fn == "reshape" || fn == "compat.v1.reshape":
		v, _ := arg("shape")
		l, ok := v.([]any)
		if !ok || len(l) < 1 {
			return 0, fmt.Errorf("function %s: field \"shape\": %v is not a list with the batch", fn, v)
		}
		ts := make([]any, 0, len(l)-1)
		for _, d := range l[1:] {
			if d == nil {
				d = -1
			}
			ts = append(ts, d)
		}
		y, err := g.apply("Reshape", name, cfg{"target_shape": ts}, []int{x})
		if err != nil {
			return 0, fmt.Errorf("function %s: %w", fn, err)
		}
		return y, nil
	case fn == "transpose" || fn == "compat.v1.transpose":
		v, _ := arg("perm")
		perm, err := intList(v, len(full))
		if err != nil || perm[0] != 0 {
			return 0, fmt.Errorf("function %s: field \"perm\" %v: want a permutation that keeps the batch first", fn, v)
		}
		out := make([]int, len(s))
		seen := make([]bool, len(full))
		for i := 1; i < len(full); i++ {
			p := perm[i]
			if p < 1 || p >= len(full) || seen[p] {
				return 0, fmt.Errorf("function %s: field \"perm\": %v is not a permutation", fn, perm)
			}
			seen[p] = true
			out[i-1] = full[p]
		}
		return g.addNode(node{name: name + "/Transpose", kind: Copy, in: []int{x}, shape: out}), nil
	case fn == "concat" || fn == "stack":
		if fn == "stack" {
			return 0, fmt.Errorf("function %s: unsupported TF function", fn)
		}
		a, err := c.withKw(kw).int("axis", -1)
		if err != nil {
			return 0, fmt.Errorf("function %s: %w", fn, err)
		}
		if len(ins[:first]) < 2 {
			return g.identity(name, x), nil
		}
		y, err := g.apply("Concatenate", name, cfg{"axis": a}, ins[:first])
		if err != nil {
			return 0, fmt.Errorf("function %s: %w", fn, err)
		}
		return y, nil
	case fn == "image.resize":
		v, _ := arg("size")
		hw, err := intList(v, 2)
		if err != nil || len(s) != 3 {
			return 0, fmt.Errorf("function %s: size %v on shape %v", fn, v, s)
		}
		out := []int{hw[0], hw[1], s[2]}
		e := float64(prod(out))
		return g.addNode(node{name: name + "/ResizeBilinear", kind: Elementwise, in: []int{x}, shape: out,
			flops: 4 * e, dxFLOPs: 4 * e, saveIn: 1}), nil
	}
	return 0, fmt.Errorf("function %q: %w", fn, errUnsupportedTFOp)
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
