package models

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKeras3LayerExports imports the one-layer models real Keras 3 built for the built-in
// layer classes and checks Keras's parameter counts and every tensor's shape.
func TestKeras3LayerExports(t *testing.T) {
	for _, path := range keras3Exports(t, "layers") {
		name := strings.TrimSuffix(filepath.Base(path), ".json.gz")
		t.Run(name, func(t *testing.T) {
			m := checkKeras3Export(t, path)
			if m == nil {
				return
			}
			p, err := m.Plan(PlanOptions{Batch: 2})
			if err != nil {
				t.Fatalf("%s: plan: %v", name, err)
			}
			checkPlan(t, name, p)
		})
	}
}

// oneLayerJSON is a Keras 3 functional model of one layer of class with config c called on
// inputs of the given per-sample shapes (dtype int32 when integer).
func oneLayerJSON(class string, c map[string]any, integer bool, shapes ...[]int) string {
	var layers, inputs, args []any
	dt := "float32"
	if integer {
		dt = "int32"
	}
	for i, s := range shapes {
		name := fmt.Sprintf("in%d", i)
		bs := append([]any{nil}, anyInts(s)...)
		layers = append(layers, map[string]any{"module": "keras.layers", "class_name": "InputLayer", "name": name,
			"config": map[string]any{"batch_shape": bs, "dtype": dt, "name": name}, "inbound_nodes": []any{}})
		inputs = append(inputs, []any{name, 0, 0})
		args = append(args, map[string]any{"class_name": "__keras_tensor__",
			"config": map[string]any{"shape": bs, "dtype": dt, "keras_history": []any{name, 0, 0}}})
	}
	if len(args) > 1 {
		args = []any{args}
	}
	c["name"] = "layer"
	layers = append(layers, map[string]any{"module": "keras.layers", "class_name": class, "name": "layer", "config": c,
		"inbound_nodes": []any{map[string]any{"args": args, "kwargs": map[string]any{}}}})
	b, _ := json.Marshal(map[string]any{"class_name": "Functional", "config": map[string]any{"name": "m",
		"layers": layers, "input_layers": inputs, "output_layers": []any{[]any{"layer", 0, 0}}}})
	return string(b)
}

// handWritten covers the classes no Keras 3 export of testdata/keras3 holds (Keras on the
// device machine could not build the TF-only lookups, and the 1D layers had no model of their
// own), with the parameter count and output shape the Keras source gives (file named).
var handWritten = []struct {
	class   string
	c       map[string]any
	integer bool
	shapes  [][]int
	params  int64
	out     []int
}{
	{"Average", map[string]any{}, false, [][]int{{4}, {4}}, 0, []int{4}},
	{"Minimum", map[string]any{}, false, [][]int{{4}, {4}}, 0, []int{4}},
	{"AveragePooling1D", map[string]any{"pool_size": 2}, false, [][]int{{12, 8}}, 0, []int{6, 8}},
	{"MaxPooling1D", map[string]any{"pool_size": []any{2}, "strides": []any{2}, "padding": "same"}, false, [][]int{{11, 8}}, 0, []int{6, 8}},
	// conv1d.py: kernel (3, 8, 4) and bias (4).
	{"Conv1D", map[string]any{"filters": 4, "kernel_size": []any{3}}, false, [][]int{{12, 8}}, 100, []int{10, 4}},
	{"GlobalAveragePooling1D", map[string]any{}, false, [][]int{{12, 8}}, 0, []int{8}},
	{"GlobalMaxPooling1D", map[string]any{"keepdims": true}, false, [][]int{{12, 8}}, 0, []int{1, 8}},
	{"SpatialDropout1D", map[string]any{"rate": 0.2}, false, [][]int{{12, 8}}, 0, []int{12, 8}},
	{"SpatialDropout2D", map[string]any{"rate": 0.2}, false, [][]int{{16, 16, 3}}, 0, []int{16, 16, 3}},
	{"UpSampling1D", map[string]any{"size": 2}, false, [][]int{{12, 8}}, 0, []int{24, 8}},
	{"ZeroPadding1D", map[string]any{"padding": 1}, false, [][]int{{12, 8}}, 0, []int{14, 8}},
	{"Equalization", map[string]any{"value_range": []any{0, 255}, "bins": 256}, false, [][]int{{16, 16, 3}}, 0, []int{16, 16, 3}},
	// grouped_query_attention.py build: query (8, 4, 4) + (4, 4), key and value (6, 2, 4) +
	// (2, 4) each, output (4, 4, 8) + (8).
	{"GroupedQueryAttention", map[string]any{"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2}, false,
		[][]int{{12, 8}, {10, 6}}, 392, []int{12, 8}},
	// multi_head_attention.py build: query (8, 2, 4) + (2, 4), key and value (6, 2, 4) + (2, 4),
	// output (2, 4, 8) + (8).
	{"MultiHeadAttention", map[string]any{"num_heads": 2, "key_dim": 4}, false, [][]int{{12, 8}, {10, 6}}, 256, []int{12, 8}},
	{"Hashing", map[string]any{"num_bins": 8}, true, [][]int{{3}}, 0, []int{3}},
	{"HashedCrossing", map[string]any{"num_bins": 16}, true, [][]int{{1}, {1}}, 0, []int{1}},
	// index_lookup.py compute_output_shape: int keeps the shape; multi_hot is the vocabulary
	// (3) + one OOV index.
	{"IntegerLookup", map[string]any{"vocabulary": []any{1, 2, 3}}, true, [][]int{{3}}, 0, []int{3}},
	{"StringLookup", map[string]any{"vocabulary": []any{"a", "b", "c"}, "output_mode": "multi_hot"}, false, [][]int{{3}}, 0, []int{4}},
	{"TextVectorization", map[string]any{"max_tokens": 20, "output_sequence_length": 6}, false, [][]int{{1}}, 0, []int{6}},
	{"Pipeline", map[string]any{"layers": []any{
		map[string]any{"module": "keras.layers", "class_name": "Rescaling", "config": map[string]any{"scale": 0.5}},
		map[string]any{"module": "keras.layers", "class_name": "RandomFlip", "config": map[string]any{}},
	}}, false, [][]int{{16, 16, 3}}, 0, []int{16, 16, 3}},
}

// notLayers are classes keras.layers exports that a saved config never holds as a node of
// its own: InputSpec describes inputs; Layer and Wrapper are base classes with no computation
// (a config naming a subclass of them holds that subclass's class, a custom layer for the
// sidecar). Lambda's Python function is only in the config as marshalled bytecode: it is read
// through the sidecar (TestCustomLayersSidecar).
var notLayers = map[string]string{
	"InputSpec": "an input specification, not a layer",
	"Layer":     "the base class",
	"Wrapper":   "the base class of TimeDistributed, Bidirectional, SpectralNormalization",
	"Lambda":    "its function is Python bytecode: described in the sidecar",
}

// TestKeras3LayerClasses walks every class keras/src/layers exports as keras.layers.X
// (testdata/keras3/layer_classes.txt, tools/keras/layer_classes.py) and fails on any that
// gpusim cannot read: each must import, from a real Keras 3 export (the applications, the
// per-layer models, as a nested cell) or from the hand-written configs above, with Keras's
// parameter count and output shape.
func TestKeras3LayerClasses(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "keras3", "layer_classes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, part := range []string{"apps", "layers", "ops", "archive"} {
		for _, path := range keras3Exports(t, part) {
			var v any
			if err := json.Unmarshal(readKeras3Export(t, path).Config, &v); err != nil {
				t.Fatal(err)
			}
			collectClasses(v, exported)
		}
	}
	hand := map[string]bool{}
	for _, h := range handWritten {
		hand[h.class] = true
		m, err := FromKerasJSON(strings.NewReader(oneLayerJSON(h.class, h.c, h.integer, h.shapes...)))
		if err != nil {
			t.Errorf("%s: %v", h.class, err)
			continue
		}
		l := m.Layers[len(m.Layers)-1]
		if l.Params != h.params || !slices.Equal(l.OutputShape, h.out) {
			t.Errorf("%s: params %d, output %v; want %d, %v", h.class, l.Params, l.OutputShape, h.params, h.out)
		}
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 150 {
		t.Fatalf("layer_classes.txt: %d classes, want the whole keras.layers list", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("layer_classes.txt: %q is not EXPORTED CLASS FILE", line)
		}
		name, class := f[0], f[1]
		if why, ok := notLayers[class]; ok {
			t.Logf("%s: not read as a layer (%s)", class, why)
			continue
		}
		_, reads := builders[class]
		_, cell := cellLayers[class]
		// InputLayer is read by the importer itself; cells inside RNN and Bidirectional.
		reads = reads || cell || class == "StackedRNNCells" || class == "InputLayer"
		if !reads {
			t.Errorf("keras.layers.%s (%s, %s): gpusim cannot read this class", name, class, f[2])
			continue
		}
		if name != class && builders[kerasAliases[name]] == nil {
			t.Errorf("keras.layers.%s: the alias of %s is not read", name, class)
		}
		if !exported[class] && !hand[class] {
			t.Errorf("keras.layers.%s (%s): no test config imports it", name, class)
		}
	}
}

// collectClasses adds every "class_name" of a layer config (nested ones included).
func collectClasses(v any, into map[string]bool) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectClasses(e, into)
		}
	case map[string]any:
		if c, ok := x["class_name"].(string); ok {
			if _, isCfg := x["config"].(map[string]any); isCfg {
				into[c] = true
			}
		}
		for _, e := range x {
			collectClasses(e, into)
		}
	}
}
