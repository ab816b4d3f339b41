package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// FromKerasJSON builds a model from the JSON that model.to_json() writes: Sequential or
// Functional, Keras 3 ("inbound_nodes": [{"args": [...], "kwargs": {...}}]) or tf.keras 2.x
// ("inbound_nodes": [[["layer", 0, 0, {}]]]), with nested models, shared layers and
// layer-level "trainable": false. Every dimension but the batch must be known. An unsupported
// layer is an error naming the layer and its class.
//
// Under a file saved with a mixed global policy, layers whose dtype policy is "float32" keep
// computing in float32 in the plan (the Keras mixed-precision guide's float32 output layer).
func FromKerasJSON(r io.Reader) (*Model, error) {
	return FromKerasJSONWith(r, ImportOptions{})
}

// ImportOptions change how FromKerasJSONWith reads a config.
type ImportOptions struct {
	// ImageSize fixes the height and width an image input leaves unset ((None, None, 3), as
	// keras.applications.MobileNetV3Small writes by default); 0 keeps such an input an error.
	ImageSize int
	// Layers describes the classes Keras does not define (custom layers): the sidecar file's
	// contents (ReadLayerSpecs); nil when there is none.
	Layers *LayerSpecs
}

// FromKerasJSONWith is FromKerasJSON with options.
func FromKerasJSONWith(r io.Reader, o ImportOptions) (*Model, error) {
	return FromKerasJSONContext(context.Background(), r, o)
}

// FromKerasJSONContext is FromKerasJSONWith stopped by ctx: the decode and every few hundred
// layers look at it, so Ctrl-C during a large model's import returns ctx's error at once.
func FromKerasJSONContext(ctx context.Context, r io.Reader, o ImportOptions) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(ctxReader{ctx, r})
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("keras json: %w", err)
	}
	// A TensorFlow.js layers model (model.json of tensorflowjs_converter) carries the Keras
	// topology under "modelTopology"; it and a saved-model metadata file wrap the model in
	// "model_config" (a model saved by TensorFlow.js itself has the model config there).
	if f, _ := top["format"].(string); f == "graph-model" {
		return nil, errors.New("keras json: a TensorFlow.js graph model (a converted SavedModel: TF ops, no Keras layers); convert the Keras model to a layers model (tensorflowjs_converter --input_format keras) or pass model.to_json()")
	}
	if mt, ok := top["modelTopology"].(map[string]any); ok {
		top = mt
	}
	if mc, ok := top["model_config"].(map[string]any); ok {
		top = mc
	}
	class, _ := top["class_name"].(string)
	c, _ := top["config"].(map[string]any)
	if l, ok := top["config"].([]any); ok && class == "Sequential" {
		// Keras 2.0-2.2 wrote a Sequential's config as the bare list of its layers.
		c = map[string]any{"name": "sequential", "layers": l}
	}
	if c == nil {
		return nil, errors.New("keras json: no \"config\" object at the top level (want the output of model.to_json())")
	}
	name, _ := c["name"].(string)
	if name == "" {
		name = "model"
	}
	im := &importer{g: newGraph(name), image: o.ImageSize, ctx: ctx}
	im.g.specs = o.Layers
	im.mixed = hasMixedPolicy(c)
	outs, err := im.model(class, name, c, nil, "", true)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("keras json: %w", err)
	}
	im.g.outputs = outs
	return im.g.finish()
}

type importer struct {
	g     *graph
	mixed bool
	depth int
	image int // ImportOptions.ImageSize
	ctx   context.Context
	seen  int // layers looked at, for tick
}

// tick counts a layer and, every 256, returns ctx's error if it is done.
func (im *importer) tick() error {
	im.seen++
	if im.seen%256 == 0 {
		return im.ctx.Err()
	}
	return nil
}

// ctxReader fails every read once ctx is done: json.Decoder stops mid-document.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// inputShape reads an input's shape (batchShape), filling an image's unset height and width
// with ImportOptions.ImageSize.
func (im *importer) inputShape(c map[string]any) ([]int, bool, error) {
	if im.image > 0 {
		for _, k := range []string{"batch_shape", "batch_input_shape"} {
			if v, ok := c[k].([]any); ok && len(v) == 4 && v[1] == nil && v[2] == nil {
				fixed := make(map[string]any, len(c))
				for kk, vv := range c {
					fixed[kk] = vv
				}
				fixed[k] = []any{nil, im.image, im.image, v[3]}
				c = fixed
			}
		}
	}
	return batchShape(c)
}

type tensorRef struct {
	layer      string
	node, tidx int
}

// model imports a Sequential or Functional config. ins are the nodes it is called on (nil
// at the top level: its InputLayers become model inputs). prefix qualifies the names of a
// nested model's layers.
func (im *importer) model(class, name string, c map[string]any, ins []int, prefix string, trainable bool) ([]int, error) {
	im.depth++
	defer func() { im.depth-- }()
	if im.depth > 16 {
		return nil, fmt.Errorf("model %q: nested more than 16 deep", name)
	}
	if t, ok := c["trainable"].(bool); ok && !t {
		trainable = false
	}
	layers, ok := c["layers"].([]any)
	if !ok {
		return nil, fmt.Errorf("model %q (%s): config has no \"layers\" list", name, class)
	}
	switch class {
	case "Sequential":
		return im.sequential(name, layers, c, ins, prefix, trainable)
	case "Functional", "Model", "":
		return im.functional(name, layers, c, ins, prefix, trainable)
	}
	return nil, fmt.Errorf("model %q: unsupported model class %q", name, class)
}

func layerFields(l any) (class, name string, c map[string]any, err error) {
	m, ok := l.(map[string]any)
	if !ok {
		return "", "", nil, fmt.Errorf("layer entry %v is not an object", short(l))
	}
	class, _ = m["class_name"].(string)
	c, _ = m["config"].(map[string]any)
	if l, ok := m["config"].([]any); ok && class == "Sequential" {
		c = map[string]any{"layers": l} // Keras 2.0-2.2 Sequential config: the bare layer list
	}
	if c == nil {
		c = map[string]any{}
	}
	name, _ = m["name"].(string)
	if name == "" {
		name, _ = c["name"].(string)
	}
	if class == "" {
		return "", name, nil, fmt.Errorf("layer %q: no \"class_name\"", name)
	}
	return class, name, c, nil
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

// batchShape reads an input shape from a layer config (Keras 3 "batch_shape", tf.keras
// "batch_input_shape", or "input_shape" without the batch).
func batchShape(c map[string]any) ([]int, bool, error) {
	for _, k := range []string{"batch_shape", "batch_input_shape", "input_shape"} {
		v, ok := c[k].([]any)
		if !ok {
			continue
		}
		if k != "input_shape" {
			if len(v) == 0 {
				return nil, true, fmt.Errorf("field %q: empty", k)
			}
			v = v[1:]
		}
		out := make([]int, len(v))
		for i, d := range v {
			if d == nil {
				return nil, true, fmt.Errorf("field %q: dimension %d is None: gpusim needs every dimension but the batch (set a fixed input size or sequence length; for an image, model=@FILE:image=224)", k, i+1)
			}
			n, err := toInt(d)
			if err != nil {
				return nil, true, fmt.Errorf("field %q: %w", k, err)
			}
			out[i] = n
		}
		return out, true, nil
	}
	return nil, false, nil
}

func isInt(c map[string]any) bool {
	dt := fmt.Sprint(c["dtype"])
	return strings.Contains(dt, "int")
}

func (im *importer) sequential(name string, layers []any, c map[string]any, ins []int, prefix string, trainable bool) ([]int, error) {
	var x int
	have := len(ins) > 0
	if have {
		if len(ins) != 1 {
			return nil, fmt.Errorf("sequential model %q called on %d inputs", name, len(ins))
		}
		x = ins[0]
	}
	for i, l := range layers {
		if err := im.tick(); err != nil {
			return nil, err
		}
		class, lname, lc, err := layerFields(l)
		if err != nil {
			return nil, fmt.Errorf("model %q layer %d: %w", name, i, err)
		}
		if lname == "" {
			return nil, fmt.Errorf("model %q layer %d (%s): no name", name, i, class)
		}
		if class == "InputLayer" {
			if have {
				continue
			}
			shape, ok, err := im.inputShape(lc)
			if err != nil {
				return nil, layerErr(lname, class, err)
			}
			if !ok {
				return nil, layerErr(lname, class, errors.New("no batch_shape"))
			}
			x, err = im.g.input(prefix+lname, shape, isInt(lc))
			if err != nil {
				return nil, err
			}
			have = true
			continue
		}
		if !have {
			// tf.keras 2.x puts the input shape on the first layer, or on the model as
			// "build_input_shape".
			shape, ok, err := im.inputShape(lc)
			if err != nil {
				return nil, layerErr(lname, class, err)
			}
			if !ok {
				if bs, ok2 := c["build_input_shape"].([]any); ok2 {
					shape, ok, err = batchShape(map[string]any{"batch_shape": bs})
					if err != nil {
						return nil, fmt.Errorf("model %q: %w", name, err)
					}
				}
			}
			if !ok {
				return nil, layerErr(lname, class, errors.New("first layer of a Sequential model without an input shape (add keras.Input or build the model before to_json)"))
			}
			x, err = im.g.input(prefix+name+"_input", shape, isInt(lc))
			if err != nil {
				return nil, err
			}
			have = true
		}
		outs, err := im.layer(class, lname, lc, []int{x}, prefix, trainable)
		if err != nil {
			return nil, err
		}
		if len(outs) != 1 {
			return nil, layerErr(lname, class, fmt.Errorf("%d outputs in a Sequential model", len(outs)))
		}
		x = outs[0]
	}
	if !have {
		return nil, fmt.Errorf("sequential model %q has no layers", name)
	}
	return []int{x}, nil
}

// layer applies one layer (or a nested model) and returns its outputs.
func (im *importer) layer(class, name string, c map[string]any, ins []int, prefix string, trainable bool) ([]int, error) {
	if _, isModel := c["layers"]; isModel && (class == "Sequential" || class == "Functional" || class == "Model") {
		return im.model(class, name, c, ins, prefix+name+"/", trainable)
	}
	if functionalSubclass(c) && im.g.specs.lookup(class, name) == nil {
		// A registered subclass of keras.Model built functionally (class_name "my_pkg>Encoder")
		// writes Functional's config: read it as the nested model it is.
		return im.model("Functional", name, c, ins, prefix+name+"/", trainable)
	}
	return im.call(class, name, c, ins, prefix, trainable)
}

// call applies one (non-model) layer with config c to the nodes ins.
func (im *importer) call(class, name string, c map[string]any, ins []int, prefix string, trainable bool) ([]int, error) {
	w0, n0 := len(im.g.weights), len(im.g.nodes)
	full := prefix + name
	y, err := im.g.call(class, full, cfg(c), ins...)
	if err != nil {
		return nil, err
	}
	lt := trainable
	if t, ok := c["trainable"].(bool); ok && !t {
		lt = false
	}
	if !lt {
		for i := w0; i < len(im.g.weights); i++ {
			im.g.weights[i].trainable = false
		}
		if li, ok := im.g.byName[full]; ok {
			im.g.layers[li].TrainableParams = 0
		}
	}
	// A TFOpLambda never casts its inputs (tf_op_layer.py sets autocast=False): it computes
	// in its input's dtype whatever its "dtype" field says.
	if im.mixed && policyName(c["dtype"]) == "float32" && class != "TFOpLambda" && class != "SlicingOpLambda" {
		for i := n0; i < len(im.g.nodes); i++ {
			im.g.nodes[i].f32 = true
		}
	}
	return []int{y}, nil
}

// policyName reads a layer's dtype policy: "float32", "mixed_float16", or a Keras 3
// {"class_name": "DTypePolicy", "config": {"name": ...}}.
func policyName(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if c, ok := x["config"].(map[string]any); ok {
			if n, ok := c["name"].(string); ok {
				return n
			}
		}
	}
	return ""
}

// functional applies a Functional model's config: its InputLayers, then each layer call as
// soon as its inputs are produced (a file may list a layer before the layers it reads).
func (im *importer) functional(name string, layers []any, c map[string]any, ins []int, prefix string, trainable bool) ([]int, error) {
	fm, err := functionalLayers(name, layers)
	if err != nil {
		return nil, err
	}
	inputRefs, err := refList(c["input_layers"])
	if err != nil {
		return nil, fmt.Errorf("model %q: field \"input_layers\": %w", name, err)
	}
	outputRefs, err := refList(c["output_layers"])
	if err != nil {
		return nil, fmt.Errorf("model %q: field \"output_layers\": %w", name, err)
	}
	if len(outputRefs) == 0 {
		return nil, fmt.Errorf("model %q: no output_layers", name)
	}
	if err := im.functionalInputs(fm, inputRefs, ins, prefix); err != nil {
		return nil, err
	}
	for fm.remaining > 0 {
		progress, err := im.functionalPass(fm, prefix, trainable)
		if err != nil {
			return nil, err
		}
		if !progress {
			return nil, fm.stuck()
		}
	}
	return fm.outputs(outputRefs)
}

// fnModel is a Functional model's config while functional applies it: its layers, what each
// call made so far produced, and how many calls each has had.
type fnModel struct {
	name    string
	entries []fnEntry
	index   map[string]int // entries by layer name
	// produced[layer][call] = the call's output nodes (several for a nested model with
	// several outputs)
	produced  map[string][][]int
	done      []int // calls applied per entry
	remaining int   // calls not yet applied
}

// fnEntry is one layer of a Functional config and the calls (inbound nodes) made of it.
type fnEntry struct {
	class, name string
	c           map[string]any
	nodes       []nodeCall
	// first: the node index the file gives this layer's first listed call. Keras
	// skips a nested model's own first node (the one linking its inputs to its
	// outputs) and numbers its calls from 1: tf.keras 2.x functional.py
	// get_network_config/_should_skip_first_node, Keras 3 functional.py get_config
	// ("Functional models start with a pre-existing node"), Keras 1-2.2 Container.
	first int
}

// functionalLayers reads the layers of a Functional config and their calls.
func functionalLayers(name string, layers []any) (*fnModel, error) {
	fm := &fnModel{name: name, entries: make([]fnEntry, 0, len(layers)), index: map[string]int{}, produced: map[string][][]int{}}
	for i, l := range layers {
		class, lname, lc, err := layerFields(l)
		if err != nil {
			return nil, fmt.Errorf("model %q layer %d: %w", name, i, err)
		}
		if lname == "" {
			return nil, fmt.Errorf("model %q layer %d (%s): no name", name, i, class)
		}
		m := l.(map[string]any)
		nodes, err := inboundNodes(m["inbound_nodes"])
		if err != nil {
			return nil, layerErr(lname, class, err)
		}
		if mod, _ := m["module"].(string); isOpModule(mod) {
			// A keras.ops call on a Keras tensor (x + 3.0, ops.mean(x, axis=...)): an
			// operation node, not the layer of the same class name.
			class = opPrefix + class
		}
		fm.index[lname] = len(fm.entries)
		fm.entries = append(fm.entries, fnEntry{class, lname, lc, nodes, firstNodeIndex(class, lc, m["inbound_nodes"])})
	}
	fm.done = make([]int, len(fm.entries))
	return fm, nil
}

// functionalInputs produces the model's InputLayers: the tensors ins it is called on (a nested
// model), or new graph inputs; and counts the calls left to apply.
func (im *importer) functionalInputs(fm *fnModel, inputRefs []tensorRef, ins []int, prefix string) error {
	isInput := map[string]int{}
	for i, r := range inputRefs {
		isInput[r.layer] = i
	}
	if ins != nil && len(ins) != len(inputRefs) {
		return fmt.Errorf("model %q called on %d inputs, has %d", fm.name, len(ins), len(inputRefs))
	}
	for i, e := range fm.entries {
		if e.class != "InputLayer" {
			fm.remaining += len(e.nodes)
			continue
		}
		shape, ok, err := im.inputShape(e.c)
		if err != nil {
			return layerErr(e.name, e.class, err)
		}
		if k, used := isInput[e.name]; used && ins != nil {
			fm.produced[e.name] = [][]int{{ins[k]}}
		} else {
			if !ok {
				return layerErr(e.name, e.class, errors.New("no batch_shape"))
			}
			x, err := im.g.input(prefix+e.name, shape, isInt(e.c))
			if err != nil {
				return err
			}
			fm.produced[e.name] = [][]int{{x}}
		}
		fm.done[i] = 1
	}
	return nil
}

// resolve is the node a reference names, false until the call it names has been applied; -1
// for an output index the call does not have.
func (fm *fnModel) resolve(r tensorRef) (int, bool) {
	p := fm.produced[r.layer]
	if len(p) == 0 {
		return 0, false
	}
	out := func(call []int) (int, bool) {
		if r.tidx >= len(call) {
			return -1, true
		}
		return call[r.tidx], true
	}
	k := r.node
	calls := 1 // an InputLayer, or a model input fed from outside
	if j, ok := fm.index[r.layer]; ok && fm.entries[j].class != "InputLayer" {
		k -= fm.entries[j].first
		calls = len(fm.entries[j].nodes)
	}
	if k >= 0 && k < calls {
		// The call the reference names: wait until it has been applied.
		if k < len(p) {
			return out(p[k])
		}
		return 0, false
	}
	// An index outside this model's calls (a writer that numbers nodes otherwise):
	// the latest call made so far.
	return out(p[len(p)-1])
}

// functionalPass applies, in file order, every call whose inputs are all produced; false when
// it could apply none.
func (im *importer) functionalPass(fm *fnModel, prefix string, trainable bool) (bool, error) {
	progress := false
	for i := range fm.entries {
		if err := im.tick(); err != nil {
			return false, err
		}
		e := &fm.entries[i]
		for fm.done[i] < len(e.nodes) {
			nc := e.nodes[fm.done[i]]
			refs, lc := nc.inputs(e.class, e.c)
			xs := make([]int, 0, len(refs))
			ready := true
			for _, r := range refs {
				x, ok := fm.resolve(r)
				if !ok {
					ready = false
					break
				}
				if x < 0 {
					return false, layerErr(e.name, e.class, fmt.Errorf("reads output %d of layer %q, which has fewer (a layer's extra outputs, such as an RNN's return_state, are not supported)", r.tidx, r.layer))
				}
				xs = append(xs, x)
			}
			if !ready {
				break
			}
			if len(xs) == 0 {
				return false, layerErr(e.name, e.class, errors.New("called on no tensors"))
			}
			outs, err := im.layer(e.class, e.name, lc, xs, prefix, trainable)
			if err != nil {
				return false, err
			}
			fm.produced[e.name] = append(fm.produced[e.name], outs)
			fm.done[i]++
			fm.remaining--
			progress = true
		}
	}
	return progress, nil
}

// stuck says why no call could be applied: an input no layer produces, or a cycle.
func (fm *fnModel) stuck() error {
	for i := range fm.entries {
		e := &fm.entries[i]
		if fm.done[i] < len(e.nodes) {
			refs, _ := e.nodes[fm.done[i]].inputs(e.class, e.c)
			for _, r := range refs {
				if _, ok := fm.resolve(r); !ok {
					return layerErr(e.name, e.class, fmt.Errorf("input layer %q is not produced by any layer of model %q", r.layer, fm.name))
				}
			}
		}
	}
	return fmt.Errorf("model %q: layers form a cycle", fm.name)
}

// outputs is the model's output nodes.
func (fm *fnModel) outputs(outputRefs []tensorRef) ([]int, error) {
	outs := make([]int, 0, len(outputRefs))
	for _, r := range outputRefs {
		x, ok := fm.resolve(r)
		if !ok {
			return nil, fmt.Errorf("model %q: output layer %q was never called", fm.name, r.layer)
		}
		if x < 0 {
			return nil, fmt.Errorf("model %q: output %d of layer %q, which has fewer (a layer's extra outputs, such as an RNN's return_state, are not supported)", fm.name, r.tidx, r.layer)
		}
		outs = append(outs, x)
	}
	return outs, nil
}

// firstNodeIndex is the node index of a layer's first call as the file numbers it (see
// fnEntry): 1 for a nested Functional model, 1 for a tf.keras 2.x or Keras 2.2 Sequential
// built with an input shape (a Functional subclass there; a Keras 3 Sequential is not one),
// 0 for everything else.
func firstNodeIndex(class string, c map[string]any, inbound any) int {
	if functionalSubclass(c) {
		return 1
	}
	switch class {
	case "Functional", "Model":
		return 1
	case "Sequential":
		if l, ok := inbound.([]any); ok && len(l) > 0 {
			if _, keras3 := l[0].(map[string]any); keras3 {
				return 0
			}
		}
		layers, _ := c["layers"].([]any)
		if len(layers) == 0 {
			return 0
		}
		class0, _, c0, err := layerFields(layers[0])
		if err != nil {
			return 0
		}
		if class0 == "InputLayer" {
			return 1
		}
		if _, ok, _ := batchShape(c0); ok {
			return 1
		}
	}
	return 0
}

// functionalSubclass reports whether a layer config is a functional model's (Functional.get_config:
// layers, input_layers and output_layers), whatever its class is named.
func functionalSubclass(c map[string]any) bool {
	_, l := c["layers"].([]any)
	_, in := c["input_layers"]
	_, out := c["output_layers"]
	return l && in && out
}

// refList reads [["name", node, tensor], ...] (a single ["name", 0, 0] is accepted too).
func refList(v any) ([]tensorRef, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, nil
	}
	if len(l) > 0 {
		if _, isName := l[0].(string); isName {
			l = []any{l}
		}
	}
	out := make([]tensorRef, 0, len(l))
	for _, e := range l {
		r, ok := parseRef(e)
		if !ok {
			return nil, fmt.Errorf("%v is not [layer, node, tensor]", short(e))
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRef(v any) (tensorRef, bool) {
	l, ok := v.([]any)
	if !ok || len(l) < 3 {
		return tensorRef{}, false
	}
	name, ok := l[0].(string)
	if !ok || name == "" {
		return tensorRef{}, false
	}
	n, err1 := toInt(l[1])
	t, err2 := toInt(l[2])
	if err1 != nil || err2 != nil || n < 0 || t < 0 {
		return tensorRef{}, false
	}
	return tensorRef{name, n, t}, true
}

// nodeCall is one call of a layer as inbound_nodes records it: the tensors of its
// positional arguments in order, the tensors passed by keyword, and the other keyword
// arguments (a TFOpLambda's axis, or the constant operand y of tf.math.multiply).
type nodeCall struct {
	args   []tensorRef
	kwRefs map[string][]tensorRef
	kw     map[string]any
	kwRead bool
	// raw: a Keras 3 node's {"args", "kwargs"} as written, for an operation node, whose
	// constants (the 3.0 of x + 3.0, a slice key) are arguments as much as its tensors.
	raw map[string]any
}

// inputs returns the tensors a layer of this class is called on, in the order its call
// takes them, and the config to apply it with. Tensors passed as mask, attention_mask or
// another keyword a Keras layer only reads for masking are not inputs of the simulated op.
// A TFOpLambda or SlicingOpLambda also reads its keyword arguments: they are added to its
// config as "call_kwargs", with "call_tensors" naming the keyword tensors after the first
// argument's ("call_first" of them).
func (nc nodeCall) inputs(class string, c map[string]any) ([]tensorRef, map[string]any) {
	if strings.HasPrefix(class, opPrefix) {
		return nc.opInputs(c)
	}
	refs := append([]tensorRef(nil), nc.args...)
	if class != "TFOpLambda" && class != "SlicingOpLambda" {
		// MultiHeadAttention(query, value, key) and layers called as layer(inputs=x).
		for _, k := range []string{"inputs", "query", "value", "key"} {
			refs = append(refs, nc.kwRefs[k]...)
		}
		return refs, c
	}
	lc := make(map[string]any, len(c)+3)
	for k, v := range c {
		lc[k] = v
	}
	names := make([]string, 0, len(nc.kwRefs))
	for k := range nc.kwRefs {
		names = append(names, k)
	}
	sort.Strings(names)
	var tnames []any
	for _, k := range names {
		for _, r := range nc.kwRefs[k] {
			refs = append(refs, r)
			tnames = append(tnames, k)
		}
	}
	lc["call_kwargs"] = nc.kw
	lc["call_tensors"] = tnames
	lc["call_first"] = len(nc.args)
	return refs, lc
}

// inboundNodes reads a layer's calls in either format.
func inboundNodes(v any) ([]nodeCall, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("field \"inbound_nodes\": %v is not a list", short(v))
	}
	out := make([]nodeCall, 0, len(l))
	for _, n := range l {
		nc := nodeCall{kwRefs: map[string][]tensorRef{}, kw: map[string]any{}}
		switch x := n.(type) {
		case map[string]any: // Keras 3: {"args": [...], "kwargs": {...}}
			nc.raw = x
			collectTensors(x["args"], &nc.args)
			if kw, ok := x["kwargs"].(map[string]any); ok {
				for k, v := range kw {
					var refs []tensorRef
					collectTensors(v, &refs)
					if len(refs) > 0 {
						nc.kwRefs[k] = refs
					} else {
						nc.kw[k] = v
					}
				}
			}
		case []any:
			// tf.keras 2.x (keras/engine/node.py Node.serialize): the first call argument's
			// structure with every tensor as [layer, node, tensor, kwargs]: [[...], [...]]
			// for a layer called on a list, or one bare [layer, node, tensor, kwargs] for a
			// TFOpLambda (whose _preserve_input_structure_in_config keeps it unwrapped). A
			// constant in the first argument is ["_CONSTANT_VALUE", -1, value, kwargs].
			if err := firstArg(x, &nc); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("field \"inbound_nodes\": %v is not a node", short(n))
		}
		out = append(out, nc)
	}
	return out, nil
}

// firstArg reads a tf.keras 2.x node: the first argument's tensors, and the keyword
// arguments every one of them carries (tensors among them as [layer, node, tensor]).
func firstArg(v []any, nc *nodeCall) error {
	if len(v) > 0 {
		if name, ok := v[0].(string); ok {
			if name != "_CONSTANT_VALUE" {
				r, ok := parseRef(v)
				if !ok {
					return fmt.Errorf("field \"inbound_nodes\": %v is not [layer, node, tensor, kwargs]", short(v))
				}
				nc.args = append(nc.args, r)
			}
			// Every element of the first argument carries the same kwargs: read them once.
			if len(v) > 3 && !nc.kwRead {
				nc.kwRead = true
				if kw, ok := v[3].(map[string]any); ok {
					for k, a := range kw {
						var refs []tensorRef
						collectRefs(a, &refs)
						if len(refs) > 0 {
							nc.kwRefs[k] = refs
						} else {
							nc.kw[k] = a
						}
					}
				}
			}
			return nil
		}
	}
	if len(v) == 0 {
		return nil
	}
	for _, e := range v {
		l, ok := e.([]any)
		if !ok {
			return fmt.Errorf("field \"inbound_nodes\": %v is not [layer, node, tensor, kwargs]", short(e))
		}
		if err := firstArg(l, nc); err != nil {
			return err
		}
	}
	return nil
}

// collectRefs appends the tf.keras 2.x tensor references ([layer, node, tensor]) in a
// keyword argument's value.
func collectRefs(v any, refs *[]tensorRef) {
	l, ok := v.([]any)
	if !ok {
		return
	}
	if r, ok := parseRef(l); ok && len(l) == 3 {
		*refs = append(*refs, r)
		return
	}
	for _, e := range l {
		collectRefs(e, refs)
	}
}

// collectTensors appends, in order, every Keras 3 serialized tensor
// ({"class_name": "__keras_tensor__", "config": {"keras_history": [name, node, tensor]}}).
func collectTensors(v any, refs *[]tensorRef) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectTensors(e, refs)
		}
	case map[string]any:
		if x["class_name"] == "__keras_tensor__" {
			if c, ok := x["config"].(map[string]any); ok {
				if r, ok := parseRef(c["keras_history"]); ok {
					*refs = append(*refs, r)
				}
			}
		}
	}
}

// hasMixedPolicy reports whether any layer's dtype policy is a mixed one.
func hasMixedPolicy(v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if hasMixedPolicy(e) {
				return true
			}
		}
	case map[string]any:
		if strings.HasPrefix(policyName(x["dtype"]), "mixed_") {
			return true
		}
		for k, e := range x {
			if k != "dtype" && hasMixedPolicy(e) {
				return true
			}
		}
	}
	return false
}
