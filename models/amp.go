package models

import "strings"

// ampClass is where grappler's auto_mixed_precision pass puts the TF op a node runs
// (tensorflow/core/grappler/optimizers/auto_mixed_precision_lists.h, TF 1.15 / NGC 20.xx):
// allow ("white": always float16), infer ("gray": float16 only between allow ops, float32
// when a deny op is upstream), deny ("black": float32, and it makes the infer ops downstream
// float32 too), clear (follows its neighbours), and ops in no list, which stay float32.
type ampClass int8

const (
	ampOther ampClass = iota
	ampAllow
	ampInfer
	ampDeny
	ampClear
)

// ampClassOf maps a node to the list of the TF ops it stands for:
//   - allow: MatMul, BatchMatMulV2 (attention products), Conv2D and its gradients, CudnnRNN.
//     Depthwise convolutions are commented out of the list ("when fast and safe fp16 kernels
//     are available"), so they stay float32.
//   - deny: Mean and Sum (tf.contrib.layers.layer_norm computes nn.moments, a Mean; a global
//     average pooling is a Mean; the loss), Pow (TF 1.x has no gelu op: the BERT reference
//     code's gelu is 0.5x(1+tanh(sqrt(2/pi)(x+0.044715 pow(x,3))))), Exp, Log.
//   - infer: Add, AddV2, BiasAdd, Mul, RealDiv, Sub, Tanh, Sigmoid, FusedBatchNormV3, AvgPool, Softmax
//     (the infer list of NGC's 1.15 builds; TF 1.14's deny list still held Softmax).
//   - clear: Relu, MaxPool, Reshape, Transpose, StridedSlice, GatherV2, BroadcastTo, Identity.
func ampClassOf(n *node) ampClass {
	switch n.kind {
	case MatMul, Attention:
		return ampAllow
	case Conv:
		if n.gemm.Batch > 1 && n.gemm.InC == 1 {
			return ampOther // DepthwiseConv2dNative
		}
		return ampAllow
	case Recurrent:
		return ampAllow // CudnnRNNV3
	case Embedding, Copy:
		return ampClear
	case Pool:
		if strings.Contains(n.name, "MaxPool") {
			return ampClear
		}
		return ampInfer // AvgPool
	case Norm:
		if strings.HasSuffix(n.name, "/LayerNorm") {
			return ampDeny
		}
		return ampInfer
	case Reduction:
		if strings.HasSuffix(n.name, "softmax") {
			return ampInfer
		}
		return ampDeny
	case Elementwise:
		switch {
		case strings.HasSuffix(n.name, "/gelu"), strings.HasSuffix(n.name, "/exp"),
			strings.HasSuffix(n.name, "/log"):
			return ampDeny
		case strings.HasSuffix(n.name, "/relu"), strings.HasSuffix(n.name, "/relu6"):
			return ampClear
		}
		return ampInfer
	}
	return ampOther
}

// graphRewriteHalf returns, per graph node, whether TF1's mixed precision graph rewrite runs
// it in half precision. It follows AutoMixedPrecisionImpl::Optimize (auto_mixed_precision.cc):
// pass 1 paints the allow ops; pass 2 propagates deny forward through infer and clear ops
// (PropagateDenyFwdThroughClearAndInfer); pass 3 paints the infer and clear ops that lie on a
// path between two allow ops with no deny op on it (AddClearAndInferToAllowIfBetweenAllow);
// every other op keeps float32, with casts where dtypes meet. Nodes are in topological order
// (every input precedes its consumer).
func graphRewriteHalf(g *graph) []bool {
	n := len(g.nodes)
	class := make([]ampClass, n)
	deny := make([]bool, n)
	for i := range g.nodes {
		class[i] = ampClassOf(&g.nodes[i])
		deny[i] = class[i] == ampDeny
		if class[i] == ampInfer || class[i] == ampClear {
			for _, x := range g.nodes[i].in {
				if deny[x] {
					deny[i] = true
				}
			}
		}
	}
	passable := func(i int) bool { return (class[i] == ampInfer || class[i] == ampClear) && !deny[i] }
	// up: an allow op reaches i through passable ops; down: i reaches an allow op so.
	up := make([]bool, n)
	for i := range g.nodes {
		for _, x := range g.nodes[i].in {
			if class[x] == ampAllow || (passable(x) && up[x]) {
				up[i] = true
			}
		}
	}
	down := make([]bool, n)
	for i := n - 1; i >= 0; i-- {
		if class[i] != ampAllow && !(passable(i) && down[i]) {
			continue
		}
		for _, x := range g.nodes[i].in {
			down[x] = true
		}
	}
	half := make([]bool, n)
	for i := range half {
		half[i] = class[i] == ampAllow || (passable(i) && up[i] && down[i])
	}
	return half
}
