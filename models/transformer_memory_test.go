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
	live := liveAfterForward(p)
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

// TestBertTF1KeepsWhatTFKeeps: google-research/bert's modeling.py (impl=google-research), the
// graph TF 1.x runs op by op, keeps per token what the Keras-built layer keeps plus one more
// feed-forward tensor: its tanh GELU keeps x, the tanh output, cdf and Pow's gradient factor
// 3x^2 (computed in forward from x alone), where tf.nn.gelu keeps x and two: 12d + 3hS + 5ff.
func TestBertTF1KeepsWhatTFKeeps(t *testing.T) {
	const d, ff, h, S, B = 768, 3072, 12, 128, 2
	for _, c := range []struct {
		impl string
		ffs  int64
	}{{"", 4}, {"google-research", 5}} {
		m, err := New("bert-base", ModelOptions{Impl: c.impl})
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(PlanOptions{Batch: B, Optimizer: "bert-adamw"})
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, "bert-base "+c.impl, p)
		live := liveAfterForward(p)
		var got int64
		for ti := range live {
			if n := p.Tensors[ti].Name; strings.HasPrefix(n, "transformer_layer_5/") && !strings.Contains(n, "/bert-adamw/") {
				got += p.Tensors[ti].Bytes
			}
		}
		if want := 4 * S * B * (12*d + 3*h*S + c.ffs*ff); got != want {
			t.Errorf("impl %q: layer 5 keeps %d bytes at the end of forward, want %d (12d + 3hS + %dff floats per token)", c.impl, got, want, c.ffs)
		}
	}
}

// TestBertAdamWEarlyTemps: AdamWeightDecayOptimizer's beta_1 * m, beta_2 * v and
// weight_decay_rate * param depend on variables alone, so TF's executor computes them when the
// step starts and they live through forward and backward (weight decay skips LayerNorm and
// bias variables); after the clip, every variable's (1 - beta_1) * grad and grad^2 are live
// together. Keras's fused Adam keeps none of these.
func TestBertAdamWEarlyTemps(t *testing.T) {
	m, err := New("bert-base", ModelOptions{Impl: "google-research"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(PlanOptions{Batch: 2, Optimizer: "bert-adamw"})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, "bert-base", p)
	var all, decayed, first int64
	for _, w := range m.g.weights {
		if !w.trainable {
			continue
		}
		if first == 0 {
			first = 4 * w.elems // the first update runs before the others' temporaries exist
		}
		all += 4 * w.elems
		if !strings.Contains(w.name, "layer_norm") && !strings.Contains(w.name, "bias") {
			decayed += 4 * w.elems
		}
	}
	live := map[int]bool{}
	var atBackward, peakUpdate int64
	for i, op := range p.Ops {
		for _, a := range op.Alloc {
			live[a] = true
		}
		var early, update int64
		for x := range live {
			switch n := p.Tensors[x].Name; {
			case strings.Contains(n, "/bert-adamw/early"):
				early += p.Tensors[x].Bytes
			case strings.Contains(n, "/bert-adamw/update"):
				update += p.Tensors[x].Bytes
			}
		}
		if op.Phase == Backward && atBackward == 0 {
			atBackward = early
		}
		if op.Phase == Optimizer && i+1 < len(p.Ops) && p.Ops[i-1].Phase == Optimizer && peakUpdate == 0 {
			peakUpdate = update // the second update op: every later variable's two temporaries
		}
		for _, f := range op.Free {
			delete(live, f)
		}
	}
	if want := 2*all + decayed; atBackward != want {
		t.Errorf("early tensors live when backward starts: %d bytes, want %d (2 x %d + %d decayed)", atBackward, want, all, decayed)
	}
	if want := 2 * (all - first); peakUpdate != want {
		t.Errorf("update temporaries at the second update: %d bytes, want 2 x (%d - %d)", peakUpdate, all, first)
	}
	for _, op := range p.Ops {
		for _, x := range op.Alloc {
			if strings.Contains(p.Tensors[x].Name, "/adam/early") {
				t.Errorf("Keras's adam has early tensor %s", p.Tensors[x].Name)
			}
		}
	}
}

// liveAfterForward returns the tensors p keeps allocated at the end of its forward pass: what
// backward reads.
func liveAfterForward(p *Plan) map[int]bool {
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
	return live
}
