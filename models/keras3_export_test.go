package models

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// keras3Export is one model that tools/h200/keras_export.py built with real Keras 3 and wrote
// with its own counts (models/testdata/keras3/README.md).
type keras3Export struct {
	Name   string
	Counts struct {
		Params       int64
		Trainable    int64
		NonTrainable int64 `json:"non_trainable"`
	}
	// Layers: Keras's count_params() and output shape (batch first) per layer.
	Layers map[string][]json.RawMessage
	Config json.RawMessage
}

func readKeras3Export(t *testing.T, path string) keras3Export {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var e keras3Export
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e
}

func keras3Exports(t *testing.T, part string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "keras3", part, "*.json.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no exports under testdata/keras3/%s (%v)", part, err)
	}
	return files
}

// checkKeras3Export imports one export and compares gpusim's parameter counts with Keras's,
// in total, trainable and not, and per layer with its output shape.
func checkKeras3Export(t *testing.T, path string) *Model {
	t.Helper()
	e := readKeras3Export(t, path)
	// The MobileNetV3 models leave their image size unset; the others ignore the option.
	m, err := FromKerasJSONWith(bytes.NewReader(e.Config), ImportOptions{ImageSize: 224})
	if err != nil {
		t.Errorf("%s: %v", e.Name, err)
		return nil
	}
	c := e.Counts
	if m.Params != c.Params || m.TrainableParams != c.Trainable || m.Params-m.TrainableParams != c.NonTrainable {
		t.Errorf("%s: params %d trainable %d non-trainable %d, want Keras's %d / %d / %d", e.Name,
			m.Params, m.TrainableParams, m.Params-m.TrainableParams, c.Params, c.Trainable, c.NonTrainable)
	}
	byName := map[string]Layer{}
	for _, l := range m.Layers {
		byName[l.Name] = l
	}
	for name, v := range e.Layers {
		l, ok := byName[name]
		if !ok || len(v) != 2 {
			continue // a nested model's layers are prefixed with its name
		}
		var params int64
		var shape []*int
		if json.Unmarshal(v[0], &params) != nil || json.Unmarshal(v[1], &shape) != nil {
			continue // a layer of several outputs
		}
		if l.Params != params {
			t.Errorf("%s layer %q (%s): params %d, want %d", e.Name, name, l.Class, l.Params, params)
		}
		if len(shape) > 0 {
			want := make([]int, 0, len(shape)-1)
			for _, d := range shape[1:] {
				if d == nil {
					want = nil
					break
				}
				want = append(want, *d)
			}
			if want != nil && !slices.Equal(l.OutputShape, want) {
				t.Errorf("%s layer %q (%s): output shape %v, want %v", e.Name, name, l.Class, l.OutputShape, want)
			}
		}
	}
	checkTensorShapes(t, e.Name, e.Config, byName)
	return m
}

// checkTensorShapes compares every tensor a top-level layer is called on, with the shape
// Keras recorded for it in the inbound node ("__keras_tensor__" config), with the output
// shape gpusim gives its producer: op nodes, which model.layers leaves out, included.
func checkTensorShapes(t *testing.T, model string, config json.RawMessage, byName map[string]Layer) {
	t.Helper()
	var top struct {
		Config struct {
			Layers []struct {
				InboundNodes json.RawMessage `json:"inbound_nodes"`
			}
		}
	}
	if err := json.Unmarshal(config, &top); err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	checked := 0
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if x["class_name"] != "__keras_tensor__" {
				for _, e := range x {
					walk(e)
				}
				return
			}
			c, _ := x["config"].(map[string]any)
			h, _ := c["keras_history"].([]any)
			shape, _ := c["shape"].([]any)
			if len(h) != 3 || h[2] != 0.0 || len(shape) == 0 {
				return
			}
			name, _ := h[0].(string)
			l, ok := byName[name]
			if !ok || l.Class == "Functional" || l.Class == "Sequential" {
				return
			}
			want := make([]int, 0, len(shape))
			for _, d := range shape[1:] {
				f, ok := d.(float64)
				if !ok {
					return
				}
				want = append(want, int(f))
			}
			checked++
			if !slices.Equal(l.OutputShape, want) {
				t.Errorf("%s: tensor of %q (%s): shape %v, want Keras's %v", model, name, l.Class, l.OutputShape, want)
			}
		}
	}
	for _, l := range top.Config.Layers {
		var v any
		if json.Unmarshal(l.InboundNodes, &v) == nil {
			walk(v)
		}
	}
	if checked == 0 && len(top.Config.Layers) > 2 {
		t.Errorf("%s: no tensor shape of the config was checked", model)
	}
}

// TestKeras3OpNodes imports the functional models of keras.ops calls (arithmetic with
// constants, ops.* functions, slicing) that real Keras 3 exported and checks every node's
// output shape against Keras's.
func TestKeras3OpNodes(t *testing.T) {
	for _, path := range keras3Exports(t, "ops") {
		checkKeras3Export(t, path)
	}
}
