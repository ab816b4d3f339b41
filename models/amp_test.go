package models

import (
	"strings"
	"testing"
)

// TestGraphRewriteAMPDtypes checks the dtypes TF1's mixed precision graph rewrite gives BERT's
// ops (auto_mixed_precision_lists.h): the matmuls and everything between two of them in
// attention run in half precision; the layer norms (nn.moments: Mean, deny), the gelu
// (tf.pow, deny), the residual adds after them and the output projections' bias adds and
// dropouts (between a matmul and a deny op) stay float32. A Keras policy runs them all in half.
func TestGraphRewriteAMPDtypes(t *testing.T) {
	m, err := Get("bert-base:seq=128")
	if err != nil {
		t.Fatal(err)
	}
	opts := PlanOptions{Batch: 8, Precision: MixedFloat16, Optimizer: "adam"}
	keras, err := m.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.GraphRewriteAMP = true
	rewrite, err := m.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	dtypes := func(p *Plan) map[string]DType {
		d := map[string]DType{}
		for _, op := range p.Ops {
			if op.Phase == Forward {
				d[op.Name] = op.DType
			}
		}
		return d
	}
	k, r := dtypes(keras), dtypes(rewrite)
	const l = "transformer_layer_3/"
	for _, c := range []struct {
		op          string
		keras, want DType
	}{
		{l + "self_attention/query/MatMul", Float16, Float16},
		{l + "self_attention/query/BiasAdd", Float16, Float16},
		{l + "self_attention/softmax/softmax", Float16, Float16},
		{l + "self_attention/attention_dropout/dropout", Float16, Float16},
		{l + "self_attention/attention_output/MatMul", Float16, Float16},
		{l + "self_attention/attention_output/BiasAdd", Float16, Float32},
		{l + "self_attention_dropout/dropout", Float16, Float32},
		{l + "self_attention_add/Add", Float16, Float32},
		{l + "self_attention_layer_norm/LayerNorm", Float16, Float32},
		{l + "feedforward_intermediate_dense/MatMul", Float16, Float16},
		{l + "feedforward_intermediate_dense/gelu", Float16, Float32},
		{l + "feedforward_output_dense/MatMul", Float16, Float16},
	} {
		if k[c.op] != c.keras {
			t.Errorf("Keras policy: %s runs %v, want %v", c.op, k[c.op], c.keras)
		}
		if r[c.op] != c.want {
			t.Errorf("graph rewrite: %s runs %v, want %v", c.op, r[c.op], c.want)
		}
	}
	// The float32 ops read and write twice the bytes: the rewritten step moves more.
	var kb, rb float64
	for _, op := range keras.Ops {
		kb += op.Bytes
	}
	for _, op := range rewrite.Ops {
		rb += op.Bytes
	}
	if rb <= kb {
		t.Errorf("graph-rewrite step moves %.3g bytes, Keras policy %.3g: want more", rb, kb)
	}
}

// TestModelGardenBERTDtypes checks the dtypes of the TF Model Garden's BERT under a
// mixed_float16 policy (impl=model-garden; official/nlp/modeling/layers/transformer.py): the
// layer norms, the residual adds feeding them, the GELU and the embeddings' layer norm and
// dropout run in float32, with casts around them; the matmuls, the attention softmax and its
// dropout stay float16. keras_hub's BERT (the default) runs them all in float16.
func TestModelGardenBERTDtypes(t *testing.T) {
	opts := PlanOptions{Batch: 8, Precision: MixedFloat16, Optimizer: "adam"}
	plan := func(spec string) map[string]DType {
		m, err := Get(spec)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(opts)
		if err != nil {
			t.Fatal(err)
		}
		d := map[string]DType{}
		for _, op := range p.Ops {
			if op.Phase == Forward {
				d[op.Name] = op.DType
			}
		}
		return d
	}
	hub, garden := plan("bert-base:seq=128"), plan("bert-base:seq=128,impl=model-garden")
	const l = "transformer_layer_3/"
	for _, c := range []struct {
		op   string
		want DType
	}{
		{"embeddings_layer_norm/LayerNorm", Float32},
		{"embeddings_dropout/dropout", Float32},
		{l + "self_attention/query/MatMul", Float16},
		{l + "self_attention/softmax/softmax", Float16},
		{l + "self_attention/attention_dropout/dropout", Float16},
		{l + "self_attention_dropout/dropout", Float16},
		{l + "self_attention_add/Add", Float32},
		{l + "self_attention_layer_norm/LayerNorm", Float32},
		{l + "feedforward_intermediate_dense/MatMul", Float16},
		{l + "feedforward_intermediate_dense/gelu", Float32},
		{l + "feedforward_output_dense/MatMul", Float16},
		{l + "feedforward_add/Add", Float32},
		{l + "feedforward_layer_norm/LayerNorm", Float32},
	} {
		if got, ok := garden[c.op]; !ok || got != c.want {
			t.Errorf("impl=model-garden: %s runs %v (found %v), want %v", c.op, got, ok, c.want)
		}
		if hub[c.op] != Float16 {
			t.Errorf("keras-hub: %s runs %v, want %v", c.op, hub[c.op], Float16)
		}
	}
	casts := func(d map[string]DType) (n int) {
		for name := range d {
			if strings.HasSuffix(name, "/Cast") {
				n++
			}
		}
		return n
	}
	if c, h := casts(garden), casts(hub); c <= h {
		t.Errorf("impl=model-garden plans %d casts, keras-hub %d: want more (into and out of float32)", c, h)
	}
	if _, err := Get("bert-base:impl=nope"); err == nil {
		t.Errorf("bert-base:impl=nope: no error")
	}
}

// TestDropoutRandomOutsideAutoCluster: under TF's XLA auto-clustering a dropout's
// RandomUniform is not clustered, so each dropout gets a kernel of its own outside XLA that
// writes the random tensor (float32 under TF1's graph rewrite), which the dropout then reads;
// a jit_compile'd step (XLAAutoCluster false) generates the numbers inside the fused kernel.
func TestDropoutRandomOutsideAutoCluster(t *testing.T) {
	m, err := Get("bert-base:seq=128")
	if err != nil {
		t.Fatal(err)
	}
	opts := PlanOptions{Batch: 8, Precision: MixedFloat16, Optimizer: "adam", XLA: true, GraphRewriteAMP: true}
	jit, err := m.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.XLAAutoCluster = true
	auto, err := m.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	ops := func(p *Plan) map[string]Op {
		d := map[string]Op{}
		for _, op := range p.Ops {
			if op.Phase == Forward {
				d[op.Name] = op
			}
		}
		return d
	}
	j, a := ops(jit), ops(auto)
	const drop = "transformer_layer_3/self_attention/attention_dropout/dropout"
	r, ok := a[drop+"/random_uniform"]
	if !ok {
		t.Fatalf("auto-clustering: no %s/random_uniform op", drop)
	}
	// attention probabilities: 12 heads x 128 x 128 per sample, float32.
	if want := float64(8 * 12 * 128 * 128 * 4); r.Bytes != want || !r.OutsideXLA || r.DType != Float32 {
		t.Errorf("random_uniform = %.0f bytes, outside XLA %v, %v; want %.0f, true, float32", r.Bytes, r.OutsideXLA, r.DType, want)
	}
	if got, want := a[drop].Bytes-j[drop].Bytes, r.Bytes; got != want {
		t.Errorf("dropout under auto-clustering reads %.0f more bytes, want %.0f (the random tensor)", got, want)
	}
	if _, ok := j[drop+"/random_uniform"]; ok {
		t.Errorf("jit_compile: %s/random_uniform runs outside the compiled step", drop)
	}
	n := 0
	for name := range a {
		if strings.HasSuffix(name, "/random_uniform") {
			n++
		}
	}
	// BERT-base: the embeddings' dropout, three per layer, the classifier's.
	if n != 1+3*12+1 {
		t.Errorf("auto-clustering: %d random_uniform ops, want %d", n, 1+3*12+1)
	}
}
