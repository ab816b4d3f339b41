package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpusim/gpusim/internal/limitread"
)

// A SavedModel that tf.keras 2.x wrote (model.save(dir) with TF 2.5 or later) keeps the Keras
// config beside the TF graph, in keras_metadata.pb: a SavedMetadata protocol buffer
// (keras/protobuf/saved_metadata.proto: repeated SavedObject nodes = 1; a SavedObject's
// node_path = 3, identifier = 4, metadata = 5, a JSON string) whose "root" node's metadata
// holds the model's class_name and config (keras/saving/legacy/saved_model/layer_serialization.py
// _python_properties_internal), tuples written as {"class_name": "__tuple__", "items": [...]}
// (json_utils.py Encoder). Keras 3's model.export(dir) and tf.saved_model.save write no such
// file: the graph alone does not say which Keras layers made it.

// savedModelConfig returns the root model's config JSON of a SavedModel directory (or of its
// keras_metadata.pb) and the path of the file it came from.
func savedModelConfig(path string) ([]byte, string, error) {
	meta := path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		meta = filepath.Join(path, "keras_metadata.pb")
		if _, err := os.Stat(meta); err != nil {
			if _, err2 := os.Stat(filepath.Join(path, "saved_model.pb")); err2 == nil {
				return nil, "", fmt.Errorf("%s: a SavedModel without keras_metadata.pb (Keras 3 model.export and tf.saved_model.save keep the TF graph, not the Keras config): save the model with model.save(\"model.keras\") or pass model.to_json()", path)
			}
			return nil, "", fmt.Errorf("%s: a directory, and not a SavedModel (no keras_metadata.pb)", path)
		}
	}
	data, err := limitread.ReadFile(meta, maxModelFile)
	if err != nil {
		return nil, "", err
	}
	root, err := savedMetadataRoot(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", meta, err)
	}
	var v any
	if err := json.Unmarshal(root, &v); err != nil {
		return nil, "", fmt.Errorf("%s: root metadata: %w", meta, err)
	}
	out, err := json.Marshal(untuple(v))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", meta, err)
	}
	return out, meta, nil
}

// savedMetadataRoot reads the SavedMetadata wire format and returns the metadata of the node
// whose node_path is "root".
func savedMetadataRoot(b []byte) ([]byte, error) {
	var root []byte
	err := protoFields(b, func(field int, val []byte) error {
		if field != 1 {
			return nil
		}
		var path, meta []byte
		if err := protoFields(val, func(f int, v []byte) error {
			switch f {
			case 3:
				path = v
			case 5:
				meta = v
			}
			return nil
		}); err != nil {
			return err
		}
		if string(path) == "root" && root == nil {
			root = meta
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not a keras_metadata.pb: %w", err)
	}
	if root == nil {
		return nil, errors.New("keras_metadata.pb has no root node")
	}
	return root, nil
}

// protoFields calls f for every length-delimited field of a protocol buffer message, skipping
// varint and fixed-width ones.
func protoFields(b []byte, f func(field int, val []byte) error) error {
	for len(b) > 0 {
		key, n := uvarint(b)
		if n <= 0 {
			return errors.New("bad field key")
		}
		b = b[n:]
		field, wire := int(key>>3), key&7
		switch wire {
		case 0:
			_, n = uvarint(b)
			if n <= 0 {
				return errors.New("bad varint")
			}
			b = b[n:]
		case 1, 5:
			w := 8
			if wire == 5 {
				w = 4
			}
			if len(b) < w {
				return errors.New("truncated")
			}
			b = b[w:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return fmt.Errorf("field %d: length %d past the end (a truncated file?)", field, l)
			}
			if err := f(field, b[n:n+int(l)]); err != nil {
				return err
			}
			b = b[n+int(l):]
		default:
			return fmt.Errorf("field %d: wire type %d", field, wire)
		}
	}
	return nil
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

// untuple replaces the SavedModel JSON's {"class_name": "__tuple__", "items": [...]} by the
// list of its items.
func untuple(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = untuple(e)
		}
	case map[string]any:
		if x["class_name"] == "__tuple__" {
			if items, ok := x["items"].([]any); ok {
				return untuple(items)
			}
		}
		for k, e := range x {
			x[k] = untuple(e)
		}
	}
	return v
}

// isSavedModel reports whether path is a SavedModel directory or its keras_metadata.pb.
func isSavedModel(path string) bool {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return true
	}
	if filepath.Base(path) != "keras_metadata.pb" {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && bytes.HasPrefix(b, []byte{0x0a})
}
