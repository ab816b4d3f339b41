package models

import (
	"strings"
	"testing"
)

// TestBERTTFOps: without XLA the TF1 and Model Garden BERTs price their composites as TF's
// kernels (a layer norm's 10 forward and 21 backward, the tanh GELU's 8 and 10, dropout's 5
// and 2, the masked softmax's 8 and 5); keras_hub's BERT and every XLA plan keep one op per
// node and no executor classes.
func TestBERTTFOps(t *testing.T) {
	kernels := func(spec string, xla bool) (map[string]int, bool) {
		t.Helper()
		m, err := Get(spec)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(PlanOptions{Batch: 2, Precision: PrecisionFloat32, XLA: xla, Optimizer: "adam"})
		if err != nil {
			t.Fatal(err)
		}
		out, classes := map[string]int{}, false
		for _, op := range p.Ops {
			if name, ok := strings.CutPrefix(op.Name, "transformer_layer_0/"); ok {
				out[name] = op.Kernels
			}
			for _, b := range op.ClassBytes {
				if b > 0 {
					classes = true
				}
			}
		}
		return out, classes
	}
	want := map[string]int{
		"feedforward_layer_norm/LayerNorm": 10, "feedforward_layer_norm/LayerNorm/grad": 21,
		"feedforward_intermediate_dense/gelu": 8, "feedforward_intermediate_dense/gelu/grad": 10,
		"feedforward_dropout/dropout": 5, "feedforward_dropout/dropout/grad": 2,
		"self_attention/softmax/softmax": 8, "self_attention/softmax/softmax/grad": 5,
		"self_attention/key/BiasAdd": 2, "self_attention/key/BiasAdd/grad": 2,
	}
	for _, impl := range []string{"google-research", "model-garden"} {
		got, classes := kernels("bert-base:seq=128,impl="+impl, false)
		for name, k := range want {
			if got[name] != k {
				t.Errorf("%s without XLA: %s runs %d kernels, want %d", impl, name, got[name], k)
			}
		}
		if !classes {
			t.Errorf("%s without XLA: no op moves bytes of an executor memory class", impl)
		}
		if _, classes := kernels("bert-base:seq=128,impl="+impl, true); classes {
			t.Errorf("%s under XLA: an op carries executor memory classes", impl)
		}
	}
	got, classes := kernels("bert-base:seq=128", false)
	if got["feedforward_layer_norm/LayerNorm"] != 3 || classes {
		t.Errorf("keras-hub without XLA: layer norm %d kernels, classes %v; want 3 and none", got["feedforward_layer_norm/LayerNorm"], classes)
	}
}
