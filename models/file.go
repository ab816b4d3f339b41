package models

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/jsonerr"
	"github.com/gpusim/gpusim/internal/limitread"
)

// maxModelFile bounds what LoadFile reads: a model config is kilobytes to a few megabytes
// (ResNet-50's Keras 3 JSON is under 200 KB); the weights are not part of it.
const maxModelFile = 64 << 20

// LoadFile reads a model file: Keras JSON (model.to_json(), a TensorFlow.js layers
// model.json), a tf.keras SavedModel directory (its keras_metadata.pb; savedmodel.go) or a .keras archive (a zip whose config.json is the model's config; Keras 3
// saving_lib.py writes it with model.weights.h5 and metadata.json beside it). The model is
// built at the first call for a given path, size and modification time, and shared after.
//
// Custom layer classes are described in the sidecar file SidecarPath(path), read when it
// exists (ReadLayerSpecs).
func LoadFile(path string) (*Model, error) {
	return LoadFileWith(path, ImportOptions{})
}

// LoadFileWith is LoadFile with import options (o.Layers is read from the sidecar when nil).
func LoadFileWith(path string, o ImportOptions) (*Model, error) {
	return LoadFileContext(context.Background(), path, o)
}

// LoadFileContext is LoadFileWith whose import stops when ctx is done (FromKerasJSONContext);
// an import stopped so is not remembered, so the next call imports the file again.
func LoadFileContext(ctx context.Context, path string, o ImportOptions) (*Model, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		// A SavedModel: what is read is its keras_metadata.pb.
		if mi, err := os.Stat(filepath.Join(path, "keras_metadata.pb")); err == nil {
			fi = mi
		}
	}
	key := fmt.Sprintf("@%s|%d|%d|image=%d", path, fi.Size(), fi.ModTime().UnixNano(), o.ImageSize)
	side := SidecarPath(path)
	if si, err := os.Stat(side); err == nil && o.Layers == nil {
		key += fmt.Sprintf("|%s|%d|%d", side, si.Size(), si.ModTime().UnixNano())
	}
	return memoNew(key, ModelOptions{}, func() (*Model, error) {
		if o.Layers == nil {
			// None yet: an unknown class's error then names the file to write.
			o.Layers = &LayerSpecs{File: side}
			if _, err := os.Stat(side); err == nil {
				if o.Layers, err = ReadLayerSpecs(side); err != nil {
					return nil, err
				}
			}
		}
		var data []byte
		place := path // where a JSON syntax error's line is
		if isSavedModel(path) {
			if data, place, err = savedModelConfig(path); err != nil {
				return nil, err
			}
		} else if data, err = limitread.ReadFile(path, maxModelFile); err != nil {
			return nil, err
		}
		if bytes.HasPrefix(data, []byte("PK\x03\x04")) || strings.HasSuffix(path, ".keras") {
			if data, err = kerasArchiveConfig(data); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			place = path + ":config.json"
		}
		m, err := FromKerasJSONContext(ctx, bytes.NewReader(data), o)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if serr := jsonerr.Syntax(place, data, err, "keras json"); serr != nil {
			return nil, serr // a syntax error or a truncated file, on its line
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	})
}

// kerasArchiveConfig returns config.json of a .keras archive.
func kerasArchiveConfig(data []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf(".keras archive: %w", err)
	}
	for _, f := range zr.File {
		if f.Name != "config.json" {
			continue
		}
		if f.UncompressedSize64 > maxModelFile {
			return nil, fmt.Errorf(".keras archive: config.json of %d bytes, more than a model config holds", f.UncompressedSize64)
		}
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf(".keras archive: %w", err)
		}
		defer r.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(r); err != nil {
			return nil, fmt.Errorf(".keras archive: config.json: %w", err)
		}
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf(".keras archive without config.json (Keras 3 model.save writes one)")
}

// splitFileSpec splits "path:image=224" into the path and its import options. A path that
// exists as written is taken whole (a colon may belong to it).
func splitFileSpec(spec string) (string, ImportOptions, error) {
	var o ImportOptions
	i := strings.LastIndex(spec, ":")
	if i < 0 {
		return spec, o, nil
	}
	if _, err := os.Stat(spec); err == nil {
		return spec, o, nil
	}
	path, opts := spec[:i], spec[i+1:]
	for _, kv := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch k = strings.TrimSpace(k); {
		case !ok:
			return spec, o, nil // not options: the path has a colon
		case k == "image" || k == "image_size" || k == "size":
			if err != nil || n <= 0 {
				return "", o, fmt.Errorf("model file %q: option %s=%q: want a positive integer", spec, k, v)
			}
			o.ImageSize = n
		default:
			return "", o, fmt.Errorf("model file %q: unknown option %q (a model file takes image=N)", spec, k)
		}
	}
	return path, o, nil
}
