package models

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
		// tf.keras 2.4-style Functional with TF-op layers (see testdata/README.md): Conv2D
		// 3x3x3x8+8 = 224 and BatchNormalization(axis=[3]) 4*8 = 32 (16 non-trainable) in a
		// nested Sequential called at node index 1, Dense 8x16 without bias = 128, Dense
		// 16x16+16 = 272, Dense 16x3+3 = 51; the TFOpLambda/SlicingOpLambda layers have none.
		{"tfop.functional.tfkeras2.json", 224 + 32 + 128 + 272 + 51, 224 + 16 + 128 + 272 + 51, []int{3}},
		// Keras 2.2 Sequential whose config is the bare layer list: Conv2D 5x5x1x32+32 = 832
		// on 28x28x1 (batch_input_shape on the first layer), MaxPooling2D to 12x12x32, Flatten
		// 4,608, Dense 4608x10+10 = 46,090.
		{"cnn.sequential.keras2.2.json", 832 + 46_090, 832 + 46_090, []int{10}},
		// tf.keras 2.x transfer learning as the keras.io tutorial builds it: a data
		// augmentation Sequential (RandomFlip, RandomRotation, RandomZoom, RandomContrast: no
		// weights), MobileNetV2's preprocess_input as tf.math.truediv / tf.math.subtract, a
		// frozen base (Conv2D 3x3x3x16 = 432, BatchNormalization 64) called with
		// training=False, Dense 16+1 = 17.
		{"augment.functional.tfkeras2.json", 432 + 64 + 17, 17, []int{1}},
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
		{"channels_first pooling", `{"class_name": "Sequential", "config": {"name": "s", "layers": [
			{"class_name": "InputLayer", "config": {"batch_shape": [null, 3, 8, 8], "name": "x"}},
			{"class_name": "MaxPooling2D", "config": {"name": "p", "pool_size": [2, 2], "data_format": "channels_first"}}]}}`,
			[]string{`"p"`, "MaxPooling2D", "channels_first"}},
		// Keras 1.x (a model.to_json() printed in keplr-io/quiver issue #1): "dim_ordering": "th".
		{"keras 1 th ordering", `{"class_name": "Model", "config": {"input_layers": [["input_1", 0, 0]], "name": "model_3", "layers": [
			{"inbound_nodes": [], "name": "input_1", "config": {"batch_input_shape": [null, 1, 400, 400], "input_dtype": "float32", "name": "input_1"}, "class_name": "InputLayer"},
			{"inbound_nodes": [[["input_1", 0, 0]]], "name": "averagepooling2d_2", "config": {"strides": [4, 4], "border_mode": "valid", "trainable": true, "name": "averagepooling2d_2", "dim_ordering": "th", "pool_size": [4, 4]}, "class_name": "AveragePooling2D"}],
			"output_layers": [["averagepooling2d_2", 0, 0]]}}`,
			[]string{`"averagepooling2d_2"`, "AveragePooling2D", "dim_ordering"}},
		// tensorflow/tfjs-examples angular-predictive-prefetching/client/src/assets/model.json.
		{"tfjs graph model", `{"format": "graph-model", "generatedBy": "2.6.0", "modelTopology": {"node": []}}`,
			[]string{"graph model", "layers model"}},
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
	// Real Keras 3 exports of one layer each and of keras.ops nodes (testdata/keras3).
	for _, part := range []string{"layers", "ops"} {
		gz, _ := filepath.Glob(filepath.Join("testdata", "keras3", part, "*.json.gz"))
		for _, file := range gz {
			fz, err := os.Open(file)
			if err != nil {
				f.Fatal(err)
			}
			zr, err := gzip.NewReader(fz)
			if err != nil {
				f.Fatal(err)
			}
			var e struct{ Config json.RawMessage }
			err = json.NewDecoder(zr).Decode(&e)
			fz.Close()
			if err != nil {
				f.Fatal(err)
			}
			if len(e.Config) < 20000 {
				f.Add([]byte(e.Config))
			}
		}
	}
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

// TestImportRealExport reads real model.json files kept verbatim (see testdata/README.md):
// one that TensorFlow.js's converter wrote from a tf.keras 2.1.6 model (a "Model" holding two
// nested "Model"s, each called at node index 1, UpSampling2D, under "modelTopology") and
// one that TensorFlow.js saved itself (a Sequential whose config is the bare layer list,
// directly under "modelTopology"). Each weightsManifest lists the variables; their element
// count is the model's parameter count.
func TestImportRealExport(t *testing.T) {
	realManifest(t, "abalone.tfjs-layers1.2.9.json", 3_051)
	realManifest(t, "autoencoder.tfjs-keras2.1.6.json", 14_685)

	m := readModel(t, "autoencoder.tfjs-keras2.1.6.json")
	if m.TrainableParams != 14_685 {
		t.Errorf("autoencoder trainable params = %d, want 14,685 (nothing is frozen)", m.TrainableParams)
	}
	if len(m.InputShapes) != 1 || !slices.Equal(m.InputShapes[0], []int{128, 128, 1}) ||
		len(m.OutputShapes) != 1 || !slices.Equal(m.OutputShapes[0], []int{128, 128, 1}) {
		t.Errorf("input/output shapes = %v / %v, want [[128 128 1]] both", m.InputShapes, m.OutputShapes)
	}
	p, err := m.Plan(PlanOptions{Batch: 8, Precision: PrecisionFloat32, Optimizer: "adam"})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, "autoencoder", p)
}

// realManifest checks that a TensorFlow.js model file imports with as many parameters as
// its weightsManifest lists (every variable, trainable or not), and that this is the count
// the test states.
func realManifest(t *testing.T, file string, wantParams int64) {
	t.Helper()
	m := readModel(t, file)
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		WeightsManifest []struct {
			Weights []struct {
				Name  string
				Shape []int
			}
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, g := range f.WeightsManifest {
		for _, w := range g.Weights {
			want += prod(w.Shape)
		}
	}
	if want != wantParams {
		t.Fatalf("%s: weightsManifest holds %d elements, want %d (the file changed?)", file, want, wantParams)
	}
	if m.Params != want {
		t.Errorf("%s: params = %d, want %d (weightsManifest)", file, m.Params, want)
	}
}

// TestImportTFOpLayers checks the output shape of every TF-op layer of
// testdata/tfop.functional.tfkeras2.json (TFOpLambda and SlicingOpLambda as tf.keras 2.x
// writes them).
func TestImportTFOpLayers(t *testing.T) {
	m := readModel(t, "tfop.functional.tfkeras2.json")
	want := map[string][]int{
		"tf.__operators__.getitem": {32, 32, 3},
		"tf.nn.bias_add":           {32, 32, 3},
		"tf.expand_dims":           {1, 16},
		"tf.math.multiply":         {1, 16},
		"tf.concat":                {5, 16},
		"tf.math.reduce_mean":      {16},
		"tf.math.multiply_1":       {16},
	}
	seen := 0
	for _, l := range m.Layers {
		w, ok := want[l.Name]
		if !ok {
			continue
		}
		seen++
		if !slices.Equal(l.OutputShape, w) {
			t.Errorf("%s output shape = %v, want %v", l.Name, l.OutputShape, w)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d TF-op layers", seen, len(want))
	}
	for _, l := range m.Layers {
		if l.Name == "tf.math.multiply_1" && len(l.Inputs) != 2 {
			t.Errorf("tf.math.multiply_1 inputs = %v, want the reduce_mean and dense_1 (y passed as a tensor)", l.Inputs)
		}
	}
}

func TestSliceShape(t *testing.T) {
	ell := map[string]any{"class_name": "__ellipsis__"}
	sl := func(start, stop, step any) map[string]any {
		return map[string]any{"start": start, "stop": stop, "step": step}
	}
	all := sl(nil, nil, nil)
	tests := []struct {
		name string
		spec any
		want []int // nil: an error
	}{
		{"x[..., ::-1]", []any{ell, sl(nil, nil, -1.0)}, []int{8, 6, 3}},
		{"x[:, 0]", []any{all, 0.0}, []int{6, 3}},
		{"x[:, 1:5:2]", []any{all, sl(1.0, 5.0, 2.0)}, []int{2, 6, 3}},
		{"x[:, -3:]", []any{all, sl(-3.0, nil, nil)}, []int{3, 6, 3}},
		{"x[:, ::-2]", []any{all, sl(nil, nil, -2.0)}, []int{4, 6, 3}},
		{"x[:, 6:2:-1]", []any{all, sl(6.0, 2.0, -1.0)}, []int{4, 6, 3}},
		{"x[..., None]", []any{ell, nil}, []int{8, 6, 3, 1}},
		{"x[..., 0]", []any{ell, 0.0}, []int{8, 6}},
		{"x[:, :, :, 1:2]", []any{all, all, all, sl(1.0, 2.0, nil)}, []int{8, 6, 1}},
		{"x[0] (batch)", 0.0, nil},
		{"x[1:] (batch)", []any{sl(1.0, nil, nil)}, nil},
		{"x[:, 5:2] (empty)", []any{all, sl(5.0, 2.0, nil)}, nil},
		{"too many", []any{all, 0.0, 0.0, 0.0, 0.0}, nil},
	}
	for _, tt := range tests {
		got, err := sliceShape([]int{-1, 8, 6, 3}, tt.spec)
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s: sliceShape = %v, want an error", tt.name, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: sliceShape = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// TestImportTFOpErrors: a TF function gpusim does not model stops the import with the
// layer, its class and the function named.
func TestImportTFOpErrors(t *testing.T) {
	js := `{"class_name": "Functional", "config": {"name": "f", "layers": [
	{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "in"}, "name": "in", "inbound_nodes": []},
	{"class_name": "TFOpLambda", "config": {"name": "tf.linalg.svd", "function": "linalg.svd"}, "name": "tf.linalg.svd", "inbound_nodes": [["in", 0, 0, {}]]}],
	"input_layers": [["in", 0, 0]], "output_layers": [["tf.linalg.svd", 0, 0]]}}`
	_, err := FromKerasJSON(strings.NewReader(js))
	if err == nil {
		t.Fatal("FromKerasJSON = nil error, want one")
	}
	for _, w := range []string{`"tf.linalg.svd"`, "TFOpLambda", `"linalg.svd"`, "unsupported TF function"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// TestImportNodeIndices: testdata/siamese.functional.tfkeras2.json calls a nested model
// twice (Keras numbers its calls 1 and 2: a nested model's node 0 is its own) and a shared
// Dense twice, the second time on a layer listed after it. Every call must read the tensor
// its node index names, so no call's output is left unread.
func TestImportNodeIndices(t *testing.T) {
	m := readModel(t, "siamese.functional.tfkeras2.json")
	if want := int64(36 + 20 + 20); m.Params != want {
		t.Errorf("params = %d, want %d", m.Params, want)
	}
	g := m.g
	read := make([]bool, len(g.nodes))
	for _, n := range g.nodes {
		for _, x := range n.in {
			read[x] = true
		}
	}
	for _, o := range g.outputs {
		read[o] = true
	}
	for i, n := range g.nodes {
		if !read[i] {
			t.Errorf("node %s is read by no other node", n.name)
		}
	}
	for _, n := range g.nodes {
		if strings.HasSuffix(n.name, "/Subtract") && (len(n.in) != 2 || n.in[0] == n.in[1]) {
			t.Errorf("subtract reads %v, want the two calls of shared", n.in)
		}
	}
}

// TestImportConvTranspose: output sizes as keras compute_conv_transpose_output_shape
// gives them, kernel (k, k, filters, in).
func TestImportConvTranspose(t *testing.T) {
	tests := []struct {
		extra string
		want  []int
	}{
		{`"padding": "same"`, []int{32, 32, 4}},
		{`"padding": "valid"`, []int{33, 33, 4}},
		{`"padding": "same", "output_padding": [1, 1]`, []int{32, 32, 4}},
		{`"padding": "valid", "output_padding": 0`, []int{33, 33, 4}},
	}
	for _, tt := range tests {
		js := `{"class_name": "Sequential", "config": {"name": "s", "layers": [
		{"class_name": "InputLayer", "config": {"batch_shape": [null, 16, 16, 8], "name": "in"}},
		{"class_name": "Conv2DTranspose", "config": {"name": "up", "filters": 4, "kernel_size": [3, 3], "strides": [2, 2], ` + tt.extra + `}}]}}`
		m, err := FromKerasJSON(strings.NewReader(js))
		if err != nil {
			t.Errorf("%s: %v", tt.extra, err)
			continue
		}
		if m.Params != 3*3*4*8+4 || !slices.Equal(m.OutputShapes[0], tt.want) {
			t.Errorf("%s: params %d shape %v, want %d %v", tt.extra, m.Params, m.OutputShapes[0], 3*3*4*8+4, tt.want)
		}
	}
}

// TestImportMultiOutputNested: a nested model with two outputs, read by tensor index
// (Keras 3 keras_history [model, node, tensor]; the model's call is node 1).
func TestImportMultiOutputNested(t *testing.T) {
	kt := func(layer string, node, tensor int) string {
		return `{"class_name": "__keras_tensor__", "config": {"shape": [null], "dtype": "float32", "keras_history": ["` +
			layer + `", ` + strconv.Itoa(node) + `, ` + strconv.Itoa(tensor) + `]}}`
	}
	call := func(args string) string { return `[{"args": [` + args + `], "kwargs": {}}]` }
	js := `{"module": "keras", "class_name": "Functional", "config": {"name": "fpn", "layers": [
	{"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3], "dtype": "float32", "name": "img"}, "name": "img", "inbound_nodes": []},
	{"module": "keras.src.models.functional", "class_name": "Functional", "name": "backbone", "config": {"name": "backbone", "layers": [
	  {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3], "dtype": "float32", "name": "b_in"}, "name": "b_in", "inbound_nodes": []},
	  {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "c1", "filters": 4, "kernel_size": [3, 3], "padding": "same"}, "name": "c1", "inbound_nodes": ` + call(kt("b_in", 0, 0)) + `},
	  {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "c2", "filters": 4, "kernel_size": [3, 3], "strides": [2, 2], "padding": "same"}, "name": "c2", "inbound_nodes": ` + call(kt("c1", 0, 0)) + `}],
	  "input_layers": [["b_in", 0, 0]], "output_layers": [["c1", 0, 0], ["c2", 0, 0]]},
	 "inbound_nodes": ` + call(kt("img", 0, 0)) + `},
	{"module": "keras.layers", "class_name": "GlobalAveragePooling2D", "config": {"name": "g1"}, "name": "g1", "inbound_nodes": ` + call(kt("backbone", 1, 0)) + `},
	{"module": "keras.layers", "class_name": "GlobalAveragePooling2D", "config": {"name": "g2"}, "name": "g2", "inbound_nodes": ` + call(kt("backbone", 1, 1)) + `},
	{"module": "keras.layers", "class_name": "Concatenate", "config": {"name": "cat", "axis": -1}, "name": "cat", "inbound_nodes": ` + call("["+kt("g1", 0, 0)+", "+kt("g2", 0, 0)+"]") + `},
	{"module": "keras.layers", "class_name": "Dense", "config": {"name": "out", "units": 2}, "name": "out", "inbound_nodes": ` + call(kt("cat", 0, 0)) + `}],
	"input_layers": [["img", 0, 0]], "output_layers": [["out", 0, 0]]}}`
	m, err := FromKerasJSON(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	// c1 3*3*3*4+4 = 112, c2 3*3*4*4+4 = 148, out 8*2+2 = 18.
	if want := int64(112 + 148 + 18); m.Params != want {
		t.Errorf("params = %d, want %d", m.Params, want)
	}
	var conv2Read bool
	for _, n := range m.g.nodes {
		for _, x := range n.in {
			if strings.HasPrefix(m.g.nodes[x].name, "backbone/c2/") && strings.HasPrefix(n.name, "g2/") {
				conv2Read = true
			}
		}
	}
	if !conv2Read {
		t.Errorf("g2 does not read the backbone's second output (c2)")
	}
}

// TestImportTFOpConstantFirst: 1.0 - x is written as tf.math.subtract with the constant as
// its first argument (["_CONSTANT_VALUE", -1, value, kwargs], keras/engine/node.py) and the
// tensor among the kwargs.
func TestImportTFOpConstantFirst(t *testing.T) {
	js := `{"class_name": "Functional", "config": {"name": "f", "layers": [
	{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 6], "dtype": "float32", "name": "in"}, "name": "in", "inbound_nodes": []},
	{"class_name": "TFOpLambda", "config": {"name": "tf.math.subtract", "function": "math.subtract"}, "name": "tf.math.subtract",
	 "inbound_nodes": [["_CONSTANT_VALUE", -1, 1.0, {"y": ["in", 0, 0], "name": null}]]},
	{"class_name": "Dense", "config": {"name": "d", "units": 2}, "name": "d", "inbound_nodes": [[["tf.math.subtract", 0, 0, {}]]]}],
	"input_layers": [["in", 0, 0]], "output_layers": [["d", 0, 0]]}}`
	m, err := FromKerasJSON(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if m.Params != 6*2+2 || !slices.Equal(m.Layers[1].OutputShape, []int{6}) || !slices.Equal(m.Layers[1].Inputs, []string{"in"}) {
		t.Errorf("params %d, %s shape %v inputs %v; want 14, [6], [in]", m.Params, m.Layers[1].Name, m.Layers[1].OutputShape, m.Layers[1].Inputs)
	}
}
