package models

// Builders of the wrappers and the layers built from cells: RNN over a cell (or
// StackedRNNCells), ConvLSTM1D-3D, TimeDistributed, SpectralNormalization, Pipeline.

import (
	"errors"
	"fmt"
)

func init() {
	register(buildRNNCell, "RNN")
	register(buildConvLSTM, "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D")
	register(buildTimeDistributed, "TimeDistributed")
	register(buildSpectralNorm, "SpectralNormalization")
	register(buildPipeline, "Pipeline")
}

// innerLayer reads a wrapper's serialized layer or cell ({"class_name", "config"}).
func innerLayer(v any, key string) (string, cfg, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", nil, fmt.Errorf("field %q: missing serialized layer", key)
	}
	class, _ := m["class_name"].(string)
	c, _ := m["config"].(map[string]any)
	if class == "" || c == nil {
		return "", nil, fmt.Errorf("field %q: a layer without class_name or config", key)
	}
	return class, cfg(c), nil
}

var cellLayers = map[string]string{"LSTMCell": "LSTM", "GRUCell": "GRU", "SimpleRNNCell": "SimpleRNN"}

// buildRNNCell applies keras.layers.RNN over an LSTMCell, GRUCell or SimpleRNNCell (as the
// LSTM, GRU and SimpleRNN layers built on them), or a StackedRNNCells: each cell's sequence
// feeds the next, the last returning what the RNN's return_sequences says.
func buildRNNCell(g *graph, l *layerCall) (int, error) {
	if err := l.need(1); err != nil {
		return 0, err
	}
	class, c, err := innerLayer(l.c["cell"], "cell")
	if err != nil {
		return 0, err
	}
	var cells []any
	if class == "StackedRNNCells" {
		cells, _ = c["cells"].([]any)
		if len(cells) == 0 {
			return 0, errors.New("StackedRNNCells without cells")
		}
	} else {
		cells = []any{l.c["cell"]}
	}
	seq, err := l.c.bool("return_sequences", false)
	if err != nil {
		return 0, err
	}
	x := l.x
	for i, cell := range cells {
		cc, ccfg, err := innerLayer(cell, "cell")
		if err != nil {
			return 0, err
		}
		layer, ok := cellLayers[cc]
		if !ok {
			return 0, fmt.Errorf("cell class %q: want LSTMCell, GRUCell or SimpleRNNCell", cc)
		}
		lc := cfg{}
		for k, v := range ccfg {
			lc[k] = v
		}
		lc["return_sequences"] = seq || i < len(cells)-1
		name := l.name
		if len(cells) > 1 {
			// Each cell's own variables (g.w names them under g.pending).
			name = fmt.Sprintf("%s/cell_%d", l.name, i)
			old := g.pending
			g.pending = name
			x, err = g.applyRNN(layer, name, lc, x, "")
			g.pending = old
		} else {
			x, err = g.applyRNN(layer, name, lc, x, "")
		}
		if err != nil {
			return 0, err
		}
	}
	return x, nil
}

// buildConvLSTM applies ConvLSTM1D/2D/3D (keras/src/layers/rnn/conv_lstm.py): per time step
// four gates of a convolution of the input (kernel: k..., in, 4*filters) and of the state
// ("same" recurrent kernel: k..., filters, 4*filters), a bias of 4*filters. Like the cuDNN
// RNN of applyRNN it keeps every step's gates for backward.
func buildConvLSTM(g *graph, l *layerCall) (int, error) {
	rank := int(l.class[len(l.class)-2] - '0')
	if len(l.s) != rank+2 {
		return 0, fmt.Errorf("input shape %v: want (time, %d spatial axes, channels)", l.s, rank)
	}
	filters, err := l.c.int("filters", 0)
	if err != nil || filters <= 0 {
		return 0, fmt.Errorf("filters %v", l.c["filters"])
	}
	k, err := l.c.ints("kernel_size", rank, 0)
	if err != nil {
		return 0, err
	}
	st, err := l.c.ints("strides", rank, 1)
	if err != nil {
		return 0, err
	}
	dil, err := l.c.ints("dilation_rate", rank, 1)
	if err != nil {
		return 0, err
	}
	pad, _ := l.c.str("padding", "valid")
	steps, cin := l.s[0], l.s[rank+1]
	sp := make([]int, rank)
	for i := range sp {
		if sp[i] = convOut(l.s[i+1], k[i], st[i], dil[i], pad); sp[i] <= 0 || k[i] <= 0 {
			return 0, fmt.Errorf("kernel %v larger than input %v", k, l.s)
		}
	}
	ws := []int{g.w("kernel", append(clone(k), cin, 4*filters), true, true, true),
		g.w("recurrent_kernel", append(clone(k), filters, 4*filters), true, true, true)}
	if b, _ := l.c.bool("use_bias", true); b {
		ws = append(ws, g.w("bias", []int{4 * filters}, true, true, false))
	}
	cell := prod(sp) * int64(filters)
	macs := float64(steps) * float64(cell) * 4 * float64(prod(k)) * float64(cin+filters)
	ew := float64(steps) * float64(cell) * 10
	out := append(clone(sp), filters)
	if seq, _ := l.c.bool("return_sequences", false); seq {
		out = append([]int{steps}, out...)
	}
	return g.addNode(node{name: l.name + "/ConvLSTM", kind: Recurrent, in: []int{l.x}, shape: out,
		flops: 2*macs + ew, dxFLOPs: 2*macs + 2*ew, dwFLOPs: 2 * macs, weights: ws, saveIn: 1, saveOut: true,
		maskElems: int64(steps) * cell * 6, kF: 3 * steps, kB: 6 * steps}), nil
}

// buildTimeDistributed applies its layer to every time step: the layer is built on one step's
// shape and its ops then count the steps (every node's shape gets the time axis, its FLOPs
// and kept tensors times the steps), as TF runs it on a (batch*time, ...) reshape.
func buildTimeDistributed(g *graph, l *layerCall) (int, error) {
	if err := l.need(1); err != nil {
		return 0, err
	}
	class, c, err := innerLayer(l.c["layer"], "layer")
	if err != nil {
		return 0, err
	}
	if len(l.s) < 2 {
		return 0, fmt.Errorf("input shape %v: want (time, ...)", l.s)
	}
	t := l.s[0]
	n0 := len(g.nodes)
	step := g.addNode(node{name: l.name + "/step", kind: Copy, in: []int{l.x}, shape: clone(l.s[1:]), alias: true})
	y, err := g.apply(class, l.name, c, []int{step})
	if err != nil {
		return 0, fmt.Errorf("wrapped %s: %w", class, err)
	}
	ft := float64(t)
	for i := n0; i < len(g.nodes); i++ {
		n := &g.nodes[i]
		n.shape = append([]int{t}, n.shape...)
		n.elems = prod(n.shape)
		n.flops *= ft
		n.dxFLOPs *= ft
		n.dwFLOPs *= ft
		n.maskElems *= int64(t)
		n.composite *= int64(t)
		n.gemm.M *= int64(t)
	}
	g.nodes[step].shape = clone(l.s)
	g.nodes[step].elems = prod(l.s)
	return y, nil
}

// buildSpectralNorm applies SpectralNormalization(layer): the layer with its kernel divided
// by its largest singular value, estimated by one power iteration on the non-trainable
// vector_u (1, kernel's last dimension) each training step (keras spectral_normalization.py).
func buildSpectralNorm(g *graph, l *layerCall) (int, error) {
	class, c, err := innerLayer(l.c["layer"], "layer")
	if err != nil {
		return 0, err
	}
	w0 := len(g.weights)
	y, err := g.apply(class, l.name, c, l.ins)
	if err != nil {
		return 0, fmt.Errorf("wrapped %s: %w", class, err)
	}
	for i := w0; i < len(g.weights); i++ {
		if sh := g.weights[i].shape; len(sh) >= 2 && g.weights[i].trainable {
			g.w("vector_u", []int{1, sh[len(sh)-1]}, false, false, false)
			return y, nil
		}
	}
	return 0, fmt.Errorf("wrapped %s has no kernel to normalize", class)
}

// buildPipeline applies keras.layers.Pipeline: its layers one after the other.
func buildPipeline(g *graph, l *layerCall) (int, error) {
	layers, _ := l.c["layers"].([]any)
	if len(layers) == 0 {
		return 0, errors.New("field \"layers\": no layers")
	}
	x := l.x
	for i, v := range layers {
		class, c, err := innerLayer(v, "layers")
		if err != nil {
			return 0, err
		}
		if x, err = g.apply(class, fmt.Sprintf("%s/%d", l.name, i), c, []int{x}); err != nil {
			return 0, fmt.Errorf("layer %d (%s): %w", i, class, err)
		}
	}
	return x, nil
}
