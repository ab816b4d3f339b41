package models

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// protoBytes appends a length-delimited field; protoVarint a varint one.
func protoBytes(b []byte, field int, v []byte) []byte {
	b = appendUvarint(b, uint64(field<<3|2))
	b = appendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func protoVarint(b []byte, field int, v uint64) []byte {
	return appendUvarint(appendUvarint(b, uint64(field<<3)), v)
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// tuplify writes lists of numbers the way tf.keras's SavedModel JSON encoder writes tuples.
func tuplify(v any) any {
	switch x := v.(type) {
	case []any:
		nums := len(x) > 0
		for i, e := range x {
			x[i] = tuplify(e)
			switch e.(type) {
			case float64, nil:
			default:
				nums = false
			}
		}
		if nums {
			return map[string]any{"class_name": "__tuple__", "items": x}
		}
	case map[string]any:
		for k, e := range x {
			if k != "inbound_nodes" {
				x[k] = tuplify(e)
			}
		}
	}
	return v
}

// writeSavedModel writes a SavedModel directory holding keras_metadata.pb for the tf.keras 2.x
// JSON in file, laid out as tf.keras writes it (a root node with the model's class_name and
// config among its other properties, a child node per layer, each with node_id and version).
func writeSavedModel(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"name": "model", "trainable": true, "expects_training_arg": true, "dtype": "float32",
		"batch_input_shape": nil, "must_restore_from_config": false, "class_name": top["class_name"],
		"config": tuplify(top["config"]), "keras_version": "2.15.0", "backend": "tensorflow"}
	mj, _ := json.Marshal(meta)
	version := protoVarint(nil, 1, 1)
	root := protoBytes(protoBytes(protoBytes(protoVarint(nil, 2, 0), 3, []byte("root")), 4, []byte("_tf_keras_network")), 5, mj)
	root = protoBytes(root, 6, version)
	child := protoBytes(protoBytes(protoBytes(protoVarint(nil, 2, 1), 3, []byte("root.layer-0")), 4, []byte("_tf_keras_input_layer")), 5, []byte(`{"class_name": "InputLayer"}`))
	dir := filepath.Join(t.TempDir(), "saved")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pb := protoBytes(protoBytes(nil, 1, child), 1, root)
	if err := os.WriteFile(filepath.Join(dir, "keras_metadata.pb"), pb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "saved_model.pb"), []byte("graph"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSavedModelImport: a tf.keras SavedModel directory (and its keras_metadata.pb alone) reads
// as the same model as its to_json().
func TestSavedModelImport(t *testing.T) {
	const file = "mobilenetv2.tfkeras2.json"
	want := readModel(t, file)
	dir := writeSavedModel(t, file)
	for _, path := range []string{dir, filepath.Join(dir, "keras_metadata.pb")} {
		m, err := LoadFile(path)
		if err != nil {
			t.Fatalf("LoadFile(%s): %v", path, err)
		}
		if m.Params != want.Params || m.TrainableParams != want.TrainableParams || m.FLOPsPerSample != want.FLOPsPerSample {
			t.Errorf("LoadFile(%s): params %d/%d FLOPs %g, want %d/%d %g", path, m.Params, m.TrainableParams,
				m.FLOPsPerSample, want.Params, want.TrainableParams, want.FLOPsPerSample)
		}
	}
}

// TestSavedModelErrors: a SavedModel without the Keras config, a truncated keras_metadata.pb
// and one without a root node say what is wrong.
func TestSavedModelErrors(t *testing.T) {
	noMeta := t.TempDir()
	if err := os.WriteFile(filepath.Join(noMeta, "saved_model.pb"), []byte("graph"), 0o644); err != nil {
		t.Fatal(err)
	}
	trunc := writeSavedModel(t, "mobilenetv2.tfkeras2.json")
	pb := filepath.Join(trunc, "keras_metadata.pb")
	b, _ := os.ReadFile(pb)
	if err := os.WriteFile(pb, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	noRoot := filepath.Join(t.TempDir(), "m")
	os.Mkdir(noRoot, 0o755)
	os.WriteFile(filepath.Join(noRoot, "keras_metadata.pb"), protoBytes(nil, 1, protoBytes(nil, 3, []byte("root.layer-0"))), 0o644)
	for _, tt := range []struct{ path, want string }{
		{noMeta, "a SavedModel without keras_metadata.pb (Keras 3 model.export"},
		{trunc, "past the end (a truncated file?)"},
		{noRoot, "keras_metadata.pb has no root node"},
	} {
		_, err := LoadFile(tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadFile(%s) = %v, want %q", tt.path, err, tt.want)
		}
	}
}
