package models

// Builders of the layers keras.applications defines for itself (keras/src/applications).

import (
	"fmt"
)

func init() {
	register(buildLayerScale, "LayerScale")
	register(buildCustomScale, "CustomScaleLayer")
	register(buildStochasticDepth, "StochasticDepth")
}

// buildLayerScale applies ConvNeXt's LayerScale (keras/src/applications/convnext.py): x * gamma,
// gamma a trainable (projection_dim,) vector. Its gradient reads x (for dgamma) and gamma.
func buildLayerScale(g *graph, l *layerCall) (int, error) {
	if err := l.need(1); err != nil {
		return 0, err
	}
	dim, err := l.c.int("projection_dim", 0)
	if err != nil {
		return 0, err
	}
	if len(l.s) == 0 || dim != l.s[len(l.s)-1] {
		return 0, fmt.Errorf("projection_dim %d for input shape %v", dim, l.s)
	}
	w := g.w("gamma", []int{dim}, true, true, false)
	e := float64(prod(l.s))
	return g.addNode(node{name: l.name + "/Mul", kind: Elementwise, in: []int{l.x}, shape: clone(l.s), flops: e,
		dxFLOPs: e, dwFLOPs: e, weights: []int{w}, ew: true, saveIn: 1}), nil
}

// buildCustomScale applies InceptionResNetV2's CustomScaleLayer
// (keras/src/applications/inception_resnet_v2.py): inputs[0] + inputs[1] * scale, a constant
// scale, so neither gradient reads a tensor.
func buildCustomScale(g *graph, l *layerCall) (int, error) {
	if err := l.need(2); err != nil {
		return 0, err
	}
	if _, err := l.c.float("scale", 0); err != nil {
		return 0, err
	}
	a, b := g.shape(l.ins[0]), g.shape(l.ins[1])
	if !broadcastable(a, b) {
		return 0, fmt.Errorf("input shapes %v and %v do not broadcast", a, b)
	}
	out := broadcastShape(a, b)
	e := float64(prod(out))
	return g.addNode(node{name: l.name + "/AddScaled", kind: Elementwise, in: clone(l.ins), shape: out,
		flops: 2 * e, dxFLOPs: e, ew: true}), nil
}

// buildStochasticDepth applies ConvNeXt's StochasticDepth: in training x / keep *
// floor(keep + U(0, 1)) with one random number per sample, a dropout whose mask is one element
// per sample; identity when drop_path_rate is 0.
func buildStochasticDepth(g *graph, l *layerCall) (int, error) {
	rate, err := l.c.float("drop_path_rate", 0)
	if err != nil {
		return 0, err
	}
	if rate <= 0 {
		return g.identity(l.name, l.x), nil
	}
	return g.dropout(l.name, l.x, 1), nil
}
