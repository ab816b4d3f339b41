package models

import "testing"

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
