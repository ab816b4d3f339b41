package models

// Builders of the keras_hub layers and gpusim's helpers for the zoo's transformers.

import (
	"fmt"
)

func init() {
	register(buildPositionEmbedding, "PositionEmbedding")
	register(buildClassToken, "ClassToken")
	register(buildTokenSlice, "TokenSlice")
	register(buildTiedLogits, "TiedLogits")
}

// buildPositionEmbedding applies keras_hub's PositionEmbedding (formerly keras_nlp).
func buildPositionEmbedding(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	if len(s) < 2 {
		return 0, fmt.Errorf("input shape %v: want (sequence, features)", s)
	}
	seq, err := c.int("sequence_length", s[0])
	if err != nil {
		return 0, err
	}
	if seq < s[0] {
		return 0, fmt.Errorf("sequence_length %d shorter than the input's %d", seq, s[0])
	}
	w := g.w("embeddings", []int{seq, s[len(s)-1]}, true, false, false)
	// keras_hub PositionEmbedding returns the table broadcast to the input's shape.
	return g.addNode(node{name: name + "/BroadcastTo", kind: Copy, in: []int{x}, shape: clone(s),
		dwFLOPs: float64(prod(s)), weights: []int{w}, noGradIn: 1}), nil
}

// buildClassToken applies ClassToken.
func buildClassToken(g *graph, l *layerCall) (int, error) {
	name, x, s := l.name, l.x, l.s
	if len(s) != 2 {
		return 0, fmt.Errorf("input shape %v: want (tokens, features)", s)
	}
	w := g.w("cls", []int{1, 1, s[1]}, true, false, false)
	return g.addNode(node{name: name + "/ConcatV2", kind: Copy, in: []int{x}, shape: []int{s[0] + 1, s[1]},
		dwFLOPs: float64(s[1]), weights: []int{w}}), nil
}

// buildTokenSlice applies TokenSlice.
func buildTokenSlice(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	if len(s) != 2 {
		return 0, fmt.Errorf("input shape %v: want (tokens, features)", s)
	}
	n, err := c.int("tokens", 1)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > s[0] {
		return 0, fmt.Errorf("tokens %d out of range for shape %v", n, s)
	}
	out := []int{n, s[1]}
	if n == 1 {
		out = []int{s[1]}
	}
	return g.addNode(node{name: name + "/StridedSlice", kind: Copy, in: []int{x}, shape: out}), nil
}

// buildTiedLogits applies TiedLogits.
func buildTiedLogits(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	// Logits against a (tied) embedding table: x @ E^T (+ bias), keras_hub
	// ReversibleEmbedding(reverse=True) and MaskedLMHead.
	src, err := c.str("embedding", "")
	if err != nil {
		return 0, err
	}
	var table = -1
	for i, w := range g.weights {
		if w.name == src+"/embeddings" {
			table = i
		}
	}
	if table < 0 {
		return 0, fmt.Errorf("field \"embedding\": no embedding layer %q", src)
	}
	vocab := g.weights[table].shape[0]
	if g.weights[table].shape[1] != s[len(s)-1] {
		return 0, fmt.Errorf("input features %d, embedding width %d", s[len(s)-1], g.weights[table].shape[1])
	}
	y := g.matmul(name, x, vocab, table)
	useBias, err := c.bool("use_bias", false)
	if err != nil {
		return 0, err
	}
	if useBias {
		y = g.bias(name, y, g.w("bias", []int{vocab}, true, true, false))
	}
	return y, nil
}
