package models

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated Keras JSON files under testdata/")

// generated lists the testdata files written by KerasJSON (go test ./models -run
// TestGeneratedJSON -update); see testdata/README.md.
var generated = []struct {
	file, model string
	keras3      bool
}{
	{"resnet50.keras3.json", "resnet50", true},
	{"mobilenetv2.tfkeras2.json", "mobilenetv2", false},
	{"inceptionv3.keras3.json", "inceptionv3", true},
}

func TestGeneratedJSON(t *testing.T) {
	for _, gf := range generated {
		m, err := Get(gf.model)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.KerasJSON(gf.keras3)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", gf.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./models -run TestGeneratedJSON -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s.KerasJSON(%v) differs from %s (rerun with -update and review the diff)", gf.model, gf.keras3, path)
		}
	}
}

func readModel(t *testing.T, file string) *Model {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := FromKerasJSON(f)
	if err != nil {
		t.Fatalf("FromKerasJSON(%s): %v", file, err)
	}
	return m
}

func same(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), 1) }

// TestImportRoundTrip: the Keras JSON of ResNet50 (and the others in testdata) gives the
// zoo's counts, FLOPs and activation bytes.
func TestImportRoundTrip(t *testing.T) {
	for _, gf := range generated {
		got := readModel(t, gf.file)
		want, err := Get(gf.model)
		if err != nil {
			t.Fatal(err)
		}
		if got.Params != want.Params || got.TrainableParams != want.TrainableParams {
			t.Errorf("%s params = %d / %d, want %d / %d", gf.file, got.Params, got.TrainableParams, want.Params, want.TrainableParams)
		}
		if !same(got.FLOPsPerSample, want.FLOPsPerSample) || !same(got.ActivationBytesPerSample, want.ActivationBytesPerSample) {
			t.Errorf("%s FLOPs %.6g act %.6g, want %.6g %.6g", gf.file, got.FLOPsPerSample, got.ActivationBytesPerSample,
				want.FLOPsPerSample, want.ActivationBytesPerSample)
		}
		if len(got.Layers) != len(want.Layers) {
			t.Errorf("%s has %d layers, want %d", gf.file, len(got.Layers), len(want.Layers))
		}
	}
	// Every zoo model survives an export/import cycle in both layouts.
	for _, name := range Names() {
		want, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, k3 := range []bool{false, true} {
			js, err := want.KerasJSON(k3)
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromKerasJSON(bytes.NewReader(js))
			if err != nil {
				t.Errorf("%s keras3=%v: FromKerasJSON: %v", name, k3, err)
				continue
			}
			if got.Params != want.Params || got.TrainableParams != want.TrainableParams ||
				!same(got.FLOPsPerSample, want.FLOPsPerSample) || !same(got.ActivationBytesPerSample, want.ActivationBytesPerSample) {
				t.Errorf("%s keras3=%v round trip: params %d/%d flops %.6g act %.6g, want %d/%d %.6g %.6g", name, k3,
					got.Params, got.TrainableParams, got.FLOPsPerSample, got.ActivationBytesPerSample,
					want.Params, want.TrainableParams, want.FLOPsPerSample, want.ActivationBytesPerSample)
			}
		}
	}
}

// TestImportHandWritten reads the hand-written files of testdata (see testdata/README.md for
// how each count was worked out).
func TestImportHandWritten(t *testing.T) {
	tests := []struct {
		file              string
		params, trainable int64
		outShape          []int
	}{
		// Dense(512) on 784 inputs: 784*512+512 = 401,920; Dense(512): 262,656; Dense(10): 5,130.
		{"mlp.sequential.tfkeras2.json", 669_706, 669_706, []int{10}},
		// Sequential with an InputLayer (Keras 3): Conv2D 3x3x1x32+32 = 320, BN(32) 128 (64
		// trainable), MaxPooling2D, Conv2D 3x3x32x64+64 = 18,496, GlobalAveragePooling2D,
		// Dropout, Dense 64*10+10 = 650.
		{"cnn.sequential.keras3.json", 19_594, 19_530, []int{10}},
		// Functional, Keras 3, with a frozen nested Functional backbone (Conv2D 3x3x3x16+16 =
		// 448, BatchNormalization 64, DepthwiseConv2D 3x3x16 = 144, SeparableConv2D
		// 3x3x16 + 16x32 + 32 = 688, GlobalAveragePooling2D) and a nested Sequential head
		// (Dense 32*8+8 = 264, Dense 8*3+3 = 27), a Rescaling and a Normalization(3 channels: 7
		// non-trainable), a shared Dense called twice (32*32+32 = 1,056) and an Add.
		{"nested.keras3.json", 448 + 64 + 144 + 688 + 264 + 27 + 7 + 1056, 264 + 27 + 1056, []int{3}},
		// Text model (tf.keras 2.x layout): Embedding 1000x32 = 32,000; Conv1D k3 32->32 =
		// 3,104; MaxPooling1D; LSTM(32, return_sequences) 4*(32*32+32*32+32) = 8,320;
		// GRU(16, return_sequences, reset_after) 3*(32*16+16*16+2*16) = 2,400;
		// MultiHeadAttention(2 heads, key_dim 8) on 16 features: 3*(16*2*8+2*8) + (2*8*16+16) =
		// 816 + 272 = 1,088; LayerNormalization(16) 32; Concatenate; GlobalMaxPooling1D;
		// Flatten; Dense 32*2+2 = 66 with a float32 softmax.
		{"text.functional.tfkeras2.json", 32_000 + 3_104 + 8_320 + 2_400 + 1_088 + 32 + 66, 32_000 + 3_104 + 8_320 + 2_400 + 1_088 + 32 + 66, []int{2}},
	}
	for _, tt := range tests {
		m := readModel(t, tt.file)
		if m.Params != tt.params || m.TrainableParams != tt.trainable {
			t.Errorf("%s params = %d / %d, want %d / %d\n%s", tt.file, m.Params, m.TrainableParams, tt.params, tt.trainable, m.Summary())
		}
		if len(m.OutputShapes) != 1 || !slices.Equal(m.OutputShapes[0], tt.outShape) {
			t.Errorf("%s output shapes = %v, want [%v]", tt.file, m.OutputShapes, tt.outShape)
		}
		p, err := m.Plan(PlanOptions{Batch: 4, Precision: MixedFloat16, Optimizer: "adam"})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, tt.file, p)
	}
}

// TestImportMixedFloat32Layer: in a file saved under mixed_float16, the layer marked
// dtype="float32" computes in float32.
func TestImportMixedFloat32Layer(t *testing.T) {
	m := readModel(t, "text.functional.tfkeras2.json")
	p, err := m.Plan(PlanOptions{Batch: 2, Precision: MixedFloat16})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, op := range p.Ops {
		if op.Name == "probs/softmax" {
			found = true
			if op.DType != Float32 {
				t.Errorf("probs/softmax dtype = %s, want float32", op.DType)
			}
		}
		if op.Name == "conv1d/Conv" && op.DType != Float16 {
			t.Errorf("conv1d/Conv dtype = %s, want float16", op.DType)
		}
	}
	if !found {
		t.Errorf("no op probs/softmax in the plan")
	}
}

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name, json string
		want       []string // substrings of the error
	}{
		{"unsupported layer", `{"class_name": "Sequential", "config": {"name": "s", "layers": [
			{"class_name": "InputLayer", "config": {"batch_shape": [null, 4], "name": "in"}},
			{"class_name": "Lambda", "config": {"name": "my_lambda", "function": "..."}}]}}`,
			[]string{`"my_lambda"`, "Lambda", "unsupported layer class"}},
		{"bad shape", `{"class_name": "Functional", "config": {"name": "f", "layers": [
			{"class_name": "InputLayer", "name": "in", "config": {"batch_shape": [null, 4], "name": "in"}, "inbound_nodes": []},
			{"class_name": "Dense", "name": "d1", "config": {"name": "d1", "units": -3}, "inbound_nodes": [[["in", 0, 0, {}]]]}],
			"input_layers": [["in", 0, 0]], "output_layers": [["d1", 0, 0]]}}`,
			[]string{`"d1"`, "Dense", "units -3"}},
		{"unknown inbound", `{"class_name": "Functional", "config": {"name": "f", "layers": [
			{"class_name": "InputLayer", "name": "in", "config": {"batch_shape": [null, 4], "name": "in"}, "inbound_nodes": []},
			{"class_name": "Dense", "name": "d1", "config": {"name": "d1", "units": 3}, "inbound_nodes": [[["nowhere", 0, 0, {}]]]}],
			"input_layers": [["in", 0, 0]], "output_layers": [["d1", 0, 0]]}}`,
			[]string{`"d1"`, "Dense", `"nowhere"`}},
		{"unknown input dim", `{"class_name": "Sequential", "config": {"name": "s", "layers": [
			{"class_name": "InputLayer", "config": {"batch_shape": [null, null, 8], "name": "tokens"}},
			{"class_name": "Dense", "config": {"name": "d", "units": 3}}]}}`,
			[]string{`"tokens"`, "InputLayer", "None"}},
		{"conv on vector", `{"class_name": "Sequential", "config": {"name": "s", "layers": [
			{"class_name": "InputLayer", "config": {"batch_shape": [null, 8], "name": "x"}},
			{"class_name": "Conv2D", "config": {"name": "c", "filters": 3, "kernel_size": 3}}]}}`,
			[]string{`"c"`, "Conv2D", "rank"}},
		{"not json", `{"class_name": `, []string{"keras json"}},
		{"no config", `{"class_name": "Sequential"}`, []string{"config"}},
	}
	for _, tt := range tests {
		_, err := FromKerasJSON(strings.NewReader(tt.json))
		if err == nil {
			t.Errorf("%s: FromKerasJSON = nil error, want one", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, w)
			}
		}
	}
}

// FuzzFromKerasJSON: the importer never panics, and a model it accepts plans cleanly; an
// error raised inside a layer names it.
func FuzzFromKerasJSON(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 20000 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 4], "name": "in"}}, {"class_name": "Dense", "config": {"name": "d", "units": 3}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := FromKerasJSON(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			if strings.Contains(err.Error(), "(") && strings.Contains(err.Error(), "layer \"\"") {
				t.Fatalf("error names an empty layer: %v", err)
			}
			return
		}
		p, err := m.Plan(PlanOptions{Batch: 2, Precision: MixedFloat16, XLA: true, Optimizer: "adam"})
		if err != nil {
			t.Fatalf("Plan of an imported model: %v", err)
		}
		checkPlan(t, "fuzz", p)
	})
}

// TestImportKwargsTensors: Keras 3 layers called with tensors as keywords
// (mha(query=x, value=y)) are wired in the layer's argument order.
func TestImportKwargsTensors(t *testing.T) {
	js := `{"class_name": "Functional", "config": {"name": "kw", "layers": [
	{"class_name": "InputLayer", "name": "q", "config": {"batch_shape": [null, 4, 8], "name": "q"}, "inbound_nodes": []},
	{"class_name": "InputLayer", "name": "v", "config": {"batch_shape": [null, 6, 16], "name": "v"}, "inbound_nodes": []},
	{"class_name": "MultiHeadAttention", "name": "mha", "config": {"name": "mha", "num_heads": 2, "key_dim": 4},
	 "inbound_nodes": [{"args": [], "kwargs": {
	   "value": {"class_name": "__keras_tensor__", "config": {"shape": [null, 6, 16], "dtype": "float32", "keras_history": ["v", 0, 0]}},
	   "query": {"class_name": "__keras_tensor__", "config": {"shape": [null, 4, 8], "dtype": "float32", "keras_history": ["q", 0, 0]}}}}]}],
	"input_layers": [["q", 0, 0], ["v", 0, 0]], "output_layers": [["mha", 0, 0]]}}`
	m, err := FromKerasJSON(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	// query 8*2*4+8, key and value 16*2*4+8 each, output 2*4*8+8.
	if want := int64(72 + 136 + 136 + 72); m.Params != want {
		t.Errorf("params = %d, want %d", m.Params, want)
	}
	if got, want := m.OutputShapes[0], []int{4, 8}; !slices.Equal(got, want) {
		t.Errorf("output shape = %v, want %v", got, want)
	}
}
