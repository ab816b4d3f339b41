package models

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// customJSON is a Keras 3 functional model with two registered custom layers (as
// @keras.saving.register_keras_serializable(package="my_pkg") writes them) and a Lambda.
const customJSON = `{"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "m", "trainable": true,
 "layers": [
  {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 16, 16, 8], "dtype": "float32", "name": "x"}, "name": "x", "inbound_nodes": []},
  {"module": null, "class_name": "my_pkg>MyScale", "config": {"name": "scale", "trainable": true, "dim": 8}, "registered_name": "my_pkg>MyScale", "name": "scale",
   "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 16, 16, 8], "dtype": "float32", "keras_history": ["x", 0, 0]}}], "kwargs": {}}]},
  {"module": null, "class_name": "my_pkg>MyProj", "config": {"name": "proj", "trainable": true, "units": 4}, "registered_name": "my_pkg>MyProj", "name": "proj",
   "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 16, 16, 8], "dtype": "float32", "keras_history": ["scale", 0, 0]}}], "kwargs": {}}]},
  {"module": "keras.layers", "class_name": "Lambda", "config": {"name": "pool", "trainable": true}, "name": "pool",
   "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 16, 16, 4], "dtype": "float32", "keras_history": ["proj", 0, 0]}}], "kwargs": {}}]}
 ],
 "input_layers": [["x", 0, 0]], "output_layers": [["pool", 0, 0]]}}`

const customYAML = `layers:
  MyScale:
    weights:
      - {name: gamma, shape: [in-1]}
      - {name: count, shape: [1], trainable: false}
    flops_per_element: 2
    saves: input
  MyProj:
    like: Dense
  pool:
    output: [in2]
    flops_per_element: 64
    kind: reduction
    saves: none
`

// TestCustomLayersSidecar: a model with custom classes imports from a sidecar beside the file,
// by class (registered or plain name), by layer name, and "like" a built-in.
func TestCustomLayersSidecar(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte(customJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), `describe class "my_pkg>MyScale" in `+SidecarPath(path)+`, as layers: {MyScale: {like: Dense}}`) {
		t.Fatalf("LoadFile without a sidecar: %v, want the error that says how to describe my_pkg>MyScale", err)
	}
	if err := os.WriteFile(SidecarPath(path), []byte(customYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// MyScale: gamma (8) + count (1, not trainable); MyProj like Dense(4): 8*4 + 4.
	if m.Params != 8+1+36 || m.TrainableParams != 8+36 {
		t.Errorf("params %d trainable %d, want 45 and 44", m.Params, m.TrainableParams)
	}
	want := map[string]struct {
		shape []int
		flops float64
	}{
		"scale": {[]int{16, 16, 8}, 2 * 16 * 16 * 8},
		"proj":  {[]int{16, 16, 4}, 2*16*16*8*4 + 16*16*4}, // matmul and bias
		"pool":  {[]int{4}, 64 * 4},
	}
	for _, l := range m.Layers {
		w, ok := want[l.Name]
		if !ok {
			continue
		}
		if !equalInts(l.OutputShape, w.shape) || l.FLOPs != w.flops {
			t.Errorf("layer %s: shape %v FLOPs %g, want %v and %g", l.Name, l.OutputShape, l.FLOPs, w.shape, w.flops)
		}
	}
	p, err := m.Plan(PlanOptions{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, "custom", p)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSidecarErrors: a bad sidecar names its file, line and key.
func TestSidecarErrors(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"layers:\n  A:\n    flops: 3\n", ":3: layers.A.flops: unknown key"},
		{"layers:\n  A:\n    like: Dens\n", ":3: layers.A.like: \"Dens\" is not a layer class gpusim reads"},
		{"layers:\n  A:\n    saves: all\n", ":3: layers.A.saves: \"all\": want input, output, both or none"},
		{"layers:\n  A:\n    weights:\n      - {name: w, shape: [x], trainable: maybe}\n", ":4: layers.A.weights[0].trainable"},
		{"layer:\n  A: {}\n", ":1: layer: unknown key (want layers)"},
		{"layers:\n  A:\n    flops_per_element: -1\n", ":3: layers.A.flops_per_element: \"-1\": want a number >= 0"},
	} {
		path := filepath.Join(t.TempDir(), "m.layers.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadLayerSpecs(path)
		if err == nil || !strings.Contains(err.Error(), path+tt.want) {
			t.Errorf("ReadLayerSpecs(%q) = %v, want %q", tt.yaml, err, path+tt.want)
		}
	}
}

// TestKeras3Archive reads the .keras archive real Keras 3 saved (config.json in a zip, beside
// the weights) with the counts Keras gave the same model.
func TestKeras3Archive(t *testing.T) {
	e := readKeras3Export(t, filepath.Join("testdata", "keras3", "archive", "small.json.gz"))
	m, err := LoadFile(filepath.Join("testdata", "keras3", "archive", "small.keras"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Params != e.Counts.Params || m.TrainableParams != e.Counts.Trainable {
		t.Errorf("small.keras: params %d trainable %d, want Keras's %d / %d", m.Params, m.TrainableParams, e.Counts.Params, e.Counts.Trainable)
	}
}

// TestFunctionalSubclass: a registered keras.Model subclass built functionally (its config is
// Functional's) reads as a nested model, with no sidecar.
func TestFunctionalSubclass(t *testing.T) {
	inner := oneLayerJSON("Dense", map[string]any{"units": 3}, false, []int{4})
	var sub map[string]any
	if err := json.Unmarshal([]byte(inner), &sub); err != nil {
		t.Fatal(err)
	}
	c := sub["config"].(map[string]any)
	c["name"] = "enc"
	outer := map[string]any{"class_name": "Functional", "config": map[string]any{"name": "top",
		"layers": []any{
			map[string]any{"class_name": "InputLayer", "name": "x", "config": map[string]any{"batch_shape": []any{nil, 4}, "name": "x"}, "inbound_nodes": []any{}},
			map[string]any{"module": "my_pkg", "class_name": "my_pkg>Encoder", "registered_name": "my_pkg>Encoder", "name": "enc", "config": c,
				"inbound_nodes": []any{map[string]any{"args": []any{map[string]any{"class_name": "__keras_tensor__",
					"config": map[string]any{"shape": []any{nil, 4}, "keras_history": []any{"x", 0, 0}}}}, "kwargs": map[string]any{}}}},
		},
		"input_layers": []any{[]any{"x", 0, 0}}, "output_layers": []any{[]any{"enc", 1, 0}}}}
	b, _ := json.Marshal(outer)
	m, err := FromKerasJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if m.Params != 4*3+3 || !equalInts(m.OutputShapes[0], []int{3}) {
		t.Errorf("params %d output %v, want 15 and [3]", m.Params, m.OutputShapes)
	}
}
