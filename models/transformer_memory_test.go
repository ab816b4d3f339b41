package models

import (
	"strings"
	"testing"
)

// What one BERT-base encoder layer keeps for backward at the end of the forward pass, per
// token, against the tensors TF's gradients read (d = 768, ff = 3072, h = 12 heads, S = 128,
// float32):
//   - attention: the scaled query and the key (einsum QK^T's gradient), the softmax output
//     (SoftmaxGrad reads it), the dropout mask and the dropped probabilities (the einsum with
//     V reads them, its gradient V too), the context (the output projection's input):
//     4d + 3hS;
//   - after attention and after the feed-forward block: the dropout mask, the residual sum
//     (LayerNorm's input), LayerNorm's normalized intermediate and its output: 2 x 4d;
//   - feed-forward: the intermediate Dense output, tf.nn.gelu's erf input and product
//     operand (its exact form is 0.5 x (1 + erf(x / sqrt 2)) as separate ops), the GELU
//     output (the second Dense's input): 4ff.
//
// Dropout masks are float32 as TF multiplies them in (nn_ops.py dropout: the kept-element
// mask is cast to the input's dtype), and the probabilities are kept three times over.
func TestBertLayerKeepsWhatTFKeeps(t *testing.T) {
	m, err := New("bert-base", ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(PlanOptions{Batch: 2, Optimizer: "adam"})
	if err != nil {
		t.Fatal(err)
	}
	live := map[int]bool{}
	for _, op := range p.Ops {
		if op.Phase != Forward {
			break
		}
		for _, a := range op.Alloc {
			live[a] = true
		}
		for _, f := range op.Free {
			delete(live, f)
		}
	}
	const d, ff, h, S, B = 768, 3072, 12, 128, 2
	var got int64
	names := map[string]bool{}
	for ti := range live {
		tn := p.Tensors[ti]
		if rest, ok := strings.CutPrefix(tn.Name, "transformer_layer_5/"); ok {
			got += tn.Bytes
			names[rest] = true
		}
	}
	if want := int64(4 * S * B * (12*d + 3*h*S + 4*ff)); got != want {
		t.Errorf("layer 5 keeps %d bytes at the end of forward, want %d (12d + 3hS + 4ff floats per token)", got, want)
	}
	for _, n := range []string{"self_attention/softmax/softmax", "self_attention/attention_dropout/dropout/mask",
		"self_attention/attention_dropout/dropout", "feedforward_intermediate_dense/gelu/intermediates",
		"self_attention_dropout/dropout/mask", "feedforward_dropout/dropout/mask"} {
		if !names[n] {
			t.Errorf("layer 5 does not keep %s for backward", n)
		}
	}
}
