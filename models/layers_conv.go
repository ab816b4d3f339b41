package models

// Builders of the convolution, pooling, padding and upsampling layers.

import (
	"fmt"
	"strings"
)

func init() {
	register(buildConv, "Conv1D", "Conv2D", "Conv3D", "DepthwiseConv2D", "SeparableConv2D", "DepthwiseConv1D",
		"SeparableConv1D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose")
	register(buildPooling, "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
		"AveragePooling3D")
	register(buildGlobalPooling, "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
		"GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D")
	register(buildZeroPadding, "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D")
	register(buildCropping, "Cropping1D", "Cropping2D", "Cropping3D")
	register(buildUpSampling, "UpSampling1D", "UpSampling2D", "UpSampling3D")
}

// buildConv applies Conv1D, Conv2D, Conv3D, DepthwiseConv2D, SeparableConv2D, DepthwiseConv1D, SeparableConv1D, Conv1DTranspose, Conv2DTranspose.
func buildConv(g *graph, l *layerCall) (int, error) {
	class, name, c, x := l.class, l.name, l.c, l.x
	if err := l.need(1); err != nil {
		return 0, err
	}
	return g.applyConv(class, name, c, x)
}

// buildPooling applies MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D.
func buildPooling(g *graph, l *layerCall) (int, error) {
	class, name, c, x, s := l.class, l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	rank := int(class[len(class)-2] - '0')
	if len(s) != rank+1 {
		return 0, fmt.Errorf("input shape %v: want rank %d", s, rank+2)
	}
	ps, err := c.ints("pool_size", rank, 2)
	if err != nil {
		return 0, err
	}
	st, err := c.ints("strides", rank, 0)
	if err != nil {
		return 0, err
	}
	pad, err := c.str("padding", "valid")
	if err != nil {
		return 0, err
	}
	out := clone(s)
	for i := 0; i < rank; i++ {
		if st[i] <= 0 {
			st[i] = ps[i]
		}
		if ps[i] <= 0 {
			return 0, fmt.Errorf("pool_size %v", ps)
		}
		out[i] = convOut(s[i], ps[i], st[i], 1, pad)
		if out[i] <= 0 {
			return 0, fmt.Errorf("pool_size %v larger than input %v", ps, s)
		}
	}
	return g.pool(name, x, out, int(prod(ps)), class[0] == 'M'), nil
}

// buildGlobalPooling applies GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D.
func buildGlobalPooling(g *graph, l *layerCall) (int, error) {
	class, name, c, x, s := l.class, l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	if len(s) < 2 {
		return 0, fmt.Errorf("input shape %v: want spatial dims", s)
	}
	keep, err := c.bool("keepdims", false)
	if err != nil {
		return 0, err
	}
	ch := s[len(s)-1]
	var out []int
	if keep {
		out = make([]int, len(s))
		for i := range out {
			out[i] = 1
		}
		out[len(out)-1] = ch
	} else {
		out = []int{ch}
	}
	e := float64(prod(s))
	n := node{name: name + "/Mean", kind: Reduction, in: []int{x}, shape: out, flops: e, dxFLOPs: e}
	if class[6] == 'M' {
		n.name = name + "/Max"
		n.saveIn, n.saveOut = 1, true
	}
	return g.addNode(n), nil
}

// buildZeroPadding applies ZeroPadding1D, ZeroPadding2D.
func buildZeroPadding(g *graph, l *layerCall) (int, error) {
	name, c, x, s := l.name, l.c, l.x, l.s
	pad, err := readPadding(c, len(s)-1)
	if err != nil {
		return 0, err
	}
	out := clone(s)
	sym := true
	for i := 0; i < len(s)-1; i++ {
		out[i] += pad[2*i] + pad[2*i+1]
		sym = sym && pad[2*i] == pad[2*i+1]
	}
	return g.addNode(node{name: name + "/Pad", kind: Copy, in: []int{x}, shape: out, padSym: sym}), nil
}

// buildUpSampling applies UpSampling1D, UpSampling2D.
func buildUpSampling(g *graph, l *layerCall) (int, error) {
	class, name, c, x, s := l.class, l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	rank := int(class[len(class)-2] - '0')
	if len(s) != rank+1 {
		return 0, fmt.Errorf("input shape %v: want rank %d", s, rank+2)
	}
	key := "size"
	def := 2
	f, err := c.ints(key, rank, def)
	if err != nil {
		return 0, err
	}
	interp, err := c.str("interpolation", "nearest")
	if err != nil {
		return 0, err
	}
	out := clone(s)
	for i := 0; i < rank; i++ {
		if f[i] <= 0 {
			return 0, fmt.Errorf("size %v", f)
		}
		out[i] *= f[i]
	}
	// keras UpSampling2D: tf.image.resize (ResizeNearestNeighbor or ResizeBilinear;
	// keras/src/backend/tensorflow/image.py resize); UpSampling1D: tf.repeat. The
	// gradient sums dy over each window: a read of dy and a write of dx.
	e := float64(prod(out))
	fl := e
	if interp == "bilinear" {
		fl = 4 * e
	}
	return g.addNode(node{name: name + "/Resize", kind: Elementwise, in: []int{x}, shape: out, flops: fl, dxFLOPs: fl}), nil
}

// buildCropping applies Cropping1D, Cropping2D, Cropping3D: a slice of the spatial axes
// ("cropping" as ZeroPadding's "padding": an int, (a, b) per axis, or one pair per axis;
// keras/src/layers/reshaping/cropping2d.py). TF runs it as a StridedSlice; its gradient pads
// dy back.
func buildCropping(g *graph, l *layerCall) (int, error) {
	if err := l.need(1); err != nil {
		return 0, err
	}
	rank := int(l.class[len(l.class)-2] - '0')
	if len(l.s) != rank+1 {
		return 0, fmt.Errorf("input shape %v: want rank %d", l.s, rank+2)
	}
	c := cfg{"padding": l.c["cropping"]}
	if v, ok := l.c["cropping"].([]any); ok && rank == 1 && len(v) == 2 {
		c["padding"] = []any{v} // Cropping1D's (left, right) is the pair of its one axis
	}
	if _, ok := l.c.get("cropping"); !ok {
		c["padding"] = 1 // Keras's default: (1, 1) per axis
	}
	crop, err := readPadding(c, rank)
	if err != nil {
		return 0, fmt.Errorf("%s", strings.ReplaceAll(err.Error(), "padding", "cropping"))
	}
	out := clone(l.s)
	for i := 0; i < rank; i++ {
		out[i] -= crop[2*i] + crop[2*i+1]
		if out[i] <= 0 {
			return 0, fmt.Errorf("cropping %v leaves nothing of input %v", crop, l.s)
		}
	}
	return g.addNode(node{name: l.name + "/StridedSlice", kind: Copy, in: []int{l.x}, shape: out}), nil
}
