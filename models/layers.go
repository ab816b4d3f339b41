package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Keras layer configs are held as the map model.to_json() writes (keys as Keras names them),
// so the zoo and the JSON importer run the same shape inference: the zoo builds the maps in
// Go, the importer decodes them from JSON.

type cfg map[string]any

var errMissing = errors.New("missing")

func (c cfg) get(k string) (any, bool) {
	v, ok := c[k]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<31 {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		return int(x), nil
	case json.Number:
		i, err := x.Int64()
		if err != nil || i > 1<<31 || i < -(1<<31) {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		return int(i), nil
	}
	return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
}

func (c cfg) int(k string, def int) (int, error) {
	v, ok := c.get(k)
	if !ok {
		return def, nil
	}
	i, err := toInt(v)
	if err != nil {
		return 0, fmt.Errorf("field %q: %w", k, err)
	}
	return i, nil
}

func (c cfg) float(k string, def float64) (float64, error) {
	v, ok := c.get(k)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case json.Number:
		return x.Float64()
	}
	return 0, fmt.Errorf("field %q: %v (%T) is not a number", k, v, v)
}

// ints reads an int or a list of ints, broadcasting a single int to n values.
func (c cfg) ints(k string, n int, def int) ([]int, error) {
	v, ok := c.get(k)
	if !ok {
		out := make([]int, n)
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	out, err := intList(v, n)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", k, err)
	}
	return out, nil
}

func intList(v any, n int) ([]int, error) {
	switch x := v.(type) {
	case []int:
		if n > 0 && len(x) == 1 {
			return intList(x[0], n)
		}
		if n > 0 && len(x) != n {
			return nil, fmt.Errorf("want %d values, got %d", n, len(x))
		}
		return clone(x), nil
	case []any:
		if n > 0 && len(x) == 1 {
			return intList(x[0], n)
		}
		if n > 0 && len(x) != n {
			return nil, fmt.Errorf("want %d values, got %d", n, len(x))
		}
		out := make([]int, len(x))
		for i, e := range x {
			d, err := toInt(e)
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		return out, nil
	default:
		d, err := toInt(v)
		if err != nil {
			return nil, err
		}
		out := make([]int, max(n, 1))
		for i := range out {
			out[i] = d
		}
		return out, nil
	}
}

func (c cfg) str(k, def string) (string, error) {
	v, ok := c.get(k)
	if !ok {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("field %q: %v (%T) is not a string", k, v, v)
	}
	return s, nil
}

func (c cfg) bool(k string, def bool) (bool, error) {
	v, ok := c.get(k)
	if !ok {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("field %q: %v (%T) is not a bool", k, v, v)
	}
	return b, nil
}

// activationName reads an activation: a string, or a Keras 3 serialized function
// {"module": "keras.activations", "class_name": "function", "config": "relu"}.
func (c cfg) activation(k string) (string, error) {
	v, ok := c.get(k)
	if !ok {
		return "linear", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		if s, ok := x["config"].(string); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("field %q: unsupported activation %v", k, v)
}

// layerErr names the layer and its class, as every import error must.
func layerErr(name, class string, err error) error {
	return fmt.Errorf("layer %q (%s): %w", name, class, err)
}

// input adds a Keras InputLayer.
func (g *graph) input(name string, shape []int, integer bool) (int, error) {
	for _, d := range shape {
		if d <= 0 {
			return 0, layerErr(name, "InputLayer", fmt.Errorf("shape %v: every dimension but the batch must be known and positive", shape))
		}
	}
	if e := prod(shape); len(shape) > 8 || e <= 0 || e > maxElems {
		return 0, layerErr(name, "InputLayer", fmt.Errorf("shape %v: size out of range", shape))
	}
	if _, dup := g.byName[name]; dup {
		return 0, layerErr(name, "InputLayer", errors.New("duplicate layer name"))
	}
	x := g.addNode(node{name: name, kind: Copy, shape: clone(shape), input: true, intOut: integer})
	g.inputs = append(g.inputs, x)
	g.byName[name] = len(g.layers)
	g.layers = append(g.layers, Layer{Name: name, Class: "InputLayer", OutputShape: clone(shape)})
	g.lnode = append(g.lnode, x)
	dt := "float32"
	if integer {
		dt = "int32"
	}
	g.records = append(g.records, record{class: "InputLayer", name: name, out: x,
		config: cfg{"batch_shape": append([]any{nil}, anyInts(shape)...), "dtype": dt, "sparse": false, "name": name}})
	return x, nil
}

func anyInts(s []int) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// call applies a Keras layer (class, config) to the given input nodes and records it.
// Calling a name again reuses its weights (a shared layer).
func (g *graph) call(class, name string, c cfg, ins ...int) (int, error) {
	if name == "" {
		name = g.autoName(class)
	}
	for _, x := range ins {
		if x < 0 || x >= len(g.nodes) {
			return 0, layerErr(name, class, fmt.Errorf("input node %d does not exist", x))
		}
	}
	w0, n0 := len(g.weights), len(g.nodes)
	li, shared := g.byName[name]
	g.pending = name
	out, err := g.apply(class, name, c, ins)
	g.pending = ""
	if err != nil {
		return 0, layerErr(name, class, err)
	}
	for _, n := range g.nodes[n0:] {
		if n.elems <= 0 || n.elems > maxElems {
			return 0, layerErr(name, class, fmt.Errorf("output shape %v: size out of range", n.shape))
		}
	}
	for _, w := range g.weights[w0:] {
		if w.elems < 0 || w.elems > maxElems {
			return 0, layerErr(name, class, fmt.Errorf("weight %s shape %v: size out of range", w.name, w.shape))
		}
	}
	var flops, bflops float64
	var kf, kb int
	for _, n := range g.nodes[n0:] {
		flops += n.flops
		bflops += n.dxFLOPs + n.dwFLOPs
		kf += n.kF
		kb += n.kB
	}
	if shared {
		l := &g.layers[li]
		l.FLOPs += flops
		l.BackwardFLOPs += bflops
		l.ForwardKernels += kf
		l.BackwardKernels += kb
		return out, nil
	}
	l := Layer{Name: name, Class: class, OutputShape: clone(g.nodes[out].shape), FLOPs: flops, BackwardFLOPs: bflops,
		ForwardKernels: kf, BackwardKernels: kb}
	for _, w := range g.weights[w0:] {
		l.Params += w.elems
		if w.trainable {
			l.TrainableParams += w.elems
		}
	}
	inb := make([]string, len(ins))
	for i, x := range ins {
		inb[i] = g.nodeLayer(x)
		l.Inputs = append(l.Inputs, inb[i])
	}
	g.byName[name] = len(g.layers)
	g.layers = append(g.layers, l)
	g.lnode = append(g.lnode, out)
	g.records = append(g.records, record{class: class, name: name, config: c, inbound: inb, in: clone(ins), out: out})
	return out, nil
}

// nodeLayer is the name of the layer whose output node x is.
func (g *graph) nodeLayer(x int) string {
	for i := len(g.lnode) - 1; i >= 0; i-- {
		if g.lnode[i] == x {
			return g.layers[i].Name
		}
	}
	return g.nodes[x].name
}

// w creates (or, for a shared layer, finds) a variable of the layer being applied.
func (g *graph) w(name string, shape []int, trainable, cast, keep bool) int {
	// A map, not a scan of every weight: the scan made importing an n-layer model O(n^2).
	if i, ok := g.weight[g.pending+"/"+name]; ok {
		return i
	}
	return g.addWeight(g.pending, name, shape, trainable, cast, keep)
}

// apply checks what no layer accepts (no inputs, channels_first, Keras 1 configs) and hands
// the call to the builder registered for class (builders).
func (g *graph) apply(class, name string, c cfg, ins []int) (int, error) {
	if len(ins) == 0 {
		return 0, errors.New("no inputs")
	}
	// Shapes are inferred channels_last; a channels_first layer (Keras 2 "data_format",
	// Keras 1 "dim_ordering": "th") would be mis-shaped, not simulated.
	if df, _ := c["data_format"].(string); df == "channels_first" {
		return 0, errors.New("data_format \"channels_first\": only channels_last is supported")
	}
	if do, _ := c["dim_ordering"].(string); do == "th" {
		return 0, errors.New("dim_ordering \"th\" (channels first): only channels_last is supported")
	}
	for _, k := range []string{"border_mode", "nb_filter", "nb_row", "subsample", "dim_ordering"} {
		if _, ok := c[k]; ok {
			// Keras 1 names (border_mode for padding, nb_filter for filters, ...): reading
			// them as Keras 2 configs would silently drop the padding.
			return 0, fmt.Errorf("field %q is Keras 1.x: re-save the model with Keras 2 or later", k)
		}
	}
	x := ins[0]
	s := g.shape(x)
	l := &layerCall{class: class, name: name, c: c, ins: ins, x: x, s: s}
	if spec := g.specs.lookup(class, name); spec != nil {
		return buildCustom(g, l, spec)
	}
	b, ok := builders[class]
	if !ok {
		b, ok = builders[kerasAliases[class]]
	}
	if !ok {
		return 0, unknownClassErr(g, class)
	}
	return b(g, l)
}

// kerasAliases are the other names keras.layers exports classes under (keras_export lists:
// keras.layers.MaxPool2D is MaxPooling2D); a config names the class itself, but deserializing
// accepts either.
var kerasAliases = map[string]string{
	"AvgPool1D": "AveragePooling1D", "AvgPool2D": "AveragePooling2D", "AvgPool3D": "AveragePooling3D",
	"MaxPool1D": "MaxPooling1D", "MaxPool2D": "MaxPooling2D", "MaxPool3D": "MaxPooling3D",
	"GlobalAvgPool1D": "GlobalAveragePooling1D", "GlobalAvgPool2D": "GlobalAveragePooling2D",
	"GlobalAvgPool3D": "GlobalAveragePooling3D", "GlobalMaxPool1D": "GlobalMaxPooling1D",
	"GlobalMaxPool2D": "GlobalMaxPooling2D", "GlobalMaxPool3D": "GlobalMaxPooling3D",
	"Convolution1D": "Conv1D", "Convolution2D": "Conv2D", "Convolution3D": "Conv3D",
	"Convolution1DTranspose": "Conv1DTranspose", "Convolution2DTranspose": "Conv2DTranspose",
	"Convolution3DTranspose": "Conv3DTranspose", "SeparableConvolution1D": "SeparableConv1D",
	"SeparableConvolution2D": "SeparableConv2D", "GroupQueryAttention": "GroupedQueryAttention",
}

// builder applies one Keras layer class to a call: it adds the layer's nodes and weights to g
// and returns its output node. Builders live by family in layers_*.go and register the class
// names they take, so adding a layer is adding a function.
type builder func(g *graph, l *layerCall) (int, error)

// builders maps a Keras class name to its builder (filled by register in the init functions
// of layers_*.go, never changed after).
var builders = map[string]builder{}

func register(b builder, classes ...string) {
	for _, c := range classes {
		if _, dup := builders[c]; dup {
			panic("models: layer class registered twice: " + c)
		}
		builders[c] = b
	}
}

// layerCall is one application of a layer: its class, name, config and input nodes; x is the
// first input and s its per-sample shape.
type layerCall struct {
	class, name string
	c           cfg
	ins         []int
	x           int
	s           []int
}

// need fails unless the layer got n inputs.
func (l *layerCall) need(n int) error {
	if len(l.ins) != n {
		return fmt.Errorf("takes %d input(s), got %d", n, len(l.ins))
	}
	return nil
}

// atLeast fails unless the layer got n inputs or more.
func (l *layerCall) atLeast(n int) error {
	if len(l.ins) < n {
		return fmt.Errorf("takes at least %d inputs, got %d", n, len(l.ins))
	}
	return nil
}

var errUnsupported = errors.New("unsupported layer class")

// maxElems bounds one tensor's elements per sample (2^36: 256 GiB in float32), so absurd
// shapes in an imported file are an error instead of an overflow.
const maxElems = 1 << 36

// axisChannels reads the config's "axis" (one int or a list, default -1, counted with the batch
// dimension as Keras does) and returns the product of those dimensions of the per-sample
// shape s: the size of the per-channel weights of BatchNormalization, LayerNormalization and
// Normalization.
func axisChannels(c cfg, s []int) (int, error) {
	axis, err := c.ints("axis", 0, -1)
	if err != nil {
		return 0, err
	}
	ch := 1
	for _, a := range axis {
		if a < 0 {
			a += len(s) + 1
		}
		if a < 1 || a > len(s) {
			return 0, fmt.Errorf("axis %d out of range for shape %v", a, s)
		}
		ch *= s[a-1]
	}
	return ch, nil
}

func allSame(g *graph, ins []int) bool {
	for _, y := range ins[1:] {
		if !slices.Equal(g.shape(y), g.shape(ins[0])) {
			return false
		}
	}
	return true
}

// broadcastable reports whether two per-sample shapes broadcast (numpy rules).
func broadcastable(a, b []int) bool {
	for i, j := len(a)-1, len(b)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if a[i] != b[j] && a[i] != 1 && b[j] != 1 {
			return false
		}
	}
	return true
}

func (g *graph) identity(name string, x int) int {
	return g.reshape(name, x, g.shape(x))
}

func (g *graph) reshape(name string, x int, shape []int) int {
	return g.addNode(node{name: name + "/Reshape", kind: Copy, in: []int{x}, shape: clone(shape), alias: true})
}

// readPadding reads ZeroPadding's padding: int, (a, b) per axis, or ((t, b), (l, r)).
func readPadding(c cfg, rank int) ([]int, error) {
	out := make([]int, 2*rank)
	v, ok := c.get("padding")
	if !ok {
		for i := range out {
			out[i] = 1
		}
		return out, nil
	}
	if l, ok := v.([]any); ok && len(l) == rank {
		for i, e := range l {
			p, err := intList(e, 2)
			if err != nil {
				return nil, fmt.Errorf("field \"padding\": %w", err)
			}
			out[2*i], out[2*i+1] = p[0], p[1]
		}
	} else if l, ok := v.([][]int); ok && len(l) == rank {
		for i, p := range l {
			if len(p) != 2 {
				return nil, fmt.Errorf("field \"padding\": %v", v)
			}
			out[2*i], out[2*i+1] = p[0], p[1]
		}
	} else {
		p, err := intList(v, rank)
		if err != nil {
			return nil, fmt.Errorf("field \"padding\": %w", err)
		}
		for i := 0; i < rank; i++ {
			out[2*i], out[2*i+1] = p[i], p[i]
		}
	}
	for _, p := range out {
		if p < 0 {
			return nil, fmt.Errorf("field \"padding\": negative %v", v)
		}
	}
	return out, nil
}

// applyConv adds a convolution layer of any family (Conv, Conv*Transpose, DepthwiseConv,
// SeparableConv; 1 to 3 spatial dimensions, channels_last), its bias and its activation.
func (g *graph) applyConv(class, name string, c cfg, x int) (int, error) {
	cs, err := convConfig(class, c, g.shape(x))
	if err != nil {
		return 0, err
	}
	out, err := cs.outShape(c)
	if err != nil {
		return 0, err
	}
	var y, units int
	switch class {
	case "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose":
		y, units, err = g.convTranspose(name, c, x, cs, out)
	case "Conv1D", "Conv2D", "Conv3D":
		y, units, err = g.convPlain(name, c, x, cs, out)
	case "DepthwiseConv1D", "DepthwiseConv2D":
		y, units, err = g.convDepthwise(name, c, x, cs, out)
	default: // SeparableConv
		y, units, err = g.convSeparable(name, c, x, cs, out)
	}
	if err != nil {
		return 0, err
	}
	if cs.useBias {
		y = g.bias(name, y, g.w("bias", []int{units}, true, true, false))
	}
	return g.act(name, cs.fn, y)
}

// convSpec is what every convolution family's config holds: the input shape s (channels
// last, cin channels), rank spatial dimensions, kernel size, strides, dilation, padding, bias
// and activation.
type convSpec struct {
	s          []int
	rank, cin  int
	k, st, dil []int
	pad, fn    string
	transpose  bool
	useBias    bool
}

// convConfig reads a convolution layer's common config for an input of shape s.
func convConfig(class string, c cfg, s []int) (*convSpec, error) {
	cs := &convSpec{s: s, rank: 2}
	switch class {
	case "Conv1D", "DepthwiseConv1D", "SeparableConv1D", "Conv1DTranspose":
		cs.rank = 1
	case "Conv3D", "Conv3DTranspose":
		cs.rank = 3
	}
	rank := cs.rank
	if len(s) != rank+1 {
		return nil, fmt.Errorf("input shape %v: want rank %d (channels_last)", s, rank+2)
	}
	cs.transpose = strings.HasSuffix(class, "Transpose")
	if df, _ := c.str("data_format", "channels_last"); df != "channels_last" {
		return nil, fmt.Errorf("data_format %q: only channels_last is supported", df)
	}
	var err error
	if cs.k, err = c.ints("kernel_size", rank, 0); err != nil {
		return nil, err
	}
	if cs.st, err = c.ints("strides", rank, 1); err != nil {
		return nil, err
	}
	if cs.dil, err = c.ints("dilation_rate", rank, 1); err != nil {
		return nil, err
	}
	if cs.pad, err = c.str("padding", "valid"); err != nil {
		return nil, err
	}
	if cs.pad != "valid" && cs.pad != "same" && !(cs.pad == "causal" && rank == 1) {
		return nil, fmt.Errorf("padding %q", cs.pad)
	}
	if cs.useBias, err = c.bool("use_bias", true); err != nil {
		return nil, err
	}
	if cs.fn, err = c.activation("activation"); err != nil {
		return nil, err
	}
	cs.cin = s[rank]
	return cs, nil
}

// outShape is the output's spatial dimensions (the channels, last, are left 0 for the family
// to set).
func (cs *convSpec) outShape(c cfg) ([]int, error) {
	s, k, st, dil, pad, rank := cs.s, cs.k, cs.st, cs.dil, cs.pad, cs.rank
	out := make([]int, rank+1)
	for i := 0; i < rank; i++ {
		if k[i] <= 0 || st[i] <= 0 || dil[i] <= 0 {
			return nil, fmt.Errorf("kernel_size %v strides %v dilation_rate %v", k, st, dil)
		}
		p := pad
		if p == "causal" {
			p = "same"
		}
		if cs.transpose {
			// keras/src/ops/operation_utils.py compute_conv_transpose_output_shape (no
			// output_padding): valid n*s + max(k_eff - s, 0), same n*s.
			if pad == "causal" {
				return nil, fmt.Errorf("padding %q", pad)
			}
			ke := (k[i]-1)*dil[i] + 1
			out[i] = s[i] * st[i]
			if pad == "valid" {
				out[i] += max(ke-st[i], 0)
			}
			if op, ok := c.get("output_padding"); ok {
				opad, err := intList(op, rank)
				if err != nil {
					return nil, fmt.Errorf("field \"output_padding\": %w", err)
				}
				// With output_padding: (n-1)*s + k_eff - 2*pad + output_padding, pad =
				// k_eff/2 for same and 0 for valid.
				pd := 0
				if pad == "same" {
					pd = ke / 2
				}
				out[i] = (s[i]-1)*st[i] + ke - 2*pd + opad[i]
			}
		} else {
			out[i] = convOut(s[i], k[i], st[i], dil[i], p)
		}
		if out[i] <= 0 {
			return nil, fmt.Errorf("kernel %v larger than input %v", k, s)
		}
	}
	return out, nil
}

// convTranspose is Conv*Transpose: its node and output channels.
func (g *graph) convTranspose(name string, c cfg, x int, cs *convSpec, out []int) (int, int, error) {
	filters, err := c.int("filters", 0)
	if err != nil {
		return 0, 0, err
	}
	if filters <= 0 {
		return 0, 0, fmt.Errorf("filters %d", filters)
	}
	out[cs.rank] = filters
	// Kernel (k..., filters, in): keras Conv2DTranspose.build. Every input element is
	// multiplied into a k x filters patch of the output (Conv2DBackpropInput): the
	// multiply-adds are the input's elements times prod(k) * filters, and each gradient
	// (Conv2D for dx, Conv2DBackpropFilter for dw) costs as much again.
	w := g.w("kernel", append(clone(cs.k), filters, cs.cin), true, true, true)
	macs := float64(prod(cs.s)) * float64(prod(cs.k)) * float64(filters)
	y := g.addNode(node{name: name + "/Conv2DBackpropInput", kind: Conv, in: []int{x}, shape: clone(out),
		flops: 2 * macs, dxFLOPs: 2 * macs, dwFLOPs: 2 * macs, weights: []int{w}, saveIn: 1,
		workspace: prod(cs.k) > 1, kB: 2})
	return y, filters, nil
}

// convPlain is Conv1D-3D (grouped where groups > 1): its node and output channels.
func (g *graph) convPlain(name string, c cfg, x int, cs *convSpec, out []int) (int, int, error) {
	filters, err := c.int("filters", 0)
	if err != nil {
		return 0, 0, err
	}
	groups, err := c.int("groups", 1)
	if err != nil {
		return 0, 0, err
	}
	cin := cs.cin
	if filters <= 0 || groups <= 0 || cin%groups != 0 || filters%groups != 0 {
		return 0, 0, fmt.Errorf("filters %d, groups %d, input channels %d", filters, groups, cin)
	}
	out[cs.rank] = filters
	w := g.w("kernel", append(clone(cs.k), cin/groups, filters), true, true, true)
	return g.conv(name, x, out, cs.k, cs.st[0], cin, filters, groups, w), filters, nil
}

// convDepthwise is DepthwiseConv1D/2D: its node and output channels.
func (g *graph) convDepthwise(name string, c cfg, x int, cs *convSpec, out []int) (int, int, error) {
	dm, err := c.int("depth_multiplier", 1)
	if err != nil {
		return 0, 0, err
	}
	if dm <= 0 {
		return 0, 0, fmt.Errorf("depth_multiplier %d", dm)
	}
	cin := cs.cin
	out[cs.rank] = cin * dm
	w := g.w("depthwise_kernel", append(clone(cs.k), cin, dm), true, true, true)
	return g.conv(name, x, out, cs.k, cs.st[0], cin, cin*dm, cin, w), cin * dm, nil
}

// convSeparable is SeparableConv1D/2D, a depthwise then a pointwise convolution: its last
// node and output channels.
func (g *graph) convSeparable(name string, c cfg, x int, cs *convSpec, out []int) (int, int, error) {
	dm, err := c.int("depth_multiplier", 1)
	if err != nil {
		return 0, 0, err
	}
	filters, err := c.int("filters", 0)
	if err != nil {
		return 0, 0, err
	}
	if dm <= 0 || filters <= 0 {
		return 0, 0, fmt.Errorf("depth_multiplier %d, filters %d", dm, filters)
	}
	cin, rank := cs.cin, cs.rank
	dout := clone(out)
	dout[rank] = cin * dm
	dw := g.w("depthwise_kernel", append(clone(cs.k), cin, dm), true, true, true)
	y := g.conv(name+"/depthwise", x, dout, cs.k, cs.st[0], cin, cin*dm, cin, dw)
	ones := make([]int, rank)
	for i := range ones {
		ones[i] = 1
	}
	out[rank] = filters
	pw := g.w("pointwise_kernel", append(ones, cin*dm, filters), true, true, true)
	return g.conv(name+"/pointwise", y, out, ones, 1, cin*dm, filters, 1, pw), filters, nil
}

func (g *graph) applyRNN(class, name string, c cfg, x int, merge string) (int, error) {
	s := g.shape(x)
	if len(s) != 2 {
		return 0, fmt.Errorf("input shape %v: want (timesteps, features)", s)
	}
	units, err := c.int("units", 0)
	if err != nil {
		return 0, err
	}
	if units <= 0 {
		return 0, fmt.Errorf("units %d", units)
	}
	seqOut, err := c.bool("return_sequences", false)
	if err != nil {
		return 0, err
	}
	useBias, err := c.bool("use_bias", true)
	if err != nil {
		return 0, err
	}
	gates := 4
	switch class {
	case "GRU":
		gates = 3
	case "SimpleRNN":
		gates = 1
	}
	steps, in := s[0], s[1]
	dirs := 1
	if merge != "" {
		dirs = 2
	}
	prefixes := []string{""}
	if dirs == 2 {
		prefixes = []string{"forward_" + snake(class) + "/", "backward_" + snake(class) + "/"}
	}
	var ws []int
	for _, p := range prefixes {
		ws = append(ws, g.w(p+"kernel", []int{in, gates * units}, true, true, true))
		ws = append(ws, g.w(p+"recurrent_kernel", []int{units, gates * units}, true, true, true))
		if useBias {
			bshape := []int{gates * units}
			if class == "GRU" {
				if ra, err := c.bool("reset_after", true); err != nil {
					return 0, err
				} else if ra {
					bshape = []int{2, gates * units}
				}
			}
			ws = append(ws, g.w(p+"bias", bshape, true, true, false))
		}
	}
	outUnits := units
	if merge == "concat" {
		outUnits = 2 * units
	}
	out := []int{outUnits}
	if seqOut {
		out = []int{steps, outUnits}
	}
	macs := float64(dirs) * float64(steps) * float64(gates*units) * float64(in+units)
	ew := float64(dirs) * float64(steps) * float64(units) * 10
	// cuDNN RNN (keras LSTM/GRU on GPU, gpu_lstm in keras/src/backend/tensorflow/rnn.py) keeps
	// its reserve space (the gate activations of every step) and the output sequence for
	// backward; one launch per time step and direction forward, two backward.
	return g.addNode(node{name: name + "/CudnnRNN", kind: Recurrent, in: []int{x}, shape: out,
		flops: 2*macs + ew, dxFLOPs: 2*macs + 2*ew, dwFLOPs: 2 * macs, weights: ws, saveIn: 1, saveOut: true,
		maskElems: int64(dirs * steps * (gates + 2) * units), kF: dirs * steps, kB: 2 * dirs * steps}), nil
}

func (g *graph) applyMHA(name string, c cfg, ins []int) (int, error) {
	if len(ins) < 1 || len(ins) > 3 {
		return 0, fmt.Errorf("takes query, value[, key], got %d inputs", len(ins))
	}
	q, v := ins[0], ins[0]
	if len(ins) > 1 {
		v = ins[1]
	}
	k := v
	if len(ins) > 2 {
		k = ins[2]
	}
	qs, vs, ks := g.shape(q), g.shape(v), g.shape(k)
	if len(qs) != 2 || len(vs) != 2 || len(ks) != 2 || vs[0] != ks[0] {
		return 0, fmt.Errorf("query %v, value %v, key %v: want (sequence, features)", qs, vs, ks)
	}
	heads, err := c.int("num_heads", 0)
	if err != nil {
		return 0, err
	}
	kd, err := c.int("key_dim", 0)
	if err != nil {
		return 0, err
	}
	vd, err := c.int("value_dim", kd)
	if err != nil {
		return 0, err
	}
	if heads <= 0 || kd <= 0 || vd <= 0 {
		return 0, fmt.Errorf("num_heads %d, key_dim %d, value_dim %d", heads, kd, vd)
	}
	useBias, err := c.bool("use_bias", true)
	if err != nil {
		return 0, err
	}
	rate, err := c.float("dropout", 0)
	if err != nil {
		return 0, err
	}
	outDim := qs[1]
	if v, ok := c.get("output_shape"); ok {
		os, err := intList(v, 0)
		if err != nil || len(os) != 1 || os[0] <= 0 {
			return 0, fmt.Errorf("field \"output_shape\": %v", v)
		}
		outDim = os[0]
	}
	proj := func(sub string, x, width int) int {
		kern := g.w(sub+"/kernel", []int{g.shape(x)[1], heads, width}, true, true, true)
		y := g.matmul(name+"/"+sub, x, heads*width, kern)
		if useBias {
			y = g.bias(name+"/"+sub, y, g.w(sub+"/bias", []int{heads, width}, true, true, false))
		}
		return y
	}
	qp := proj("query", q, kd)
	kp := proj("key", k, kd)
	vp := proj("value", v, vd)
	sq, sk := qs[0], ks[0]
	// Keras scales the query by 1/sqrt(key_dim), then einsum QK^T, softmax, dropout, einsum
	// with V (keras/src/layers/attention/multi_head_attention.py _compute_attention).
	qs2 := g.ewNode(name+"/Mul", []int{qp}, 1, 0)
	sc := 2 * float64(heads) * float64(sq) * float64(sk) * float64(kd)
	scores := g.addNode(node{name: name + "/einsum_qk", kind: Attention, in: []int{qs2, kp}, shape: []int{heads, sq, sk},
		flops: sc, dxFLOPs: 2 * sc, saveIn: 3, kB: 2, gemm: GEMMShape{M: int64(sq), N: int64(sk), K: int64(kd), Batch: int64(heads)}})
	probs, _ := g.act(name+"/softmax", "softmax", scores)
	if rate > 0 {
		probs = g.dropout(name+"/attention_dropout", probs, int64(heads*sq*sk))
	}
	av := 2 * float64(heads) * float64(sq) * float64(sk) * float64(vd)
	ctx := g.addNode(node{name: name + "/einsum_av", kind: Attention, in: []int{probs, vp}, shape: []int{sq, heads * vd},
		flops: av, dxFLOPs: 2 * av, saveIn: 3, kB: 2, gemm: GEMMShape{M: int64(sq), N: int64(vd), K: int64(sk), Batch: int64(heads)}})
	ok := g.w("attention_output/kernel", []int{heads, vd, outDim}, true, true, true)
	y := g.matmul(name+"/attention_output", ctx, outDim, ok)
	if useBias {
		y = g.bias(name+"/attention_output", y, g.w("attention_output/bias", []int{outDim}, true, true, false))
	}
	return y, nil
}

// sortedKeys returns a map's keys in order (deterministic JSON export).
func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
