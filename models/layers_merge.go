package models

// Builders of the merge layers.

import (
	"fmt"
)

func init() {
	register(buildMerge, "Add", "Subtract", "Average", "Maximum", "Minimum", "Multiply")
	register(buildConcatenate, "Concatenate")
}

// buildMerge applies Add, Subtract, Average, Maximum, Minimum, Multiply.
func buildMerge(g *graph, l *layerCall) (int, error) {
	class, name, ins, s := l.class, l.name, l.ins, l.s
	if err := l.atLeast(2); err != nil {
		return 0, err
	}
	for _, y := range ins[1:] {
		if !broadcastable(s, g.shape(y)) {
			return 0, fmt.Errorf("input shapes %v and %v differ", s, g.shape(y))
		}
	}
	out := ins[0]
	for _, y := range ins[1:] {
		if prod(g.shape(y)) > prod(g.shape(out)) {
			out = y
		}
	}
	os := clone(g.shape(out))
	e := float64(prod(os))
	n := node{name: name + "/" + class, kind: Elementwise, in: clone(ins), shape: os,
		flops: e * float64(len(ins)-1), dxFLOPs: e * float64(len(ins)), ew: true}
	switch class {
	case "Add":
		// AddGrad hands dy to every input unchanged when shapes agree (math_grad.py _AddGrad).
		if allSame(g, ins) {
			n.bwdShareDy = true
			n.dxFLOPs = 0
		}
	case "Multiply", "Maximum", "Minimum":
		n.saveIn = 1<<uint(len(ins)) - 1
	}
	return g.addNode(n), nil
}

// buildConcatenate applies Concatenate.
func buildConcatenate(g *graph, l *layerCall) (int, error) {
	name, c, ins, s := l.name, l.c, l.ins, l.s
	if err := l.atLeast(2); err != nil {
		return 0, err
	}
	axis, err := c.int("axis", -1)
	if err != nil {
		return 0, err
	}
	if axis < 0 {
		axis += len(s) + 1
	}
	if axis < 1 || axis > len(s) {
		return 0, fmt.Errorf("axis %d out of range for shape %v", axis, s)
	}
	out := clone(s)
	out[axis-1] = 0
	for _, y := range ins {
		ys := g.shape(y)
		if len(ys) != len(s) {
			return 0, fmt.Errorf("input shapes %v and %v differ in rank", s, ys)
		}
		for i := range ys {
			if i != axis-1 && ys[i] != s[i] {
				return 0, fmt.Errorf("input shapes %v and %v differ off axis %d", s, ys, axis)
			}
		}
		out[axis-1] += ys[axis-1]
	}
	// ConcatV2 copies its inputs; its gradient slices dy once per input.
	return g.addNode(node{name: name + "/ConcatV2", kind: Copy, in: clone(ins), shape: out, kB: len(ins)}), nil
}
