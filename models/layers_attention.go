package models

// Builders of Attention, AdditiveAttention and GroupedQueryAttention
// (keras/src/layers/attention).

import (
	"fmt"
)

func init() {
	register(buildDotAttention, "Attention", "AdditiveAttention")
	register(buildGQA, "GroupedQueryAttention")
}

// buildDotAttention applies Attention (Luong: scores q k^T, or "concat": a weighted sum of
// tanh(q + k) over the features) and AdditiveAttention (Bahdanau: sum(scale * tanh(q + k))),
// called on [query, value] or [query, value, key]; softmax over the keys, then the scores
// times the value. Weights: Attention's scale (use_scale) and concat_score_weight (concat),
// scalars; AdditiveAttention's scale, one per feature (attention.py, additive_attention.py).
func buildDotAttention(g *graph, l *layerCall) (int, error) {
	if len(l.ins) < 2 || len(l.ins) > 3 {
		return 0, fmt.Errorf("takes [query, value] or [query, value, key], got %d inputs", len(l.ins))
	}
	q, v := l.ins[0], l.ins[1]
	k := v
	if len(l.ins) == 3 {
		k = l.ins[2]
	}
	qs, vs, ks := g.shape(q), g.shape(v), g.shape(k)
	if len(qs) != 2 || len(vs) != 2 || len(ks) != 2 || qs[1] != ks[1] || vs[0] != ks[0] {
		return 0, fmt.Errorf("query %v, value %v, key %v: want (steps, features) with matching features", qs, vs, ks)
	}
	tq, tv, d := qs[0], ks[0], qs[1]
	mode, _ := l.c.str("score_mode", "dot")
	useScale, _ := l.c.bool("use_scale", l.class == "AdditiveAttention")
	if useScale {
		shape := []int{}
		if l.class == "AdditiveAttention" {
			shape = []int{d}
		}
		g.w("scale", shape, true, true, false)
	}
	var scores int
	sc := float64(tq) * float64(tv) * float64(d)
	if l.class == "AdditiveAttention" || mode == "concat" {
		if l.class == "Attention" {
			g.w("concat_score_weight", []int{}, true, true, false)
		}
		// tanh(q + k) of shape (Tq, Tv, d) reduced over d: the broadcast sum is kept for tanh's
		// gradient.
		scores = g.addNode(node{name: l.name + "/scores", kind: Reduction, in: []int{q, k}, shape: []int{tq, tv},
			flops: 7 * sc, dxFLOPs: 8 * sc, saveIn: 3, composite: int64(tq) * int64(tv) * int64(d)})
	} else {
		scores = g.addNode(node{name: l.name + "/scores", kind: MatMul, in: []int{q, k}, shape: []int{tq, tv},
			flops: 2 * sc, dxFLOPs: 4 * sc, saveIn: 3, kB: 2, gemm: GEMMShape{M: int64(tq), N: int64(tv), K: int64(d)}})
	}
	probs, err := g.act(l.name+"/softmax", "softmax", scores)
	if err != nil {
		return 0, err
	}
	if rate, _ := l.c.float("dropout", 0); rate > 0 {
		probs = g.dropout(l.name+"/dropout", probs, int64(tq*tv))
	}
	av := 2 * float64(tq) * float64(tv) * float64(vs[1])
	return g.addNode(node{name: l.name + "/MatMul", kind: MatMul, in: []int{probs, v}, shape: []int{tq, vs[1]},
		flops: av, dxFLOPs: 2 * av, saveIn: 3, kB: 2, gemm: GEMMShape{M: int64(tq), N: int64(vs[1]), K: int64(tv)}}), nil
}

// buildGQA applies GroupedQueryAttention(head_dim, num_query_heads, num_key_value_heads):
// EinsumDense projections query (m, u, h), key and value (m, v, h), an optional sigmoid gate
// like the query, each with a bias per head and feature, the query heads sharing each key/value
// head, and the output projection (u, h, m) with a bias of m
// (keras/src/layers/attention/grouped_query_attention.py build).
func buildGQA(g *graph, l *layerCall) (int, error) {
	if len(l.ins) < 2 || len(l.ins) > 3 {
		return 0, fmt.Errorf("takes query, value[, key], got %d inputs", len(l.ins))
	}
	q, v := l.ins[0], l.ins[1]
	k := v
	if len(l.ins) == 3 {
		k = l.ins[2]
	}
	qs, vs, ks := g.shape(q), g.shape(v), g.shape(k)
	if len(qs) != 2 || len(vs) != 2 || len(ks) != 2 || vs[0] != ks[0] {
		return 0, fmt.Errorf("query %v, value %v, key %v: want (sequence, features)", qs, vs, ks)
	}
	hd, err1 := l.c.int("head_dim", 0)
	hq, err2 := l.c.int("num_query_heads", 0)
	hkv, err3 := l.c.int("num_key_value_heads", 0)
	if err1 != nil || err2 != nil || err3 != nil || hd <= 0 || hq <= 0 || hkv <= 0 || hq%hkv != 0 {
		return 0, fmt.Errorf("head_dim %v, num_query_heads %v, num_key_value_heads %v", l.c["head_dim"], l.c["num_query_heads"], l.c["num_key_value_heads"])
	}
	useBias, _ := l.c.bool("use_bias", true)
	proj := func(sub string, x, heads int) int {
		kern := g.w(sub+"/kernel", []int{g.shape(x)[1], heads, hd}, true, true, true)
		y := g.matmul(l.name+"/"+sub, x, heads*hd, kern)
		if useBias {
			y = g.bias(l.name+"/"+sub, y, g.w(sub+"/bias", []int{heads, hd}, true, true, false))
		}
		return y
	}
	qp := proj("query", q, hq)
	kp := proj("key", k, hkv)
	vp := proj("value", v, hkv)
	sq, sk := qs[0], ks[0]
	sc := 2 * float64(hq) * float64(sq) * float64(sk) * float64(hd)
	scores := g.addNode(node{name: l.name + "/einsum_qk", kind: Attention, in: []int{qp, kp}, shape: []int{hq, sq, sk},
		flops: sc, dxFLOPs: 2 * sc, saveIn: 3, kB: 2, gemm: GEMMShape{M: int64(sq), N: int64(sk), K: int64(hd), Batch: int64(hq)}})
	probs, err := g.act(l.name+"/softmax", "softmax", scores)
	if err != nil {
		return 0, err
	}
	if rate, _ := l.c.float("dropout", 0); rate > 0 {
		probs = g.dropout(l.name+"/dropout", probs, int64(hq*sq*sk))
	}
	ctx := g.addNode(node{name: l.name + "/einsum_av", kind: Attention, in: []int{probs, vp}, shape: []int{sq, hq * hd},
		flops: sc, dxFLOPs: 2 * sc, saveIn: 3, kB: 2, gemm: GEMMShape{M: int64(sq), N: int64(hd), K: int64(sk), Batch: int64(hq)}})
	if gate, _ := l.c.bool("use_gate", false); gate {
		gp, err := g.act(l.name+"/gate", "sigmoid", proj("gate", q, hq))
		if err != nil {
			return 0, err
		}
		ctx = g.addNode(node{name: l.name + "/gated", kind: Elementwise, in: []int{ctx, gp}, shape: []int{sq, hq * hd},
			flops: float64(sq * hq * hd), dxFLOPs: 2 * float64(sq*hq*hd), ew: true, saveIn: 3})
	}
	ok := g.w("attention_output/kernel", []int{hq, hd, qs[1]}, true, true, true)
	y := g.matmul(l.name+"/attention_output", ctx, qs[1], ok)
	if useBias {
		y = g.bias(l.name+"/attention_output", y, g.w("attention_output/bias", []int{qs[1]}, true, true, false))
	}
	return y, nil
}
