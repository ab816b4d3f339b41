package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// KerasJSON writes the model the way model.to_json() does, so that FromKerasJSON reads it
// back: keras3 selects the Keras 3 layout (module/registered_name/build_config, inbound nodes
// as {"args", "kwargs"} with serialized tensors), otherwise tf.keras 2.x (inbound nodes as
// [["layer", 0, 0, {}]]). Layer configs carry the keys gpusim reads plus name, trainable and
// dtype; initializers, regularizers and constraints are left out (they do not change shapes
// or counts). Only models built from Keras layers export faithfully; the zoo's transformer
// helpers (PositionEmbedding, ClassToken, TokenSlice, TiedLogits) export under those names.
func (m *Model) KerasJSON(keras3 bool) ([]byte, error) {
	g := m.g
	if g == nil || len(g.records) == 0 {
		return nil, fmt.Errorf("model %s: no layer records to export", m.Name)
	}
	producer := map[int]string{}
	for _, r := range g.records {
		producer[r.out] = r.name
	}
	tensor := func(x int) any {
		shape := append([]any{nil}, anyInts(g.nodes[x].shape)...)
		dt := "float32"
		if g.nodes[x].intOut {
			dt = "int32"
		}
		return map[string]any{"class_name": "__keras_tensor__",
			"config": map[string]any{"shape": shape, "dtype": dt, "keras_history": []any{producer[x], 0, 0}}}
	}
	layers := make([]any, 0, len(g.records))
	var inputs, outputs []any
	for _, r := range g.records {
		if strings.HasPrefix(r.class, opPrefix) {
			return nil, fmt.Errorf("model %s: layer %q is a keras.ops node, which KerasJSON does not write", m.Name, r.name)
		}
		if r.class == "InputLayer" {
			inputs = append(inputs, []any{r.name, 0, 0})
		}
		l := map[string]any{"class_name": r.class, "config": exportConfig(r, keras3), "name": r.name}
		switch {
		case r.class == "InputLayer":
			l["inbound_nodes"] = []any{}
		case keras3:
			l["module"] = "keras.layers"
			l["registered_name"] = nil
			in0 := r.in[0]
			l["build_config"] = map[string]any{"input_shape": append([]any{nil}, anyInts(g.nodes[in0].shape)...)}
			var args []any
			switch r.class {
			case "Add", "Concatenate", "Multiply", "Subtract", "Average", "Maximum", "Minimum":
				ts := make([]any, len(r.in))
				for i, x := range r.in {
					ts[i] = tensor(x)
				}
				args = []any{ts}
			default:
				for _, x := range r.in {
					args = append(args, tensor(x))
				}
			}
			l["inbound_nodes"] = []any{map[string]any{"args": args, "kwargs": map[string]any{}}}
		default:
			refs := make([]any, len(r.in))
			for i, x := range r.in {
				refs[i] = []any{producer[x], 0, 0, map[string]any{}}
			}
			if r.class == "MultiHeadAttention" && len(r.in) == 2 {
				refs = []any{[]any{producer[r.in[0]], 0, 0, map[string]any{"value": []any{producer[r.in[1]], 0, 0}}}}
			}
			l["inbound_nodes"] = []any{refs}
		}
		layers = append(layers, l)
	}
	for _, o := range g.outputs {
		outputs = append(outputs, []any{producer[o], 0, 0})
	}
	top := map[string]any{
		"class_name": "Functional",
		"config": map[string]any{"name": m.Name, "trainable": true, "layers": layers,
			"input_layers": inputs, "output_layers": outputs},
	}
	if keras3 {
		top["module"] = "keras.src.models.functional"
		top["registered_name"] = "Functional"
		top["build_config"] = map[string]any{"input_shape": nil}
		top["compile_config"] = nil
	} else {
		top["keras_version"] = "2.15.0"
		top["backend"] = "tensorflow"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(top); err != nil {
		return nil, fmt.Errorf("model %s: %w", m.Name, err)
	}
	return buf.Bytes(), nil
}

// exportConfig is a layer record's config as model.to_json() writes it: the keys gpusim reads
// plus name, and trainable and dtype (a DTypePolicy under Keras 3) on every layer but the
// input, whose shape tf.keras 2.x calls batch_input_shape.
func exportConfig(r record, keras3 bool) map[string]any {
	c := map[string]any{}
	for k, v := range r.config {
		c[k] = v
	}
	c["name"] = r.name
	switch {
	case r.class == "InputLayer":
		if !keras3 {
			c["batch_input_shape"] = c["batch_shape"]
			delete(c, "batch_shape")
			c["ragged"] = false
		}
	case keras3:
		c["trainable"] = true
		c["dtype"] = map[string]any{"module": "keras", "class_name": "DTypePolicy",
			"config": map[string]any{"name": "float32"}, "registered_name": nil}
	default:
		c["trainable"] = true
		c["dtype"] = "float32"
	}
	return c
}
