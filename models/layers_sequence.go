package models

// Builders of the recurrent, attention and TF-op layers.

import (
	"errors"
	"fmt"
)

func init() {
	register(buildRNN, "LSTM", "GRU", "SimpleRNN")
	register(buildBidirectional, "Bidirectional")
	register(buildMultiHeadAttention, "MultiHeadAttention")
	register(buildTFOp, "TFOpLambda", "SlicingOpLambda")
}

// buildRNN applies LSTM, GRU, SimpleRNN.
func buildRNN(g *graph, l *layerCall) (int, error) {
	class, name, c, x := l.class, l.name, l.c, l.x
	if err := l.need(1); err != nil {
		return 0, err
	}
	return g.applyRNN(class, name, c, x, "")
}

// buildBidirectional applies Bidirectional.
func buildBidirectional(g *graph, l *layerCall) (int, error) {
	name, c, x := l.name, l.c, l.x
	if err := l.need(1); err != nil {
		return 0, err
	}
	inner, ok := c["layer"].(map[string]any)
	if !ok {
		return 0, errors.New("field \"layer\": missing wrapped layer")
	}
	ic, _ := inner["class_name"].(string)
	icfg, _ := inner["config"].(map[string]any)
	if ic != "LSTM" && ic != "GRU" && ic != "SimpleRNN" {
		return 0, fmt.Errorf("wraps unsupported layer class %q", ic)
	}
	mm, err := c.str("merge_mode", "concat")
	if err != nil {
		return 0, err
	}
	return g.applyRNN(ic, name, cfg(icfg), x, mm)
}

// buildMultiHeadAttention applies MultiHeadAttention.
func buildMultiHeadAttention(g *graph, l *layerCall) (int, error) {
	name, c, ins := l.name, l.c, l.ins
	return g.applyMHA(name, c, ins)
}

// buildTFOp applies TFOpLambda, SlicingOpLambda.
func buildTFOp(g *graph, l *layerCall) (int, error) {
	class, name, c, ins := l.class, l.name, l.c, l.ins
	return g.applyTFOp(class, name, c, ins)
}
