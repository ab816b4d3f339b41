package models

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// kerasChain is the Keras 3 model.to_json() of a Functional model of n Dense layers in a
// chain, each reading the one before: the shape of a very deep exported model.
func kerasChain(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "chain", "trainable": true, "layers": [`)
	b.WriteString(`{"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8], "dtype": "float32", "sparse": false, "name": "in"}, "registered_name": null, "name": "in", "inbound_nodes": []}`)
	prev := "in"
	for i := range n {
		name := fmt.Sprintf("d%d", i)
		fmt.Fprintf(&b, `, {"module": "keras.layers", "class_name": "Dense", "config": {"name": %q, "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 8, "activation": "relu", "use_bias": true}, "registered_name": null, "build_config": {"input_shape": [null, 8]}, "name": %q, "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 8], "dtype": "float32", "keras_history": [%q, 0, 0]}}], "kwargs": {}}]}`, name, name, prev)
		prev = name
	}
	fmt.Fprintf(&b, `], "input_layers": [["in", 0, 0]], "output_layers": [[%q, 0, 0]]}}`, prev)
	return b.Bytes()
}

// A 20,000-layer chain imports whole: every Dense layer its own 8x8 kernel and bias, none
// mistaken for another's (each layer's weights are found by name; BenchmarkFromKerasJSONDeep
// shows the import's cost per layer stays flat as the chain grows).
func TestFromKerasJSONDeepChain(t *testing.T) {
	const n = 20000
	m, err := FromKerasJSON(bytes.NewReader(kerasChain(n)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Params, int64(n*(8*8+8)); got != want {
		t.Errorf("params = %d, want %d", got, want)
	}
	if got, want := len(m.Layers), n+1; got != want {
		t.Errorf("%d layers, want %d", got, want)
	}
}

// BenchmarkFromKerasJSONDeep imports chains of 5,000 to 40,000 layers; layers/s is the figure
// to watch, and it should not fall as the chain grows (it did: each layer's weights were found
// by a scan of every weight so far).
func BenchmarkFromKerasJSONDeep(b *testing.B) {
	for _, n := range []int{5000, 20000, 40000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			data := kerasChain(n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FromKerasJSON(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "layers/s")
		})
	}
}

// An import stops when its context is done: before it starts, and while it builds a chain's
// layers (Ctrl-C during a 100,000-layer import landed when the import ended); a stopped
// import is not remembered, so the file imports whole next time.
func TestFromKerasJSONContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FromKerasJSONContext(ctx, bytes.NewReader(kerasChain(10)), ImportOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("import under a cancelled context: %v, want context.Canceled", err)
	}
	path := filepath.Join(t.TempDir(), "chain.json")
	if err := os.WriteFile(path, kerasChain(20000), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := LoadFileContext(ctx, path, ImportOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("20,000-layer import cancelled after 20 ms: %v, want context.Canceled", err)
	}
	if m, err := LoadFile(path); err != nil || len(m.Layers) != 20001 {
		t.Errorf("the same file imported again: %v, want its 20,001 layers", err)
	}
}
