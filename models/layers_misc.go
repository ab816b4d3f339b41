package models

// Builders of the remaining core, reshaping, merging, normalization, regularization and
// pooling layers of keras.layers (keras/src/layers/**), by family.

import (
	"fmt"
	"slices"
	"strings"
)

func init() {
	register(buildIdentity, "Identity", "ActivityRegularization")
	register(buildMasking, "Masking")
	register(buildNoise, "GaussianNoise", "GaussianDropout", "AlphaDropout")
	register(buildPReLU, "PReLU")
	register(buildPermute, "Permute")
	register(buildRepeatVector, "RepeatVector")
	register(buildDot, "Dot")
	register(buildEinsumDense, "EinsumDense")
	register(buildGroupNorm, "GroupNormalization")
	register(buildRMSNorm, "RMSNormalization")
	register(buildUnitNorm, "UnitNormalization")
	register(buildAdaptivePooling, "AdaptiveAveragePooling1D", "AdaptiveAveragePooling2D", "AdaptiveAveragePooling3D",
		"AdaptiveMaxPooling1D", "AdaptiveMaxPooling2D", "AdaptiveMaxPooling3D")
	register(buildReversibleEmbedding, "ReversibleEmbedding")
}

// buildIdentity applies Identity (a no-op) and ActivityRegularization, whose forward output is
// its input (it adds l1 * sum|x| + l2 * sum x^2 to the loss: a reduction of x forward and
// l1 * sign(x) + 2 * l2 * x into dx, so it keeps x).
func buildIdentity(g *graph, l *layerCall) (int, error) {
	if l.class == "Identity" {
		return g.identity(l.name, l.x), nil
	}
	e := float64(prod(l.s))
	return g.addNode(node{name: l.name + "/ActivityRegularizer", kind: Reduction, in: []int{l.x}, shape: clone(l.s),
		alias: true, flops: 3 * e, dxFLOPs: 3 * e, saveIn: 1}), nil
}

// buildMasking applies Masking: x * any(x != mask_value, axis=-1) (keras masking.py), the
// boolean mask kept for the gradient.
func buildMasking(g *graph, l *layerCall) (int, error) {
	e := float64(prod(l.s))
	n := node{name: l.name + "/Masking", kind: Elementwise, in: []int{l.x}, shape: clone(l.s), flops: 3 * e, dxFLOPs: e}
	if len(l.s) > 0 {
		n.maskElems = prod(l.s) / int64(l.s[len(l.s)-1])
	}
	return g.addNode(n), nil
}

// buildNoise applies GaussianNoise (x + noise: nothing to keep), GaussianDropout (x * noise:
// the noise is kept) and AlphaDropout (a dropout with an affine correction: its mask is kept),
// as they run in training.
func buildNoise(g *graph, l *layerCall) (int, error) {
	key := "rate"
	if l.class == "GaussianNoise" {
		key = "stddev"
	}
	r, err := l.c.float(key, 0)
	if err != nil {
		return 0, err
	}
	if r <= 0 {
		return g.identity(l.name, l.x), nil
	}
	if l.class == "GaussianNoise" {
		e := float64(prod(l.s))
		return g.addNode(node{name: l.name + "/AddNoise", kind: Elementwise, in: []int{l.x}, shape: clone(l.s),
			flops: 3 * e, kF: 2, bwdShareDy: true}), nil
	}
	return g.dropout(l.name, l.x, prod(l.s)), nil
}

// buildPReLU applies PReLU: alpha has the input's shape with shared_axes set to 1.
func buildPReLU(g *graph, l *layerCall) (int, error) {
	shape := clone(l.s)
	shared, err := l.c.ints("shared_axes", 0, 0)
	if err != nil {
		return 0, err
	}
	if _, ok := l.c.get("shared_axes"); ok {
		for _, a := range shared {
			i, err := axisOf("PReLU", a, len(l.s))
			if err != nil {
				return 0, err
			}
			shape[i] = 1
		}
	}
	w := g.w("alpha", shape, true, true, true)
	e := float64(prod(l.s))
	return g.addNode(node{name: l.name + "/PReLU", kind: Elementwise, in: []int{l.x}, shape: clone(l.s), flops: 2 * e,
		dxFLOPs: 2 * e, dwFLOPs: 2 * e, weights: []int{w}, ew: true, saveIn: 1}), nil
}

// buildPermute applies Permute(dims): dims are 1-based over the per-sample axes.
func buildPermute(g *graph, l *layerCall) (int, error) {
	dims, err := l.c.ints("dims", 0, 0)
	if err != nil {
		return 0, err
	}
	if len(dims) != len(l.s) {
		return 0, fmt.Errorf("dims %v for input shape %v", dims, l.s)
	}
	out := make([]int, len(dims))
	seen := make([]bool, len(dims))
	for i, d := range dims {
		if d < 1 || d > len(l.s) || seen[d-1] {
			return 0, fmt.Errorf("dims %v is not a permutation of 1..%d", dims, len(l.s))
		}
		seen[d-1] = true
		out[i] = l.s[d-1]
	}
	return g.addNode(node{name: l.name + "/Transpose", kind: Copy, in: []int{l.x}, shape: out}), nil
}

// buildRepeatVector applies RepeatVector(n): (d) to (n, d).
func buildRepeatVector(g *graph, l *layerCall) (int, error) {
	n, err := l.c.int("n", 0)
	if err != nil {
		return 0, err
	}
	if n <= 0 || len(l.s) != 1 {
		return 0, fmt.Errorf("n %d on input shape %v (want one axis)", n, l.s)
	}
	return g.addNode(node{name: l.name + "/Tile", kind: Copy, in: []int{l.x}, shape: []int{n, l.s[0]}}), nil
}

// buildDot applies Dot(axes, normalize): a batched dot product over one axis of each input
// (keras merging/dot.py batch_dot), l2-normalizing them first when asked.
func buildDot(g *graph, l *layerCall) (int, error) {
	if err := l.need(2); err != nil {
		return 0, err
	}
	a, b := l.s, g.shape(l.ins[1])
	axes, err := l.c.ints("axes", 2, 0)
	if err != nil {
		return 0, err
	}
	i, err := axisOf("Dot", axes[0], len(a))
	if err != nil {
		return 0, err
	}
	j, err := axisOf("Dot", axes[1], len(b))
	if err != nil {
		return 0, err
	}
	if a[i] != b[j] {
		return 0, fmt.Errorf("axes %v: %d and %d differ (shapes %v, %v)", axes, a[i], b[j], a, b)
	}
	out := append(slices.Delete(clone(a), i, i+1), slices.Delete(clone(b), j, j+1)...)
	if len(out) == 0 {
		out = []int{1}
	}
	ins := clone(l.ins)
	if norm, _ := l.c.bool("normalize", false); norm {
		for k := range ins {
			ins[k] = g.addNode(node{name: l.name + fmt.Sprintf("/l2_normalize_%d", k), kind: Reduction, in: []int{ins[k]},
				shape: clone(g.shape(ins[k])), flops: 3 * float64(prod(g.shape(ins[k]))), dxFLOPs: 4 * float64(prod(g.shape(ins[k]))), saveIn: 1, saveOut: true})
		}
	}
	macs := float64(prod(out)) * float64(a[i])
	return g.addNode(node{name: l.name + "/BatchMatMulV2", kind: MatMul, in: ins, shape: out, flops: 2 * macs,
		dxFLOPs: 4 * macs, saveIn: 3, kB: 2}), nil
}

// buildEinsumDense applies EinsumDense(equation, output_shape, bias_axes)
// (keras/src/layers/core/einsum_dense.py _analyze_einsum_string): the kernel's labels take
// their sizes from the input or from output_shape (which leaves out the batch), the bias
// spans bias_axes.
func buildEinsumDense(g *graph, l *layerCall) (int, error) {
	eq, err := l.c.str("equation", "")
	if err != nil {
		return 0, err
	}
	lhs, outLabels, ok := strings.Cut(strings.ReplaceAll(eq, " ", ""), "->")
	inLabels, kLabels, ok2 := strings.Cut(lhs, ",")
	if !ok || !ok2 || strings.Contains(eq, ".") || outLabels == "" || inLabels == "" {
		return 0, fmt.Errorf("equation %q: want \"in,kernel->out\" without ellipses", eq)
	}
	if len(inLabels) != len(l.s)+1 {
		return 0, fmt.Errorf("equation %q for input rank %d with the batch", eq, len(l.s)+1)
	}
	size := map[rune]int{}
	for i, r := range inLabels[1:] {
		size[r] = l.s[i]
	}
	osh, _ := l.c["output_shape"].([]any)
	if v, ok := l.c["output_shape"]; ok && osh == nil {
		osh = []any{v}
	}
	outR := []rune(outLabels)[1:]
	if len(osh) != len(outR) {
		return 0, fmt.Errorf("output_shape %v for %d output axes besides the batch", l.c["output_shape"], len(outR))
	}
	for i, r := range outR {
		if osh[i] == nil {
			continue
		}
		d, err := toInt(osh[i])
		if err != nil {
			return 0, fmt.Errorf("field \"output_shape\": %w", err)
		}
		size[r] = d
	}
	dimsOf := func(labels string) ([]int, error) {
		var out []int
		for _, r := range labels {
			d, ok := size[r]
			if !ok {
				return nil, fmt.Errorf("equation %q: label %c has no size", eq, r)
			}
			out = append(out, d)
		}
		return out, nil
	}
	ks, err := dimsOf(kLabels)
	if err != nil {
		return 0, err
	}
	out, err := dimsOf(string(outR))
	if err != nil {
		return 0, err
	}
	k := g.w("kernel", ks, true, true, true)
	macs := 1.0
	for _, d := range size {
		macs *= float64(d)
	}
	y := g.addNode(node{name: l.name + "/Einsum", kind: MatMul, in: []int{l.x}, shape: out, flops: 2 * macs,
		dxFLOPs: 2 * macs, dwFLOPs: 2 * macs, weights: []int{k}, saveIn: 1})
	if ba, _ := l.c.str("bias_axes", ""); ba != "" {
		bs, err := dimsOf(ba)
		if err != nil {
			return 0, err
		}
		y = g.bias(l.name, y, g.w("bias", bs, true, true, false))
	}
	fn, err := l.c.activation("activation")
	if err != nil {
		return 0, err
	}
	return g.act(l.name, fn, y)
}

// buildGroupNorm applies GroupNormalization: gamma and beta per channel, normalized over
// groups of channels as a layer norm is over its axis.
func buildGroupNorm(g *graph, l *layerCall) (int, error) {
	ch, err := axisChannels(l.c, l.s)
	if err != nil {
		return 0, err
	}
	groups, err := l.c.int("groups", 32)
	if err != nil {
		return 0, err
	}
	if groups <= 0 || ch%groups != 0 {
		return 0, fmt.Errorf("groups %d for %d channels", groups, ch)
	}
	var ws []int
	if s, _ := l.c.bool("scale", true); s {
		ws = append(ws, g.w("gamma", []int{ch}, true, false, false))
	}
	if c, _ := l.c.bool("center", true); c {
		ws = append(ws, g.w("beta", []int{ch}, true, false, false))
	}
	return g.layerNorm(l.name, l.x, ws), nil
}

// buildRMSNorm applies RMSNormalization: x * rsqrt(mean(x^2)) * scale, scale over axis.
func buildRMSNorm(g *graph, l *layerCall) (int, error) {
	ch, err := axisChannels(l.c, l.s)
	if err != nil {
		return 0, err
	}
	return g.layerNorm(l.name, l.x, []int{g.w("scale", []int{ch}, true, false, false)}), nil
}

// buildUnitNorm applies UnitNormalization: x / ||x|| over axis, its gradient reading x and
// the result.
func buildUnitNorm(g *graph, l *layerCall) (int, error) {
	e := float64(prod(l.s))
	return g.addNode(node{name: l.name + "/l2_normalize", kind: Reduction, in: []int{l.x}, shape: clone(l.s),
		flops: 3 * e, dxFLOPs: 4 * e, saveIn: 1, saveOut: true}), nil
}

// buildAdaptivePooling applies AdaptiveAverage/MaxPooling1D-3D: output_size cells, each the
// mean or max of its share of the input (every input element read once).
func buildAdaptivePooling(g *graph, l *layerCall) (int, error) {
	rank := int(l.class[len(l.class)-2] - '0')
	if len(l.s) != rank+1 {
		return 0, fmt.Errorf("input shape %v: want rank %d", l.s, rank+2)
	}
	osz, err := l.c.ints("output_size", rank, 0)
	if err != nil {
		return 0, err
	}
	out := clone(l.s)
	for i := 0; i < rank; i++ {
		if osz[i] <= 0 || osz[i] > l.s[i] {
			return 0, fmt.Errorf("output_size %v for input %v", osz, l.s)
		}
		out[i] = osz[i]
	}
	e := float64(prod(l.s))
	n := node{name: l.name + "/AdaptivePool", kind: Pool, in: []int{l.x}, shape: out, flops: e, dxFLOPs: e}
	if strings.Contains(l.class, "Max") {
		n.saveIn, n.saveOut = 1, true
	}
	return g.addNode(n), nil
}

// buildReversibleEmbedding applies ReversibleEmbedding forward (a lookup; reverse=True calls
// are the logits): embeddings, and reverse_embeddings when tie_weights is false.
func buildReversibleEmbedding(g *graph, l *layerCall) (int, error) {
	y, err := buildEmbedding(g, l)
	if err != nil {
		return 0, err
	}
	if tie, _ := l.c.bool("tie_weights", true); !tie {
		vocab, _ := l.c.int("input_dim", 0)
		dim, _ := l.c.int("output_dim", 0)
		g.w("reverse_embeddings", []int{dim, vocab}, true, true, true)
	}
	return y, nil
}
