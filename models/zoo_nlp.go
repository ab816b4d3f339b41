package models

import (
	"fmt"
	"strings"
)

func seqLen(o ModelOptions, def int) int {
	if o.SeqLen > 0 {
		return o.SeqLen
	}
	return def
}

// encoderBlock is one post-norm (BERT) or pre-norm (GPT-2, ViT) transformer block built from
// Keras layers: MultiHeadAttention, Dropout, Add, LayerNormalization, Dense (keras_hub
// TransformerEncoder / TransformerDecoder layout).
func encoderBlock(z *zb, x int, name string, heads, d, ff int, act string, preNorm bool, drop float64) int {
	ln := func(n string, x int) int {
		return z.call("LayerNormalization", name+n, cfg{"axis": -1, "epsilon": 1e-12}, x)
	}
	mha := func(x int) int {
		return z.call("MultiHeadAttention", name+"self_attention", cfg{"num_heads": heads, "key_dim": d / heads,
			"dropout": drop, "use_bias": true}, x, x)
	}
	if preNorm {
		y := ln("self_attention_layer_norm", x)
		y = mha(y)
		y = z.dropout(name+"self_attention_dropout", y, drop)
		x = z.add(name+"self_attention_add", x, y)
		y = ln("feedforward_layer_norm", x)
		y = z.dense(name+"feedforward_intermediate_dense", y, ff, act)
		y = z.dense(name+"feedforward_output_dense", y, d, "linear")
		y = z.dropout(name+"feedforward_dropout", y, drop)
		return z.add(name+"feedforward_add", x, y)
	}
	y := mha(x)
	y = z.dropout(name+"self_attention_dropout", y, drop)
	x = z.add(name+"self_attention_add", x, y)
	x = ln("self_attention_layer_norm", x)
	y = z.dense(name+"feedforward_intermediate_dense", x, ff, act)
	y = z.dense(name+"feedforward_output_dense", y, d, "linear")
	y = z.dropout(name+"feedforward_dropout", y, drop)
	x = z.add(name+"feedforward_add", x, y)
	return ln("feedforward_layer_norm", x)
}

// bert is the BERT encoder of Devlin et al. (2019) as keras_hub BertBackbone builds it
// (vocabulary 30522, 512 positions, 2 segment types, GELU, dropout 0.1), with a pooled
// classification head (BertTextClassifier) or the masked-LM head (BertMaskedLM, tied output
// embedding, 15% of positions predicted).
func bert(layers, d, heads int) func(string, ModelOptions) (*graph, error) {
	return func(name string, o ModelOptions) (*graph, error) {
		z := newZB(name)
		s := seqLen(o, 128)
		if s > 512 {
			return nil, fmt.Errorf("sequence length %d exceeds BERT's 512 positions", s)
		}
		ids := z.input("token_ids", []int{s}, true)
		seg := z.input("segment_ids", []int{s}, true)
		tok := z.call("Embedding", "token_embedding", cfg{"input_dim": 30522, "output_dim": d}, ids)
		pos := z.call("PositionEmbedding", "position_embedding", cfg{"sequence_length": 512}, tok)
		sg := z.call("Embedding", "segment_embedding", cfg{"input_dim": 2, "output_dim": d}, seg)
		x := z.add("embeddings_add", tok, pos, sg)
		x = z.call("LayerNormalization", "embeddings_layer_norm", cfg{"axis": -1, "epsilon": 1e-12}, x)
		x = z.dropout("embeddings_dropout", x, 0.1)
		for i := 0; i < layers; i++ {
			x = encoderBlock(z, x, fmt.Sprintf("transformer_layer_%d/", i), heads, d, 4*d, "gelu", false, 0.1)
		}
		switch o.Impl {
		case "", "keras-hub":
		case "model-garden":
			bertModelGardenFloat32(z.g)
			bertTF1GELU(z.g)
			bertTFOps(z.g)
		case "google-research":
			bertTF1GELU(z.g)
			bertTFOps(z.g)
		default:
			return nil, fmt.Errorf("impl %q: want keras-hub, model-garden or google-research", o.Impl)
		}
		switch o.Head {
		case "", "classification", "classifier":
			cls := z.call("TokenSlice", "cls_token", cfg{"tokens": 1}, x)
			p := z.dense("pooled_dense", cls, d, "tanh")
			p = z.dropout("classifier_dropout", p, 0.1)
			out := z.dense("logits", p, classes(o, 2), "softmax")
			return z.done(out)
		case "mlm":
			// keras_hub MaskedLMHead: gather the masked positions, Dense(gelu), LayerNorm,
			// logits against the token embedding plus a bias.
			m := (s*15 + 99) / 100
			y := z.call("TokenSlice", "mask_positions", cfg{"tokens": m}, x)
			y = z.dense("mlm_head_dense", y, d, "gelu")
			y = z.call("LayerNormalization", "mlm_head_layer_norm", cfg{"axis": -1, "epsilon": 1e-12}, y)
			y = z.call("TiedLogits", "mlm_head_logits", cfg{"embedding": "token_embedding", "use_bias": true}, y)
			y = z.act("mlm_head_softmax", "softmax", y)
			return z.done(y)
		}
		return nil, fmt.Errorf("head %q: want classification or mlm", o.Head)
	}
}

// bertModelGardenFloat32 marks the encoder ops that the TF Model Garden's BERT computes in
// float32 whatever the Keras policy: the embeddings' layer norm and dropout
// (official/nlp/modeling/networks/transformer_encoder.py: LayerNormalization and Dropout with
// dtype=tf.float32), and in each layer both residual adds, both layer norms and the GELU
// (official/nlp/modeling/layers/transformer.py, Transformer.call: "Use float32 in keras layer
// norm and the gelu activation in the intermediate dense layer for numeric stability", with a
// tf.cast to float32 before each and back to float16 after). The attention, its softmax and
// dropout, the dense layers and their dropouts keep the policy's float16. Those are the ops
// TF1's graph rewrite keeps in float32 in NVIDIA's TF1 BERT (amp.go), minus the bias adds
// and dropouts there that sit between a matmul and a deny op.
func bertModelGardenFloat32(g *graph) {
	for i := range g.nodes {
		n := &g.nodes[i]
		switch {
		case strings.HasPrefix(n.name, "embeddings_layer_norm/"), strings.HasPrefix(n.name, "embeddings_dropout/"):
		case !strings.HasPrefix(n.name, "transformer_layer_"):
			continue
		case strings.HasSuffix(n.name, "_layer_norm/LayerNorm"), strings.HasSuffix(n.name, "_add/Add"),
			strings.HasSuffix(n.name, "feedforward_intermediate_dense/gelu"):
		default:
			continue
		}
		n.f32 = true
	}
}

// bertTF1GELU gives the feed-forward GELU what TF keeps of google-research/bert's gelu
// (modeling.py, the TF 1.x reference that run_classifier.py trains): the tanh approximation
// as separate ops, cdf = 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))) and
// x * cdf. TF's gradients read x (the final Mul's, and Pow's), the tanh output (TanhGrad) and
// cdf (the final Mul's), and _PowGrad's y * pow(x, y - 1) (math_grad.py) depends on forward
// values alone, so TF's executor computes it in the forward pass and holds it to backward:
// three tensors of the input's size besides x (tf.nn.gelu's exact form keeps two).
func bertTF1GELU(g *graph) {
	for i := range g.nodes {
		if n := &g.nodes[i]; strings.HasSuffix(n.name, "feedforward_intermediate_dense/gelu") {
			n.composite = 3 * n.elems
		}
	}
}

// gpt2 is GPT-2 (Radford et al. 2019) as keras_hub GPT2Backbone and GPT2CausalLM build it:
// vocabulary 50257, 1024 positions, pre-norm blocks, final LayerNorm, logits against the tied
// token embedding. Causal attention computes the full score matrix (Keras masks it).
func gpt2(layers, d, heads int) func(string, ModelOptions) (*graph, error) {
	return func(name string, o ModelOptions) (*graph, error) {
		z := newZB(name)
		s := seqLen(o, 1024)
		if s > 1024 {
			return nil, fmt.Errorf("sequence length %d exceeds GPT-2's 1024 positions", s)
		}
		ids := z.input("token_ids", []int{s}, true)
		tok := z.call("Embedding", "token_embedding", cfg{"input_dim": 50257, "output_dim": d}, ids)
		pos := z.call("PositionEmbedding", "position_embedding", cfg{"sequence_length": 1024}, tok)
		x := z.add("embeddings_add", tok, pos)
		x = z.dropout("embeddings_dropout", x, 0.1)
		for i := 0; i < layers; i++ {
			x = encoderBlock(z, x, fmt.Sprintf("transformer_layer_%d/", i), heads, d, 4*d, "gelu", true, 0.1)
		}
		x = z.call("LayerNormalization", "layer_norm", cfg{"axis": -1, "epsilon": 1e-5}, x)
		x = z.call("TiedLogits", "lm_logits", cfg{"embedding": "token_embedding"}, x)
		x = z.act("lm_softmax", "softmax", x)
		return z.done(x)
	}
}

// buildViTB16 is ViT-B/16 (Dosovitskiy et al. 2021): 16x16 patch Conv2D, class token,
// learned position embedding, 12 pre-norm blocks (768, 12 heads, MLP 3072), LayerNorm,
// Dense head on the class token.
func buildViTB16(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	if s%16 != 0 {
		return nil, fmt.Errorf("image size %d is not a multiple of the 16-pixel patch", s)
	}
	d := 768
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.conv("patch_embedding", x, d, 16, 16, "valid", true, "linear")
	n := (s / 16) * (s / 16)
	x = z.call("Reshape", "patches", cfg{"target_shape": []int{n, d}}, x)
	x = z.call("ClassToken", "class_token", cfg{}, x)
	pos := z.call("PositionEmbedding", "position_embedding", cfg{"sequence_length": n + 1}, x)
	x = z.add("embeddings_add", x, pos)
	x = z.dropout("embeddings_dropout", x, 0.1)
	for i := 0; i < 12; i++ {
		x = encoderBlock(z, x, fmt.Sprintf("transformer_layer_%d/", i), 12, d, 3072, "gelu", true, 0.1)
	}
	x = z.call("LayerNormalization", "layer_norm", cfg{"axis": -1, "epsilon": 1e-6}, x)
	x = z.call("TokenSlice", "cls_token", cfg{"tokens": 1}, x)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// buildLSTM is the keras.io example "Bidirectional LSTM on IMDB"
// (examples/nlp/bidirectional_lstm_imdb.py): 20000-word vocabulary, 200 tokens.
func buildLSTM(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := seqLen(o, 200)
	x := z.input("input_layer", []int{s}, true)
	x = z.call("Embedding", "embedding", cfg{"input_dim": 20000, "output_dim": 128}, x)
	x = z.call("Bidirectional", "bidirectional", cfg{"merge_mode": "concat",
		"layer": map[string]any{"class_name": "LSTM", "config": map[string]any{"units": 64, "return_sequences": true}}}, x)
	x = z.call("Bidirectional", "bidirectional_1", cfg{"merge_mode": "concat",
		"layer": map[string]any{"class_name": "LSTM", "config": map[string]any{"units": 64}}}, x)
	c := classes(o, 1)
	act := "sigmoid"
	if c > 1 {
		act = "softmax"
	}
	x = z.dense("dense", x, c, act)
	return z.done(x)
}
