package models

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpusim/gpusim/internal/limitread"
	"github.com/gpusim/gpusim/internal/yamldoc"
)

// Custom layers. A config may hold classes Keras does not define (a user's registered layer,
// "package>MyLayer"); gpusim cannot know their shapes or cost, so the user describes each in a
// sidecar YAML file beside the model (MODEL.layers.yaml for MODEL.json or MODEL.keras):
//
//	layers:
//	  MyScale:                    # the class_name in the config
//	    output: input             # per-sample output shape: "input" (the first input's), or a list
//	    weights:                  # the layer's variables
//	      - {name: gamma, shape: [in-1]}
//	    flops_per_element: 1      # forward FLOPs per output element
//	    saves: input              # what its gradient keeps: input, output, both or none
//	  MyBlock:
//	    like: Dense               # built as this Keras class from the layer's own config
//	    config: {units: 64}       # keys laid over the layer's config
//
// A shape entry is an integer, a config key holding one ("units"), or inN / in-N: dimension
// N of the first input's per-sample shape (in0 first, in-1 the last).

// LayerSpecs is a sidecar file's descriptions by class name.
type LayerSpecs struct {
	File    string
	Classes map[string]*LayerSpec
}

// LayerSpec describes one custom layer class.
type LayerSpec struct {
	Like   string         // build as this class (a Keras class gpusim reads)
	Config map[string]any // laid over the layer's config when Like is set
	// Output is the per-sample output shape; nil: the first input's.
	Output []string
	// Weights are the layer's variables.
	Weights []WeightSpec
	// FLOPsPerElement (per output element) and FLOPsPerSample add up to the forward FLOPs of
	// one sample; the backward pass costs as much for the input gradient and as much again for
	// the weights' when there are trainable weights.
	FLOPsPerElement, FLOPsPerSample float64
	// BytesPerSample is memory traffic of the forward kernel beyond reading its inputs and
	// writing its output (a lookup table, scratch), per sample.
	BytesPerSample float64
	// Saves is what the gradient keeps: "input" (default), "output", "both", "none".
	Saves string
	// Kind prices the op: elementwise (default), matmul, conv, reduction, copy.
	Kind string
	line int
}

// WeightSpec is one variable of a custom layer.
type WeightSpec struct {
	Name      string
	Shape     []string
	Trainable bool
}

// SidecarPath is where LoadFile looks for the layer descriptions of a model file.
func SidecarPath(model string) string {
	ext := filepath.Ext(model)
	return strings.TrimSuffix(model, ext) + ".layers.yaml"
}

// ReadLayerSpecs reads a sidecar file; errors name its line and key.
func ReadLayerSpecs(path string) (*LayerSpecs, error) {
	// A sidecar is a few kilobytes of YAML; limitread refuses a pipe or device in its place.
	data, err := limitread.ReadFile(path, maxModelFile)
	if err != nil {
		return nil, err
	}
	doc, second, err := yamldoc.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if second > 0 {
		return nil, fmt.Errorf("%s:%d: a second YAML document (one file describes the layers once)", path, second)
	}
	specs := &LayerSpecs{File: path, Classes: map[string]*LayerSpec{}}
	if len(doc.Content) == 0 {
		return specs, nil
	}
	root := doc.Content[0]
	bad := func(n *yaml.Node, key, f string, a ...any) error {
		return fmt.Errorf("%s:%d: %s: %s", path, n.Line, key, fmt.Sprintf(f, a...))
	}
	if root.Kind != yaml.MappingNode {
		return nil, bad(root, "top level", "want a mapping with the key layers")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "layers" {
			return nil, bad(k, k.Value, "unknown key (want layers)")
		}
		if v.Kind != yaml.MappingNode {
			return nil, bad(v, "layers", "want a mapping of class names")
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			cls, body := v.Content[j], v.Content[j+1]
			s, err := readLayerSpec(body, "layers."+cls.Value, bad)
			if err != nil {
				return nil, err
			}
			s.line = cls.Line
			specs.Classes[cls.Value] = s
		}
	}
	return specs, nil
}

// readLayerSpec reads one class's description.
func readLayerSpec(n *yaml.Node, at string, bad func(*yaml.Node, string, string, ...any) error) (*LayerSpec, error) {
	if n.Kind != yaml.MappingNode {
		return nil, bad(n, at, "want a mapping (like, output, weights, flops_per_element, ...)")
	}
	s := &LayerSpec{Saves: "input", Kind: "elementwise"}
	num := func(v *yaml.Node, key string) (float64, error) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if err != nil || f < 0 || v.Kind != yaml.ScalarNode {
			return 0, bad(v, key, "%q: want a number >= 0", v.Value)
		}
		return f, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := at + "." + k.Value
		var err error
		switch k.Value {
		case "like":
			s.Like = v.Value
		case "config":
			err = v.Decode(&s.Config)
			if err != nil || v.Kind != yaml.MappingNode {
				return nil, bad(v, key, "want a mapping of config keys")
			}
		case "output":
			if v.Kind == yaml.ScalarNode && v.Value == "input" {
				continue
			}
			if s.Output, err = shapeEntries(v); err != nil {
				return nil, bad(v, key, "%v", err)
			}
		case "weights":
			if s.Weights, err = weightEntries(v, key, bad); err != nil {
				return nil, err
			}
		case "flops_per_element":
			s.FLOPsPerElement, err = num(v, key)
		case "flops_per_sample":
			s.FLOPsPerSample, err = num(v, key)
		case "bytes_per_sample":
			s.BytesPerSample, err = num(v, key)
		case "saves":
			s.Saves = v.Value
			if _, ok := map[string]bool{"input": true, "output": true, "both": true, "none": true}[v.Value]; !ok {
				return nil, bad(v, key, "%q: want input, output, both or none", v.Value)
			}
		case "kind":
			s.Kind = v.Value
			if _, ok := customKinds[v.Value]; !ok {
				return nil, bad(v, key, "%q: want elementwise, matmul, conv, reduction or copy", v.Value)
			}
		default:
			return nil, bad(k, key, "unknown key (like, config, output, weights, flops_per_element, flops_per_sample, bytes_per_sample, saves, kind)")
		}
		if err != nil {
			return nil, err
		}
	}
	if s.Like != "" {
		if _, ok := builders[s.Like]; !ok {
			return nil, bad(n, at+".like", "%q is not a layer class gpusim reads", s.Like)
		}
	}
	return s, nil
}

var customKinds = map[string]OpKind{"elementwise": Elementwise, "matmul": MatMul, "conv": Conv,
	"reduction": Reduction, "copy": Copy}

func shapeEntries(v *yaml.Node) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, errors.New("want input or a list of dimensions")
	}
	out := make([]string, len(v.Content))
	for i, e := range v.Content {
		if e.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("dimension %d is not a scalar", i)
		}
		out[i] = e.Value
	}
	return out, nil
}

func weightEntries(v *yaml.Node, at string, bad func(*yaml.Node, string, string, ...any) error) ([]WeightSpec, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, bad(v, at, "want a list of {name, shape, trainable}")
	}
	var out []WeightSpec
	for i, e := range v.Content {
		key := fmt.Sprintf("%s[%d]", at, i)
		if e.Kind != yaml.MappingNode {
			return nil, bad(e, key, "want {name, shape, trainable}")
		}
		w := WeightSpec{Name: fmt.Sprintf("w%d", i), Trainable: true}
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, val := e.Content[j], e.Content[j+1]
			switch k.Value {
			case "name":
				w.Name = val.Value
			case "shape":
				s, err := shapeEntries(val)
				if err != nil {
					return nil, bad(val, key+".shape", "%v", err)
				}
				w.Shape = s
			case "trainable":
				b, err := strconv.ParseBool(val.Value)
				if err != nil {
					return nil, bad(val, key+".trainable", "%q: want true or false", val.Value)
				}
				w.Trainable = b
			default:
				return nil, bad(k, key+"."+k.Value, "unknown key (name, shape, trainable)")
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// specDims resolves shape entries against a layer's config and first input shape.
func specDims(entries []string, c cfg, in []int) ([]int, error) {
	out := make([]int, len(entries))
	for i, e := range entries {
		if n, err := strconv.Atoi(e); err == nil {
			out[i] = n
		} else if rest, ok := strings.CutPrefix(e, "in"); ok {
			k, err := strconv.Atoi(rest)
			if err != nil {
				return nil, fmt.Errorf("dimension %q: want inN or in-N", e)
			}
			if k < 0 {
				k += len(in)
			}
			if k < 0 || k >= len(in) {
				return nil, fmt.Errorf("dimension %q out of range for input shape %v", e, in)
			}
			out[i] = in[k]
		} else {
			n, err := c.int(e, 0)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("dimension %q: not an integer, inN, or a config key holding one", e)
			}
			out[i] = n
		}
		if out[i] <= 0 {
			return nil, fmt.Errorf("dimension %q is %d", e, out[i])
		}
	}
	return out, nil
}

// lookup finds the description of a layer: by the layer's own name (one Lambda among
// several), its class, or a registered name ("package>Class") by its class part.
func (s *LayerSpecs) lookup(class, name string) *LayerSpec {
	if s == nil {
		return nil
	}
	if l, ok := s.Classes[name]; ok {
		return l
	}
	if l, ok := s.Classes[class]; ok {
		return l
	}
	if _, c, ok := strings.Cut(class, ">"); ok {
		return s.Classes[c]
	}
	return nil
}

// buildCustom applies a layer the sidecar describes.
func buildCustom(g *graph, l *layerCall, s *LayerSpec) (int, error) {
	if s.Like != "" {
		c := cfg{}
		for k, v := range l.c {
			c[k] = v
		}
		for k, v := range s.Config {
			c[k] = v
		}
		return builders[s.Like](g, &layerCall{class: s.Like, name: l.name, c: c, ins: l.ins, x: l.x, s: l.s})
	}
	out := clone(l.s)
	if s.Output != nil {
		var err error
		if out, err = specDims(s.Output, l.c, l.s); err != nil {
			return 0, fmt.Errorf("sidecar output: %w", err)
		}
	}
	var ws []int
	trainable := false
	for _, w := range s.Weights {
		shape, err := specDims(w.Shape, l.c, l.s)
		if err != nil {
			return 0, fmt.Errorf("sidecar weight %s: %w", w.Name, err)
		}
		ws = append(ws, g.w(w.Name, shape, w.Trainable, true, true))
		trainable = trainable || w.Trainable
	}
	fl := s.FLOPsPerElement*float64(prod(out)) + s.FLOPsPerSample
	n := node{name: l.name + "/" + l.class, kind: customKinds[s.Kind], in: clone(l.ins), shape: out,
		flops: fl, dxFLOPs: fl, weights: ws, extraBytes: s.BytesPerSample}
	if trainable {
		n.dwFLOPs = fl
	}
	switch s.Saves {
	case "input":
		n.saveIn = 1<<uint(len(l.ins)) - 1
	case "output":
		n.saveOut = true
	case "both":
		n.saveIn, n.saveOut = 1<<uint(len(l.ins))-1, true
	}
	return g.addNode(n), nil
}

// unknownClassErr says how to describe a class gpusim does not know.
func unknownClassErr(g *graph, class string) error {
	where := "a sidecar MODEL.layers.yaml beside the model file"
	if g.specs != nil && g.specs.File != "" {
		where = g.specs.File
	}
	known := ""
	if g.specs != nil && len(g.specs.Classes) > 0 {
		var names []string
		for k := range g.specs.Classes {
			names = append(names, k)
		}
		sort.Strings(names)
		known = " (it describes " + strings.Join(names, ", ") + ")"
	}
	short := class
	if _, c, ok := strings.Cut(class, ">"); ok {
		short = c // a registered name "package>Class" matches its class part
	}
	return fmt.Errorf("%w: a custom layer? describe class %q in %s%s, as layers: {%s: {like: Dense}} or its output, weights and flops_per_element (docs/models.md, \"Custom layers\")",
		errUnsupported, class, where, known, short)
}
