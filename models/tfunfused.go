package models

import "strings"

// Without XLA, TF runs a composite of TF ops as one kernel per op: a layer norm written with
// nn.moments and nn.batch_normalization is ten kernels forward and twenty-one in its gradient,
// each reading and writing whole tensors. This file lists those kernels for the composites of
// google-research/bert's modeling.py (TF 1.x, NVIDIA's TF1 BERT) and of the TF Model Garden's
// BERT (TF 2.x, NVIDIA's TF2 BERT), with the gradients TF registers for them (TF 1.15 / 2.4
// math_grad.py, nn_grad.py, array_grad.py); the plan prices such a node by them instead of as
// one kernel of its kind (Op.Bytes, Op.Kernels, Op.ClassBytes, Op.ClassElems).

// Classes of TF executor kernels that do more than stream, in the order of hw.ExecClasses
// (train copies Op.ClassBytes and Op.ClassElems into hw.Work's, arrays of the same length).
const (
	PassBroadcast = iota // a tensor with a row or column vector, or an outer broadcast
	PassRowReduce        // a reduction over the last axis
	PassColReduce        // a reduction over the rows (BiasAddGrad, gamma and beta gradients)
	PassTile             // a row vector written out to a full tensor
	PassTranspose        // [B,S,H,D] <-> [B,H,S,D]
	PassRandom           // RandomUniform
	NumPassClasses
)

// passStream is a kernel that streams at its kind's rate (same-shape element-wise ops, a
// tensor and a scalar).
const passStream = -1

// tfKernel is one TF kernel: its class, what it moves per sample, in elements of the op's
// dtype (elems) and one-byte booleans (bools), and the elements per sample it processes (out:
// its output's, a reduction's input's), which an element-bound class is priced by.
type tfKernel struct {
	class             int
	elems, bools, out float64
}

// tfSeq is a node's kernels forward and in its gradient.
type tfSeq struct{ fwd, bwd []tfKernel }

// tfPrice sums ks for a batch of b in dtype dt: bytes, kernels, and the bytes and elements of
// each class.
func tfPrice(ks []tfKernel, b int64, dt DType) (bytes float64, kernels int, cls, elems [NumPassClasses]float64) {
	for _, k := range ks {
		x := float64(b) * (k.elems*float64(dt.Size()) + k.bools)
		bytes += x
		if k.class >= 0 {
			cls[k.class] += x
			elems[k.class] += float64(b) * k.out
		}
	}
	return bytes, len(ks), cls, elems
}

func st(e float64) tfKernel { return tfKernel{class: passStream, elems: e} }

// tfLayerNorm is tf.contrib.layers.layer_norm (TF 1.x) and tf.keras LayerNormalization with
// BERT's epsilon 1e-12 (TF 2.x: _fused_can_be_used refuses an epsilon under 1.001e-5, the
// floor of the fused batch norm): nn.moments (mean, squared_difference with the mean held by
// stop_gradient, mean), then nn.batch_normalization: inv = rsqrt(variance + eps) * gamma,
// x * inv + (beta - mean * inv), with inv * gamma an outer broadcast to the tensor's shape.
// The gradient: _AddGrad passes dy to both terms (equal shapes); _SubGrad sums dy over the rows
// for beta and negates it; _MulGrad of mean * inv multiplies and sums over the features for the
// mean, and multiplies for inv; of x * inv multiplies twice; AddN of inv's two gradients;
// _MulGrad of rsqrt * gamma multiplies and sums each way; _RsqrtGrad; _MeanGrad tiles the row
// gradient and divides (twice); _SquaredDifferenceGrad is 2 * dy * (x - mean); AddN of x's
// three gradients. n is the elements per sample, r the rows.
func tfLayerNorm(n, r float64) tfSeq {
	b := func(e float64) tfKernel { return tfKernel{class: PassBroadcast, elems: e, out: n} }
	row := tfKernel{class: PassRowReduce, elems: n + r, out: n}
	col := tfKernel{class: PassColReduce, elems: n, out: n}
	tile := tfKernel{class: PassTile, elems: n + r, out: n}
	return tfSeq{
		fwd: []tfKernel{row, b(2*n + r), row, st(2 * r), st(2 * r), b(n + r), st(3 * n), b(2*n + r), b(2 * n), st(3 * n)},
		bwd: []tfKernel{col, st(2 * n), st(3 * n), row, b(2*n + r), st(3 * n), st(3 * n), st(3 * n), b(2 * n), row,
			b(2*n + r), col, st(3 * r), tile, st(2 * n), st(2 * n), b(2*n + r), st(3 * n), tile, st(2 * n), st(4 * n)},
	}
}

// tfGELUTanh is modeling.py's gelu and the Model Garden's (official/modeling/activations/
// gelu.py): cdf = 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))), x * cdf, eight
// kernels. The gradient: _MulGrad of x * cdf (two products), of the three scalar products
// (one each), _TanhGrad, _PowGrad (pow(x, 2), times 3, times dy), and AddN of x's three
// gradients; the additions of constants pass dy on.
func tfGELUTanh(n float64) tfSeq {
	return tfSeq{
		fwd: []tfKernel{st(2 * n), st(2 * n), st(3 * n), st(2 * n), st(2 * n), st(2 * n), st(2 * n), st(3 * n)},
		bwd: []tfKernel{st(3 * n), st(3 * n), st(2 * n), st(3 * n), st(2 * n), st(2 * n), st(2 * n), st(2 * n), st(3 * n), st(4 * n)},
	}
}

// tfDropout is tf.nn.dropout (nn_ops.py dropout_v2, TF 1.14 on): random_uniform, keep_mask =
// random >= rate (booleans), x * scale, cast(keep_mask), the product. The gradient multiplies
// dy by the mask and by the scale (the mask's own gradient stops at the Cast from bool).
func tfDropout(n float64) tfSeq {
	return tfSeq{
		fwd: []tfKernel{{class: PassRandom, elems: n, out: n}, {class: passStream, elems: n, bools: n}, st(2 * n),
			{class: passStream, elems: n, bools: n}, st(3 * n)},
		bwd: []tfKernel{st(3 * n), st(2 * n)},
	}
}

// tfBiasAdd is BiasAdd (TF1 tf.layers.dense) or the Model Garden's DenseEinsum bias, ret +=
// bias: a broadcast of the bias over the rows; its gradient sums dy over the rows (the input's
// gradient is dy itself).
func tfBiasAdd(n float64) tfSeq {
	return tfSeq{fwd: []tfKernel{{class: PassBroadcast, elems: 2 * n, out: n}}, bwd: []tfKernel{{class: PassColReduce, elems: n, out: n}}}
}

// tfTranspose is attention_layer's tf.transpose(x, [0, 2, 1, 3]) of the query, key, value or
// context ([B,S,H,D] <-> [B,H,S,D]); its gradient is the inverse transpose.
func tfTranspose(n float64) tfKernel { return tfKernel{class: PassTranspose, elems: 2 * n, out: n} }

// tfMaskedSoftmax is attention_layer's scores * 1/sqrt(head size), the mask's adder
// ((1 - cast(mask)) * -10000, on [B,1,F,T]: m elements per sample) added over the heads,
// and tf.nn.softmax, which TF's GPU kernel runs as a max and a sum-of-exponentials row
// reduction and a normalizing pass (softmax_op_gpu.cu.cc). The gradient: _SoftmaxGrad,
// (dy - sum(dy * y, -1)) * y, then the scale's; the adder needs none (no variable feeds it)
// and the add passes dy to the scores. n is the scores' elements per sample, r their rows.
func tfMaskedSoftmax(n, r, m float64) tfSeq {
	row := tfKernel{class: PassRowReduce, elems: n + r, out: n}
	return tfSeq{
		fwd: []tfKernel{st(2 * n), st(2 * m), st(2 * m), st(2 * m), {class: PassBroadcast, elems: 2*n + m, out: n}, row, row,
			{class: PassBroadcast, elems: 2*n + 2*r, out: n}},
		bwd: []tfKernel{st(3 * n), row, {class: PassBroadcast, elems: 2*n + r, out: n}, st(3 * n), st(2 * n)},
	}
}

// bertTFOps gives BERT's composite nodes the kernels TF runs for them without XLA, as
// modeling.py (impl google-research) and the Model Garden (impl model-garden) write them:
// layer norms, the tanh GELU, dropouts, bias adds, the attention's masked softmax and its four
// transposes. Those implementations scale the scores, not the query: the query's scaling node
// stands for its transpose. The key's and value's transposes follow their bias adds and the
// context's precedes the output projection's, so they are priced with those bias adds (the
// products between them are priced by their FLOPs).
func bertTFOps(g *graph) {
	for i := range g.nodes {
		n := &g.nodes[i]
		e := float64(n.elems)
		last := 1.0
		if len(n.shape) > 0 {
			last = float64(n.shape[len(n.shape)-1])
		}
		var s tfSeq
		switch {
		case strings.HasSuffix(n.name, "/LayerNorm"):
			s = tfLayerNorm(e, e/last)
		case strings.HasSuffix(n.name, "/gelu"):
			s = tfGELUTanh(e)
		case strings.HasSuffix(n.name, "/dropout"):
			s = tfDropout(e)
		case strings.HasSuffix(n.name, "self_attention/softmax/softmax") && len(n.shape) == 3:
			s = tfMaskedSoftmax(e, e/last, float64(n.shape[1]*n.shape[2]))
		case strings.HasSuffix(n.name, "self_attention/Mul"):
			s = tfSeq{fwd: []tfKernel{tfTranspose(e)}, bwd: []tfKernel{tfTranspose(e)}}
		case strings.HasSuffix(n.name, "/BiasAdd"):
			s = tfBiasAdd(e)
			if strings.HasSuffix(n.name, "self_attention/key/BiasAdd") || strings.HasSuffix(n.name, "self_attention/value/BiasAdd") {
				s.fwd = append(s.fwd, tfTranspose(e))
				s.bwd = append(s.bwd, tfTranspose(e))
			}
			if strings.HasSuffix(n.name, "self_attention/attention_output/BiasAdd") {
				s.fwd = append([]tfKernel{tfTranspose(e)}, s.fwd...)
				s.bwd = append(s.bwd, tfTranspose(e))
			}
		default:
			continue
		}
		n.tf = &s
	}
}
