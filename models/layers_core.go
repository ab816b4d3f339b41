package models

// Builders of the core layers: dense, activations, dropout, normalization, reshaping, embedding.

import (
	"errors"
	"fmt"
)

func init() {
	register(buildDense, "Dense")
	register(buildNormalization, "BatchNormalization", "LayerNormalization")
	register(buildActivation, "Activation")
	register(buildRelu, "ReLU")
	register(buildLeakyReLU, "LeakyReLU")
	register(buildElu, "ELU")
	register(buildSoftmax, "Softmax")
	register(buildDropout, "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D")
	register(buildDense, "TernaryDense")
	register(buildFlatten, "Flatten")
	register(buildReshape, "Reshape")
	register(buildRescaling, "Rescaling")
	register(buildNormalizationLayer, "Normalization")
	register(buildEmbedding, "Embedding")
}

// buildDense applies Dense.
func buildDense(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	units, err := c.int("units", 0)
	if err != nil {
		return 0, err
	}
	if units <= 0 || len(s) == 0 {
		return 0, fmt.Errorf("units %d on input shape %v", units, s)
	}
	useBias, err := c.bool("use_bias", true)
	if err != nil {
		return 0, err
	}
	fn, err := c.activation("activation")
	if err != nil {
		return 0, err
	}
	k := g.w("kernel", []int{s[len(s)-1], units}, true, true, true)
	y := g.matmul(name, x, units, k)
	if useBias {
		y = g.bias(name, y, g.w("bias", []int{units}, true, true, false))
	}
	return g.act(name, fn, y)
}

// buildNormalization applies BatchNormalization, LayerNormalization.
func buildNormalization(g *graph, l *layerCall) (int, error) {
	class, name, c, x, s := l.class, l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	if len(s) == 0 {
		return 0, errors.New("scalar input")
	}
	ch, err := axisChannels(c, s)
	if err != nil {
		return 0, err
	}
	center, err := c.bool("center", true)
	if err != nil {
		return 0, err
	}
	scale, err := c.bool("scale", true)
	if err != nil {
		return 0, err
	}
	var ws []int
	if scale {
		ws = append(ws, g.w("gamma", []int{ch}, true, false, false))
	}
	// LayerNormalization(rms_scaling=True) has gamma only (keras layer_normalization.py build).
	if rms, _ := c.bool("rms_scaling", false); center && !(rms && class == "LayerNormalization") {
		ws = append(ws, g.w("beta", []int{ch}, true, false, false))
	}
	if class == "LayerNormalization" {
		return g.layerNorm(name, x, ws), nil
	}
	g.w("moving_mean", []int{ch}, false, false, false)
	g.w("moving_variance", []int{ch}, false, false, false)
	return g.batchNorm(name, x, ws), nil
}

// buildActivation applies Activation.
func buildActivation(g *graph, l *layerCall) (int, error) {
	name, c, x := l.name, l.c, l.x
	fn, err := c.activation("activation")
	if err != nil {
		return 0, err
	}
	return g.act(name, fn, x)
}

// buildRelu applies ReLU.
func buildRelu(g *graph, l *layerCall) (int, error) {
	name, c, x := l.name, l.c, l.x
	mv, err := c.float("max_value", 0)
	if err != nil {
		return 0, err
	}
	if mv > 0 {
		return g.act(name, "relu_max_value", x)
	}
	return g.act(name, "relu", x)
}

// buildLeakyReLU applies LeakyReLU.
func buildLeakyReLU(g *graph, l *layerCall) (int, error) {
	name, x := l.name, l.x
	return g.act(name, "leaky_relu", x)
}

// buildElu applies ELU.
func buildElu(g *graph, l *layerCall) (int, error) {
	name, x := l.name, l.x
	return g.act(name, "elu", x)
}

// buildSoftmax applies Softmax.
func buildSoftmax(g *graph, l *layerCall) (int, error) {
	name, x := l.name, l.x
	return g.act(name, "softmax", x)
}

// buildDropout applies Dropout, SpatialDropout1D, SpatialDropout2D.
func buildDropout(g *graph, l *layerCall) (int, error) {
	class, name, c, x, s := l.class, l.name, l.c, l.x, l.s
	rate, err := c.float("rate", 0)
	if err != nil {
		return 0, err
	}
	if rate <= 0 {
		return g.identity(name, x), nil
	}
	mask := prod(s)
	if v, ok := c.get("noise_shape"); ok {
		ns, ok := v.([]any)
		if !ok {
			if ni, ok2 := v.([]int); ok2 {
				ns = anyInts(ni)
			} else {
				return 0, fmt.Errorf("field \"noise_shape\": %v is not a list", v)
			}
		}
		if len(ns) != len(s)+1 {
			return 0, fmt.Errorf("field \"noise_shape\": rank %d, input rank %d", len(ns), len(s)+1)
		}
		mask = 1
		for i, d := range ns[1:] {
			if d == nil {
				mask *= int64(s[i])
				continue
			}
			v, err := toInt(d)
			if err != nil {
				return 0, fmt.Errorf("field \"noise_shape\": %w", err)
			}
			mask *= int64(v)
		}
	}
	if class == "SpatialDropout2D" && len(s) == 3 {
		mask = int64(s[2])
	}
	if class == "SpatialDropout3D" && len(s) == 4 {
		mask = int64(s[3])
	}
	if class == "SpatialDropout1D" && len(s) == 2 {
		mask = int64(s[1])
	}
	return g.dropout(name, x, mask), nil
}

// buildFlatten applies Flatten.
func buildFlatten(g *graph, l *layerCall) (int, error) {
	name, x, s := l.name, l.x, l.s
	return g.reshape(name, x, []int{int(prod(s))}), nil
}

// buildReshape applies Reshape.
func buildReshape(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	ts, err := c.ints("target_shape", 0, 0)
	if err != nil {
		return 0, err
	}
	total := prod(s)
	known, unknown := int64(1), -1
	for i, d := range ts {
		switch {
		case d == -1 && unknown < 0:
			unknown = i
		case d <= 0:
			return 0, fmt.Errorf("target_shape %v", ts)
		default:
			known *= int64(d)
		}
	}
	if unknown >= 0 {
		if known == 0 || total%known != 0 {
			return 0, fmt.Errorf("cannot reshape %v to %v", s, ts)
		}
		ts[unknown] = int(total / known)
	} else if known != total {
		return 0, fmt.Errorf("cannot reshape %v (%d elements) to %v", s, total, ts)
	}
	return g.reshape(name, x, ts), nil
}

// buildRescaling applies Rescaling.
func buildRescaling(g *graph, l *layerCall) (int, error) {
	name, x := l.name, l.x
	return g.ewNode(name+"/Rescaling", []int{x}, 2, 0), nil
}

// buildNormalizationLayer applies Normalization.
func buildNormalizationLayer(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	ch, err := axisChannels(c, s)
	if err != nil {
		return 0, err
	}
	// keras Normalization.build: adapt_mean, adapt_variance and count are non-trainable
	// weights when mean/variance are not given in the config.
	if _, given := c.get("mean"); !given {
		g.w("mean", []int{ch}, false, false, false)
		g.w("variance", []int{ch}, false, false, false)
		g.w("count", nil, false, false, false)
	}
	return g.ewNode(name+"/Normalization", []int{x}, 2, 0), nil
}

// buildEmbedding applies Embedding.
func buildEmbedding(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	vocab, err := c.int("input_dim", 0)
	if err != nil {
		return 0, err
	}
	dim, err := c.int("output_dim", 0)
	if err != nil {
		return 0, err
	}
	if vocab <= 0 || dim <= 0 {
		return 0, fmt.Errorf("input_dim %d, output_dim %d", vocab, dim)
	}
	w := g.w("embeddings", []int{vocab, dim}, true, false, false)
	out := append(clone(s), dim)
	return g.addNode(node{name: name + "/Gather", kind: Embedding, in: []int{x}, shape: out,
		dwFLOPs: float64(prod(out)), weights: []int{w}, f32: true, noGradIn: 1, saveIn: 1}), nil
}
