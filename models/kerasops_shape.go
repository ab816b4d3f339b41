package models

import (
	"fmt"
	"slices"
	"strings"
)

// Operation nodes that move data (reshape, transpose, slicing, concatenation, padding) and the
// rest: where, matmul and einsum, softmax, resize, pooling and convolutions with a constant
// kernel, attention. See kerasops.go.

var opShape = map[string]func(*opCall) (int, error){
	"Reshape": opReshape, "Transpose": opTranspose, "ExpandDims": opExpandDims,
	"Squeeze": opSqueeze, "Concatenate": opConcatenate, "Stack": opStack, "GetItem": opGetItem,
	"Cast": opCast, "SaturateCast": opCast, "ConvertToTensor": opAlias, "StopGradient": opAlias,
	"Copy": opCast, "Pad": opPad, "Flip": opCopySame, "Roll": opCopySame, "Fliplr": opCopySame,
	"Flipud": opCopySame, "Rot90": opSwapLast, "Swapaxes": opSwapaxes, "Tile": opTile,
	"Repeat": opRepeat, "BroadcastTo": opBroadcastTo, "Cumsum": opScan, "Cumprod": opScan,
	"Tril": opCopySame, "Triu": opCopySame, "Sort": opCopySame, "Argsort": opCopySame,
	"ZerosLike": opConstLike, "OnesLike": opConstLike, "FullLike": opConstLike, "EmptyLike": opConstLike,
}

var opOther = map[string]func(*opCall) (int, error){
	"Where": opWhere, "Select": opWhere, "Matmul": opMatmul, "Einsum": opEinsum,
	"Softmax": opSoftmax, "LogSoftmax": opSoftmax, "Resize": opResize, "AveragePool": opPool,
	"MaxPool": opPool, "Conv": opConv, "DepthwiseConv": opConv, "OneHot": opOneHot,
	"Normalize": opNormalize, "DotProductAttention": opAttention,
}

// x0 is the op's first argument as a tensor.
func (o *opCall) x0() (int, []int, error) {
	x, ok := o.tensor(first(o.args))
	if !ok {
		return 0, nil, fmt.Errorf("op %s: its first argument is not a tensor of the model", o.op)
	}
	return x, o.g.shape(x), nil
}

// copyNode is a kernel that writes its input's elements elsewhere (transpose, slice, pad).
func (o *opCall) copyNode(x int, out []int) int {
	return o.g.addNode(node{name: o.name + "/" + o.op, kind: Copy, in: []int{x}, shape: out})
}

// batchFirst reads a shape or axis list that includes the batch: its first entry must leave
// the batch alone (-1, None, or 1 for repeats), and the rest is per sample.
func (o *opCall) batchFirst(key string, keepBatch func(any) bool) ([]int, error) {
	v, ok := o.c.get(key)
	if !ok {
		return nil, fmt.Errorf("op %s: no %q", o.op, key)
	}
	l, ok := v.([]any)
	if !ok || len(l) == 0 || !keepBatch(l[0]) {
		return nil, fmt.Errorf("op %s: field %q %v does not keep the batch axis first and whole", o.op, key, short(v))
	}
	rest := make([]any, len(l)-1)
	for i, d := range l[1:] {
		if d == nil {
			d = -1
		}
		rest[i] = d
	}
	return intList(rest, 0)
}

func isBatchDim(v any) bool {
	if v == nil {
		return true
	}
	n, err := toInt(v)
	return err == nil && n == -1
}

func opReshape(o *opCall) (int, error) {
	x, _, err := o.x0()
	if err != nil {
		return 0, err
	}
	ts, err := o.batchFirst("newshape", isBatchDim)
	if err != nil {
		return 0, err
	}
	y, err := o.g.apply("Reshape", o.name, cfg{"target_shape": anyInts(ts)}, []int{x})
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	return y, nil
}

func opTranspose(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	perm, err := o.batchFirst("axes", func(v any) bool { n, err := toInt(v); return err == nil && n == 0 })
	if err != nil {
		return 0, err
	}
	if len(perm) != len(s) {
		return 0, fmt.Errorf("op %s: axes %v for rank %d", o.op, perm, len(s)+1)
	}
	out := make([]int, len(s))
	seen := make([]bool, len(s))
	for i, p := range perm {
		if p < 1 || p > len(s) || seen[p-1] {
			return 0, fmt.Errorf("op %s: axes %v is not a permutation keeping the batch first", o.op, perm)
		}
		seen[p-1] = true
		out[i] = s[p-1]
	}
	return o.copyNode(x, out), nil
}

func opExpandDims(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	axes, err := o.c.ints("axis", 0, 0)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	out := clone(s)
	for _, a := range axes {
		if a < 0 {
			a += len(out) + 2
		}
		if a < 1 || a > len(out)+1 {
			return 0, fmt.Errorf("op %s: axis %d out of range for rank %d with the batch", o.op, a, len(out)+1)
		}
		out = slices.Insert(out, a-1, 1)
	}
	return o.g.reshape(o.name, x, out), nil
}

func opSqueeze(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	drop := make([]bool, len(s))
	if _, ok := o.c.get("axis"); ok {
		axes, err := o.c.ints("axis", 0, 0)
		if err != nil {
			return 0, fmt.Errorf("op %s: %w", o.op, err)
		}
		for _, a := range axes {
			i, err := axisOf(o.op, a, len(s))
			if err != nil {
				return 0, err
			}
			if s[i] != 1 {
				return 0, fmt.Errorf("op %s: axis %d of shape %v is not 1", o.op, a, s)
			}
			drop[i] = true
		}
	} else {
		for i, d := range s {
			drop[i] = d == 1
		}
	}
	var out []int
	for i, d := range s {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return o.g.reshape(o.name, x, out), nil
}

// listTensors reads argument 0 as a list of tensors (concatenate, stack).
func (o *opCall) listTensors() ([]int, error) {
	l, ok := first(o.args).([]any)
	if !ok {
		l = o.args
	}
	var out []int
	for _, v := range l {
		x, ok := o.tensor(v)
		if !ok {
			return nil, fmt.Errorf("op %s: an operand is a constant, not a tensor of the model", o.op)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("op %s: no tensors", o.op)
	}
	return out, nil
}

func opConcatenate(o *opCall) (int, error) {
	xs, err := o.listTensors()
	if err != nil {
		return 0, err
	}
	a, err := o.c.int("axis", 0)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	if len(xs) == 1 {
		return o.g.identity(o.name, xs[0]), nil
	}
	y, err := o.g.apply("Concatenate", o.name, cfg{"axis": a}, xs)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	return y, nil
}

func opStack(o *opCall) (int, error) {
	xs, err := o.listTensors()
	if err != nil {
		return 0, err
	}
	s := o.g.shape(xs[0])
	if !allSame(o.g, xs) {
		return 0, fmt.Errorf("op %s: operands of different shapes", o.op)
	}
	a, err := o.c.int("axis", 0)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	if a < 0 {
		a += len(s) + 2
	}
	if a < 1 || a > len(s)+1 {
		return 0, fmt.Errorf("op %s: axis %d out of range (the batch axis is not supported)", o.op, a)
	}
	out := slices.Insert(clone(s), a-1, len(xs))
	return o.g.addNode(node{name: o.name + "/Pack", kind: Copy, in: xs, shape: out, kB: len(xs)}), nil
}

// opGetItem is x[key]: Keras serializes a slice as {"class_name": "__slice__", "config":
// {"start", "stop", "step"}}, Ellipsis as "__ellipsis__" and None (a new axis) as null, a
// tuple key as a list; sliceShape (tfop.go) reads the same items in tf.keras's form.
func opGetItem(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	key, ok := o.arg(1, "key")
	if !ok {
		return 0, fmt.Errorf("op %s: no key", o.op)
	}
	items, isList := key.([]any)
	if !isList {
		items = []any{key}
	}
	spec := make([]any, len(items))
	for i, it := range items {
		if _, isT := it.(tensorArg); isT {
			return 0, fmt.Errorf("op %s: indexing by a tensor (a gather) is not supported", o.op)
		}
		if m, ok := it.(map[string]any); ok && m["class_name"] == "__slice__" {
			it, _ = m["config"].(map[string]any)
		}
		spec[i] = it
	}
	out, err := sliceShape(append([]int{-1}, s...), spec)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	return o.g.addNode(node{name: o.name + "/StridedSlice", kind: Copy, in: []int{x}, shape: out}), nil
}

func opCast(o *opCall) (int, error) {
	x, _, err := o.x0()
	if err != nil {
		return 0, err
	}
	return o.g.ewNode(o.name+"/"+o.op, []int{x}, 1, 0), nil
}

func opAlias(o *opCall) (int, error) {
	x, _, err := o.x0()
	if err != nil {
		return 0, err
	}
	if o.op == "StopGradient" {
		return o.g.addNode(node{name: o.name + "/StopGradient", kind: Copy, in: []int{x}, shape: clone(o.g.shape(x)),
			alias: true, noGradIn: 1}), nil
	}
	return o.g.identity(o.name, x), nil
}

// opConstLike is zeros_like(x) and its kin: a fill of x's shape that reads nothing of x.
func opConstLike(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	return o.g.addNode(node{name: o.name + "/Fill", kind: Elementwise, in: []int{x}, shape: clone(s), noGradIn: 1}), nil
}

func opCopySame(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	if o.op == "Sort" || o.op == "Argsort" {
		n := node{name: o.name + "/" + o.op, kind: Reduction, in: []int{x}, shape: clone(s), flops: 8 * float64(prod(s))}
		if o.op == "Argsort" {
			n.noGradIn = 1
		}
		return o.g.addNode(n), nil
	}
	return o.copyNode(x, clone(s)), nil
}

func opSwapLast(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	out := clone(s)
	if len(out) >= 2 {
		out[0], out[1] = out[1], out[0]
	}
	return o.copyNode(x, out), nil
}

func opSwapaxes(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	a1, err1 := o.c.int("axis1", 0)
	a2, err2 := o.c.int("axis2", 0)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("op %s: axis1/axis2 are not integers", o.op)
	}
	i, err := axisOf(o.op, a1, len(s))
	if err != nil {
		return 0, err
	}
	j, err := axisOf(o.op, a2, len(s))
	if err != nil {
		return 0, err
	}
	out := clone(s)
	out[i], out[j] = out[j], out[i]
	return o.copyNode(x, out), nil
}

func opPad(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	v, _ := o.c.get("pad_width")
	l, ok := v.([]any)
	if !ok || len(l) != len(s)+1 {
		return 0, fmt.Errorf("op %s: pad_width %v: want one pair per axis, the batch's first", o.op, short(v))
	}
	out := clone(s)
	for i, e := range l {
		p, err := intList(e, 2)
		if err != nil {
			return 0, fmt.Errorf("op %s: pad_width: %w", o.op, err)
		}
		if i == 0 {
			if p[0] != 0 || p[1] != 0 {
				return 0, fmt.Errorf("op %s: padding the batch axis is not supported", o.op)
			}
			continue
		}
		out[i-1] += p[0] + p[1]
	}
	return o.g.addNode(node{name: o.name + "/Pad", kind: Copy, in: []int{x}, shape: out}), nil
}

func opTile(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	v, _ := o.c.get("repeats")
	r, err := intList(v, 0)
	if err != nil || len(r) == 0 {
		return 0, fmt.Errorf("op %s: repeats %v", o.op, short(v))
	}
	out := clone(s)
	for len(out)+1 < len(r) {
		out = append([]int{1}, out...)
	}
	if len(r) == len(out)+1 {
		if r[0] != 1 {
			return 0, fmt.Errorf("op %s: tiling the batch axis is not supported", o.op)
		}
		r = r[1:]
	}
	for i := range r {
		out[len(out)-len(r)+i] *= r[i]
	}
	return o.copyNode(x, out), nil
}

func opRepeat(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	r, err := o.c.int("repeats", 0)
	if err != nil || r <= 0 {
		return 0, fmt.Errorf("op %s: repeats must be one positive integer", o.op)
	}
	if _, ok := o.c.get("axis"); !ok {
		return 0, fmt.Errorf("op %s: without an axis it flattens the batch", o.op)
	}
	a, err := o.c.int("axis", 0)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	i, err := axisOf(o.op, a, len(s))
	if err != nil {
		return 0, err
	}
	out := clone(s)
	out[i] *= r
	return o.copyNode(x, out), nil
}

func opBroadcastTo(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	out, err := o.batchFirst("shape", isBatchDim)
	if err != nil {
		return 0, err
	}
	if !broadcastable(out, s) || len(s) > len(out) {
		return 0, fmt.Errorf("op %s: %v does not broadcast to %v", o.op, s, out)
	}
	return o.copyNode(x, out), nil
}

func opScan(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	e := float64(prod(s))
	n := node{name: o.name + "/" + o.op, kind: Reduction, in: []int{x}, shape: clone(s), flops: e, dxFLOPs: e}
	if o.op == "Cumprod" {
		n.saveIn, n.saveOut = 1, true
	}
	return o.g.addNode(n), nil
}

func opWhere(o *opCall) (int, error) {
	var ins []int
	var shape []int
	var noGrad uint32
	for i, k := range []string{"condition", "x1", "x2"} {
		x, isT, cs, err := o.operand(i, k)
		if err != nil {
			return 0, err
		}
		if isT {
			if i == 0 {
				noGrad |= 1 << uint(len(ins))
			}
			ins = append(ins, x)
			cs = o.g.shape(x)
		}
		if !broadcastable(shape, cs) {
			return 0, fmt.Errorf("op %s: shapes %v and %v do not broadcast", o.op, shape, cs)
		}
		shape = broadcastShape(shape, cs)
	}
	if len(ins) == 0 {
		return 0, fmt.Errorf("op %s: no operand is a tensor of the model", o.op)
	}
	shape = perSample(shape, len(o.g.shape(ins[0])))
	e := float64(prod(shape))
	// SelectV2's gradient selects dy by the condition, which it keeps.
	return o.g.addNode(node{name: o.name + "/SelectV2", kind: Elementwise, in: ins, shape: shape, flops: e,
		dxFLOPs: 2 * e, ew: true, saveIn: noGrad, noGradIn: noGrad}), nil
}

func opMatmul(o *opCall) (int, error) {
	var ins []int
	var shapes [][]int
	for i, k := range []string{"x1", "x2"} {
		x, isT, cs, err := o.operand(i, k)
		if err != nil {
			return 0, err
		}
		if !isT {
			return 0, fmt.Errorf("op %s: a constant operand of shape %v (use a Dense or EinsumDense layer for weights)", o.op, cs)
		}
		ins = append(ins, x)
		shapes = append(shapes, o.g.shape(x))
	}
	s, ys := shapes[0], shapes[1]
	if len(s) < 2 || len(ys) < 2 || s[len(s)-1] != ys[len(ys)-2] || !slices.Equal(s[:len(s)-2], ys[:len(ys)-2]) {
		return 0, fmt.Errorf("op %s: shapes %v and %v do not multiply (per sample)", o.op, s, ys)
	}
	out := append(clone(s[:len(s)-1]), ys[len(ys)-1])
	k := s[len(s)-1]
	macs := float64(prod(out)) * float64(k)
	b := prod(s[:len(s)-2])
	return o.g.addNode(node{name: o.name + "/BatchMatMulV2", kind: MatMul, in: ins, shape: out, flops: 2 * macs,
		dxFLOPs: 4 * macs, saveIn: 3, kB: 2,
		gemm: GEMMShape{M: int64(s[len(s)-2]), N: int64(ys[len(ys)-1]), K: int64(k), Batch: b}}), nil
}

func opEinsum(o *opCall) (int, error) {
	eq, err := o.c.str("subscripts", "")
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	var ins []int
	var shapes [][]int
	for _, v := range o.args {
		x, ok := o.tensor(v)
		if !ok {
			return 0, fmt.Errorf("op %s: a constant operand (use an EinsumDense layer for weights)", o.op)
		}
		ins = append(ins, x)
		shapes = append(shapes, append([]int{-1}, o.g.shape(x)...))
	}
	out, macs, err := einsumShape(eq, shapes)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	if len(out) == 0 || out[0] != -1 {
		return 0, fmt.Errorf("op %s: %q does not keep the batch axis first", o.op, eq)
	}
	var save uint32 = 1<<uint(len(ins)) - 1
	return o.g.addNode(node{name: o.name + "/Einsum", kind: MatMul, in: ins, shape: out[1:], flops: 2 * macs,
		dxFLOPs: 2 * macs * float64(len(ins)), saveIn: save, kB: len(ins)}), nil
}

// einsumShape is the output shape of an einsum equation ("ab,bc->ac"; implicit output: the
// labels seen once, sorted) over operand shapes (a -1 marks the batch axis) and its
// multiply-adds per sample (the product of every label's size once, the batch's as 1).
func einsumShape(eq string, shapes [][]int) ([]int, float64, error) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(shapes) {
		return nil, 0, fmt.Errorf("equation %q has %d operands, got %d", eq, len(terms), len(shapes))
	}
	size := map[rune]int{}
	count := map[rune]int{}
	for i, t := range terms {
		if strings.Contains(t, ".") {
			return nil, 0, fmt.Errorf("equation %q: ellipses are not supported", eq)
		}
		if len([]rune(t)) != len(shapes[i]) {
			return nil, 0, fmt.Errorf("equation %q: operand %d %q for rank %d", eq, i, t, len(shapes[i]))
		}
		for j, r := range t {
			d := shapes[i][j]
			if old, ok := size[r]; ok && old != d && old != 1 && d != 1 {
				return nil, 0, fmt.Errorf("equation %q: label %c is %d and %d", eq, r, old, d)
			}
			if old, ok := size[r]; !ok || old == 1 {
				size[r] = d
			}
			count[r]++
		}
	}
	if !explicit {
		var labels []rune
		for r, n := range count {
			if n == 1 {
				labels = append(labels, r)
			}
		}
		slices.Sort(labels)
		rhs = string(labels)
	}
	var out []int
	for _, r := range rhs {
		d, ok := size[r]
		if !ok {
			return nil, 0, fmt.Errorf("equation %q: output label %c is in no operand", eq, r)
		}
		out = append(out, d)
	}
	macs := 1.0
	for _, d := range size {
		if d > 0 {
			macs *= float64(d)
		}
	}
	return out, macs, nil
}

func opSoftmax(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	if len(s) == 0 {
		return 0, fmt.Errorf("op %s: a per-sample scalar", o.op)
	}
	fn := "softmax"
	if o.op == "LogSoftmax" {
		fn = "log_softmax"
	}
	return o.g.act(o.name, fn, x)
}

func opResize(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	if df, _ := o.c.str("data_format", "channels_last"); df == "channels_first" || len(s) != 3 {
		return 0, fmt.Errorf("op %s: want a channels_last image, got shape %v", o.op, s)
	}
	hw, err := o.c.ints("size", 2, 0)
	if err != nil || hw[0] <= 0 || hw[1] <= 0 {
		return 0, fmt.Errorf("op %s: size %v", o.op, o.c["size"])
	}
	interp, _ := o.c.str("interpolation", "bilinear")
	out := []int{hw[0], hw[1], s[2]}
	e := float64(prod(out))
	fl := 4 * e
	if interp == "nearest" {
		fl = e
	}
	return o.g.addNode(node{name: o.name + "/Resize", kind: Elementwise, in: []int{x}, shape: out,
		flops: fl, dxFLOPs: fl, saveIn: 1}), nil
}

func opPool(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	rank := len(s) - 1
	if rank < 1 || rank > 3 {
		return 0, fmt.Errorf("op %s: input shape %v", o.op, s)
	}
	c := cfg{"pool_size": o.c["pool_size"], "strides": o.c["strides"], "padding": o.c["padding"]}
	class := "AveragePooling" + fmt.Sprint(rank) + "D"
	if o.op == "MaxPool" {
		class = "MaxPooling" + fmt.Sprint(rank) + "D"
	}
	if df, _ := o.c.str("data_format", "channels_last"); df == "channels_first" {
		return 0, fmt.Errorf("op %s: data_format channels_first", o.op)
	}
	y, err := o.g.apply(class, o.name, c, []int{x})
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	return y, nil
}

// opConv is ops.conv/ops.depthwise_conv with a kernel given in the call: a constant (a
// fixed filter, as an edge detector) or a tensor of the model; it has no weights of its own.
func opConv(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	kv, _ := o.arg(1, "kernel")
	var ks []int
	if kt, ok := o.tensor(kv); ok {
		ks = o.g.shape(kt)
	} else {
		ks = constShape0(kv)
	}
	rank := len(s) - 1
	if len(ks) != rank+2 {
		return 0, fmt.Errorf("op %s: kernel shape %v for input %v", o.op, ks, s)
	}
	st, err := o.c.ints("strides", rank, 1)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	dil, err := o.c.ints("dilation_rate", rank, 1)
	if err != nil {
		return 0, fmt.Errorf("op %s: %w", o.op, err)
	}
	pad, _ := o.c.str("padding", "valid")
	out := make([]int, rank+1)
	for i := 0; i < rank; i++ {
		out[i] = convOut(s[i], ks[i], st[i], dil[i], pad)
		if out[i] <= 0 {
			return 0, fmt.Errorf("op %s: kernel %v larger than input %v", o.op, ks, s)
		}
	}
	cin := s[rank]
	filters, groups := ks[rank+1], cin/max(ks[rank], 1)
	if o.op == "DepthwiseConv" {
		filters, groups = cin*ks[rank+1], cin
	}
	out[rank] = filters
	macs := float64(prod(out[:rank])) * float64(prod(ks[:rank])) * float64(cin/max(groups, 1)) * float64(filters)
	return o.g.addNode(node{name: o.name + "/Conv", kind: Conv, in: []int{x}, shape: out, flops: 2 * macs,
		dxFLOPs: 2 * macs, saveIn: 0, workspace: prod(ks[:rank]) > 1, kB: 1}), nil
}

func opOneHot(o *opCall) (int, error) {
	x, s, err := o.x0()
	if err != nil {
		return 0, err
	}
	n, err := o.c.int("num_classes", 0)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("op %s: num_classes %v", o.op, o.c["num_classes"])
	}
	out := append(clone(s), n)
	return o.g.addNode(node{name: o.name + "/OneHot", kind: Elementwise, in: []int{x}, shape: out,
		flops: float64(prod(out)), noGradIn: 1}), nil
}

func opNormalize(o *opCall) (int, error) {
	x, _, err := o.x0()
	if err != nil {
		return 0, err
	}
	// x / max(norm(x, axis), eps): a reduction and a scale, its gradient reading x and the norm.
	return o.g.addNode(node{name: o.name + "/Normalize", kind: Reduction, in: []int{x}, shape: clone(o.g.shape(x)),
		flops: 3 * float64(prod(o.g.shape(x))), dxFLOPs: 4 * float64(prod(o.g.shape(x))), saveIn: 1, saveOut: true}), nil
}

// opAttention is ops.dot_product_attention(query, key, value) on (batch, seq, heads, dim):
// softmax(q k^T * scale) v, as MultiHeadAttention's einsums without the projections.
func opAttention(o *opCall) (int, error) {
	var xs [3]int
	for i, k := range []string{"query", "key", "value"} {
		x, isT, _, err := o.operand(i, k)
		if err != nil || !isT {
			return 0, fmt.Errorf("op %s: %s is not a tensor of the model", o.op, k)
		}
		xs[i] = x
	}
	qs, ks, vs := o.g.shape(xs[0]), o.g.shape(xs[1]), o.g.shape(xs[2])
	if len(qs) != 3 || len(ks) != 3 || len(vs) != 3 || qs[2] != ks[2] || ks[0] != vs[0] {
		return 0, fmt.Errorf("op %s: query %v, key %v, value %v: want (sequence, heads, dim)", o.op, qs, ks, vs)
	}
	heads, sq, sk := float64(qs[1]), float64(qs[0]), float64(ks[0])
	sc := 2 * heads * sq * sk * float64(qs[2])
	scores := o.g.addNode(node{name: o.name + "/einsum_qk", kind: Attention, in: []int{xs[0], xs[1]},
		shape: []int{qs[1], qs[0], ks[0]}, flops: sc, dxFLOPs: 2 * sc, saveIn: 3, kB: 2,
		gemm: GEMMShape{M: int64(qs[0]), N: int64(ks[0]), K: int64(qs[2]), Batch: int64(qs[1])}})
	probs, err := o.g.act(o.name+"/softmax", "softmax", scores)
	if err != nil {
		return 0, err
	}
	av := 2 * heads * sq * sk * float64(vs[2])
	return o.g.addNode(node{name: o.name + "/einsum_av", kind: Attention, in: []int{probs, xs[2]},
		shape: []int{qs[0], qs[1], vs[2]}, flops: av, dxFLOPs: 2 * av, saveIn: 3, kB: 2,
		gemm: GEMMShape{M: int64(qs[0]), N: int64(vs[2]), K: int64(ks[0]), Batch: int64(qs[1])}}), nil
}
