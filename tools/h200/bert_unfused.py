#!/usr/bin/env python3
"""One BERT-Large encoder layer as TF runs google-research/bert's modeling.py without XLA: every
TF op of the forward pass and of its gradient graph (TF 1.15's registered gradients) as its own
kernel, in float32, with PyTorch eager on one GPU, each kernel's device time from the profiler.

    python3 tools/h200/bert_unfused.py --out $OUT [--batches 4,10] [--iters 10]

Writes OUT/ops.csv (one row per TF op: batch, phase, op, kind, bytes, kernels, kernel_s) and
OUT/env.json. `bytes` is what the TF op reads and writes (each input once, the output once);
`kind` says what kernel class it is (ew: same-shape element-wise; ew_scalar: a tensor and a
scalar; ew_bcast: a tensor and a row or column vector, or an outer broadcast; row_reduce: over
the last axis; col_reduce: over the rows; tile: a row vector broadcast to a full tensor;
transpose: [B,S,H,D] <-> [B,H,S,D]; rand: uniform random numbers; matmul / bmm: cuBLAS SGEMM,
TF32 off). The PyTorch kernel standing in for each TF kernel moves the same bytes (TF's softmax
is its two row reductions and the normalizing pass; AddN of k tensors is k-1 in-place adds
counted as one op). testdata/h200/bertunfused/README.md says how it was run.
"""
import argparse
import json
import os
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


class Layer:
    def __init__(self, B, S=384, d=1024, H=16, ff=4096, dev="cuda"):
        self.B, self.S, self.d, self.H, self.ff = B, S, d, H, ff
        T, Dh = B * S, d // H
        f = dict(device=dev, dtype=torch.float32)
        r = lambda *s: torch.randn(*s, **f)
        self.ops = []
        # Tensors (allocated once: the kernels, not the allocator, are timed).
        x, W, b = r(T, d), r(d, d) * 0.02, r(d)
        Wi, bi, Wo, bo = r(d, ff) * 0.02, r(ff), r(ff, d) * 0.02, r(d)
        q, k, v = r(T, d), r(T, d), r(T, d)
        qt, kt, vt = r(B, H, S, Dh), r(B, H, S, Dh), r(B, H, S, Dh)
        P = r(B, H, S, S)
        P2, P3, Pm = r(B, H, S, S), r(B, H, S, S), r(B, H, S, S)
        Pb = torch.empty(B, H, S, S, device=dev, dtype=torch.bool)
        adder = r(B, 1, S, S)
        mask = torch.ones(B, 1, S, S, device=dev, dtype=torch.int32)
        rowv, rowv2 = r(T, 1), r(T, 1)
        h, h2, h3, h4 = r(T, d), r(T, d), r(T, d), r(T, d)
        hb = torch.empty(T, d, device=dev, dtype=torch.bool)
        g, g2, g3, g4, g5 = r(T, ff), r(T, ff), r(T, ff), r(T, ff), r(T, ff)
        ctx = r(B, S, H, Dh)
        gamma, vec = r(d), r(d)
        dW, dWi, dWo = r(d, d), r(d, ff), r(ff, d)
        vff = r(ff)
        nb = lambda *ts: sum(t.numel() * t.element_size() for t in ts)

        def op(phase, name, kind, nbytes, fn, kernels=1):
            self.ops.append((phase, name, kind, nbytes, kernels, fn))

        # ---- forward (modeling.py transformer_model, one layer)
        for n in "qkv":
            op("fwd", n + "/MatMul", "matmul", nb(x, W, q), lambda: torch.mm(x, W, out=q))
            op("fwd", n + "/BiasAdd", "ew_bcast", nb(q, b, q), lambda: torch.add(q, b, out=h))
        for n in "qk":
            op("fwd", n + "/transpose", "transpose", 2 * nb(q),
               lambda: qt.copy_(q.view(B, S, H, Dh).permute(0, 2, 1, 3)))
        op("fwd", "scores/BatchMatMul", "bmm", nb(qt, kt, P), lambda: torch.matmul(qt, kt.transpose(-1, -2), out=P))
        op("fwd", "scores/Mul", "ew_scalar", 2 * nb(P), lambda: torch.mul(P, 0.125, out=P2))
        op("fwd", "mask/Cast", "ew", nb(mask, adder), lambda: adder.copy_(mask))
        op("fwd", "mask/Sub", "ew_scalar", 2 * nb(adder), lambda: torch.mul(adder, -1.0, out=adder))
        op("fwd", "mask/Mul", "ew_scalar", 2 * nb(adder), lambda: torch.mul(adder, -10000.0, out=adder))
        op("fwd", "scores/add", "ew_bcast", 2 * nb(P) + nb(adder), lambda: torch.add(P2, adder, out=P))
        op("fwd", "softmax/Max", "row_reduce", nb(P) + nb(P) // S, lambda: torch.amax(P, -1, keepdim=True))
        op("fwd", "softmax/Sum", "row_reduce", nb(P) + nb(P) // S, lambda: torch.sum(P, -1, keepdim=True))
        op("fwd", "softmax/normalize", "ew_bcast", 2 * nb(P) + 2 * nb(P) // S,
           lambda: torch.mul(P, P[..., :1], out=P3))
        op("fwd", "attn_dropout/RandomUniform", "rand", nb(P), lambda: Pm.uniform_())
        op("fwd", "attn_dropout/GreaterEqual", "ew", nb(P, Pb), lambda: torch.ge(Pm, 0.1, out=Pb))
        op("fwd", "attn_dropout/mul", "ew_scalar", 2 * nb(P), lambda: torch.mul(P3, 1 / 0.9, out=P2))
        op("fwd", "attn_dropout/Cast", "ew", nb(Pb, P), lambda: Pm.copy_(Pb))
        op("fwd", "attn_dropout/mul_1", "ew", 3 * nb(P), lambda: torch.mul(P2, Pm, out=P))
        op("fwd", "v/transpose", "transpose", 2 * nb(v), lambda: vt.copy_(v.view(B, S, H, Dh).permute(0, 2, 1, 3)))
        op("fwd", "context/BatchMatMul", "bmm", nb(P, vt, qt), lambda: torch.matmul(P, vt, out=qt))
        op("fwd", "context/transpose", "transpose", 2 * nb(qt), lambda: ctx.copy_(qt.permute(0, 2, 1, 3)))

        def dropout_fwd(pre, t, tb, tm, out):
            op("fwd", pre + "/RandomUniform", "rand", nb(t), lambda: tm.uniform_())
            op("fwd", pre + "/GreaterEqual", "ew", nb(t, tb), lambda: torch.ge(tm, 0.1, out=tb))
            op("fwd", pre + "/mul", "ew_scalar", 2 * nb(t), lambda: torch.mul(t, 1 / 0.9, out=out))
            op("fwd", pre + "/Cast", "ew", nb(tb, t), lambda: tm.copy_(tb))
            op("fwd", pre + "/mul_1", "ew", 3 * nb(t), lambda: torch.mul(out, tm, out=out))

        def layer_norm_fwd(pre):
            # tf.contrib.layers.layer_norm: nn.moments + nn.batch_normalization.
            op("fwd", pre + "/moments/mean", "row_reduce", nb(h, rowv), lambda: torch.mean(h, -1, keepdim=True, out=rowv))
            op("fwd", pre + "/moments/SquaredDifference", "ew_bcast", 2 * nb(h) + nb(rowv),
               lambda: torch.sub(h, rowv, out=h2))
            op("fwd", pre + "/moments/variance", "row_reduce", nb(h, rowv), lambda: torch.mean(h2, -1, keepdim=True, out=rowv2))
            op("fwd", pre + "/batchnorm/add", "ew_scalar", 2 * nb(rowv), lambda: torch.add(rowv2, 1e-12, out=rowv2))
            op("fwd", pre + "/batchnorm/Rsqrt", "ew", 2 * nb(rowv), lambda: torch.rsqrt(rowv2, out=rowv2))
            op("fwd", pre + "/batchnorm/mul", "ew_bcast", nb(rowv, gamma, h), lambda: torch.mul(rowv2, gamma, out=h3))
            op("fwd", pre + "/batchnorm/mul_1", "ew", 3 * nb(h), lambda: torch.mul(h, h3, out=h4))
            op("fwd", pre + "/batchnorm/mul_2", "ew_bcast", nb(rowv) + 2 * nb(h), lambda: torch.mul(h3, rowv, out=h2))
            op("fwd", pre + "/batchnorm/sub", "ew_bcast", nb(vec) + 2 * nb(h), lambda: torch.sub(vec, h2, out=h2))
            op("fwd", pre + "/batchnorm/add_1", "ew", 3 * nb(h), lambda: torch.add(h4, h2, out=h))

        op("fwd", "attention_output/MatMul", "matmul", nb(h, W, h2), lambda: torch.mm(h3, W, out=h2))
        op("fwd", "attention_output/BiasAdd", "ew_bcast", 2 * nb(h) + nb(b), lambda: torch.add(h2, b, out=h4))
        dropout_fwd("attention_output/dropout", h4, hb, h3, h2)
        op("fwd", "attention_output/add", "ew", 3 * nb(h), lambda: torch.add(h2, x, out=h))
        layer_norm_fwd("attention_output/LayerNorm")
        op("fwd", "intermediate/MatMul", "matmul", nb(h, Wi, g), lambda: torch.mm(h, Wi, out=g))
        op("fwd", "intermediate/BiasAdd", "ew_bcast", 2 * nb(g) + nb(vff), lambda: torch.add(g, vff, out=g2))
        # modeling.py gelu: 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))), x * cdf
        op("fwd", "gelu/Pow", "ew_scalar", 2 * nb(g), lambda: torch.pow(g2, 3, out=g3))
        op("fwd", "gelu/mul", "ew_scalar", 2 * nb(g), lambda: torch.mul(g3, 0.044715, out=g3))
        op("fwd", "gelu/add", "ew", 3 * nb(g), lambda: torch.add(g2, g3, out=g3))
        op("fwd", "gelu/mul_1", "ew_scalar", 2 * nb(g), lambda: torch.mul(g3, 0.7978845608, out=g3))
        op("fwd", "gelu/Tanh", "ew", 2 * nb(g), lambda: torch.tanh(g3, out=g4))
        op("fwd", "gelu/add_1", "ew_scalar", 2 * nb(g), lambda: torch.add(g4, 1.0, out=g3))
        op("fwd", "gelu/mul_2", "ew_scalar", 2 * nb(g), lambda: torch.mul(g3, 0.5, out=g5))
        op("fwd", "gelu/mul_3", "ew", 3 * nb(g), lambda: torch.mul(g2, g5, out=g))
        op("fwd", "output/MatMul", "matmul", nb(g, Wo, h), lambda: torch.mm(g, Wo, out=h2))
        op("fwd", "output/BiasAdd", "ew_bcast", 2 * nb(h) + nb(b), lambda: torch.add(h2, b, out=h4))
        dropout_fwd("output/dropout", h4, hb, h3, h2)
        op("fwd", "output/add", "ew", 3 * nb(h), lambda: torch.add(h2, x, out=h))
        layer_norm_fwd("output/LayerNorm")

        # ---- backward (TF 1.15 math_grad.py / nn_grad.py / array_grad.py gradients)
        def layer_norm_bwd(pre):
            # add_1: equal shapes, grad passes on. sub (beta - mean*inv): _SubGrad, beta broadcast.
            op("bwd", pre + "/sub_grad/Sum", "col_reduce", nb(h, vec), lambda: torch.sum(h, 0, out=vec))
            op("bwd", pre + "/sub_grad/Neg", "ew", 2 * nb(h), lambda: torch.neg(h, out=h2))
            # mul_2 (mean * inv): _MulGrad with a broadcast mean.
            op("bwd", pre + "/mul_2_grad/Mul", "ew", 3 * nb(h), lambda: torch.mul(h2, h3, out=h4))
            op("bwd", pre + "/mul_2_grad/Sum", "row_reduce", nb(h, rowv), lambda: torch.sum(h4, -1, keepdim=True, out=rowv))
            op("bwd", pre + "/mul_2_grad/Mul_1", "ew_bcast", nb(rowv) + 2 * nb(h), lambda: torch.mul(h2, rowv2, out=h4))
            # mul_1 (x * inv), equal shapes.
            op("bwd", pre + "/mul_1_grad/Mul", "ew", 3 * nb(h), lambda: torch.mul(h, h3, out=h2))
            op("bwd", pre + "/mul_1_grad/Mul_1", "ew", 3 * nb(h), lambda: torch.mul(h, x, out=h3))
            op("bwd", pre + "/mul_grad/AddN", "ew", 3 * nb(h), lambda: h3.add_(h4))
            # mul (inv = rsqrt(var + eps) * gamma): outer broadcast [T,1] x [d].
            op("bwd", pre + "/mul_grad/Mul", "ew_bcast", nb(h, vec, h), lambda: torch.mul(h3, gamma, out=h4))
            op("bwd", pre + "/mul_grad/Sum", "row_reduce", nb(h, rowv), lambda: torch.sum(h4, -1, keepdim=True, out=rowv))
            op("bwd", pre + "/mul_grad/Mul_1", "ew_bcast", nb(rowv) + 2 * nb(h), lambda: torch.mul(h3, rowv2, out=h4))
            op("bwd", pre + "/mul_grad/Sum_1", "col_reduce", nb(h, vec), lambda: torch.sum(h4, 0, out=vec))
            op("bwd", pre + "/Rsqrt_grad/RsqrtGrad", "ew", 3 * nb(rowv), lambda: torch.mul(rowv, rowv2, out=rowv))
            # variance = mean(sqdiff): _MeanGrad = Tile of the row gradient, then RealDiv.
            op("bwd", pre + "/variance_grad/Tile", "tile", nb(rowv, h), lambda: h4.copy_(rowv.expand(-1, self.d)))
            op("bwd", pre + "/variance_grad/truediv", "ew_scalar", 2 * nb(h), lambda: torch.div(h4, 1024.0, out=h4))
            # SquaredDifference: 2 * grad * (x - mean); the mean side stops (stop_gradient).
            op("bwd", pre + "/SquaredDifference_grad/mul", "ew_scalar", 2 * nb(h), lambda: torch.mul(h4, 2.0, out=h3))
            op("bwd", pre + "/SquaredDifference_grad/sub", "ew_bcast", 2 * nb(h) + nb(rowv), lambda: torch.sub(h, rowv, out=h4))
            op("bwd", pre + "/SquaredDifference_grad/mul_1", "ew", 3 * nb(h), lambda: torch.mul(h3, h4, out=h3))
            op("bwd", pre + "/mean_grad/Tile", "tile", nb(rowv, h), lambda: h4.copy_(rowv.expand(-1, self.d)))
            op("bwd", pre + "/mean_grad/truediv", "ew_scalar", 2 * nb(h), lambda: torch.div(h4, 1024.0, out=h4))
            op("bwd", pre + "/x_grad/AddN", "ew", 4 * nb(h), lambda: h2.add_(h3).add_(h4), kernels=2)

        def dropout_bwd(pre, t, m, out):
            op("bwd", pre + "/mul_1_grad/Mul", "ew", 3 * nb(t), lambda: torch.mul(t, m, out=out))
            op("bwd", pre + "/mul_grad/Mul", "ew_scalar", 2 * nb(t), lambda: torch.mul(out, 1 / 0.9, out=out))

        layer_norm_bwd("output/LayerNorm")
        dropout_bwd("output/dropout", h, h3, h2)
        op("bwd", "output/BiasAddGrad", "col_reduce", nb(h, vec), lambda: torch.sum(h2, 0, out=vec))
        op("bwd", "output/MatMul_grad/MatMul", "matmul", nb(h, Wo, g), lambda: torch.mm(h2, Wo.t(), out=g))
        op("bwd", "output/MatMul_grad/MatMul_1", "matmul", nb(g, h, Wo), lambda: torch.mm(g2.t(), h2, out=dWo))
        # gelu gradient
        op("bwd", "gelu/mul_3_grad/Mul", "ew", 3 * nb(g), lambda: torch.mul(g, g5, out=g3))
        op("bwd", "gelu/mul_3_grad/Mul_1", "ew", 3 * nb(g), lambda: torch.mul(g, g2, out=g4))
        op("bwd", "gelu/mul_2_grad/Mul", "ew_scalar", 2 * nb(g), lambda: torch.mul(g4, 0.5, out=g4))
        op("bwd", "gelu/Tanh_grad/TanhGrad", "ew", 3 * nb(g),
           lambda: torch.ops.aten.tanh_backward(g4, g5, ))
        op("bwd", "gelu/mul_1_grad/Mul", "ew_scalar", 2 * nb(g), lambda: torch.mul(g4, 0.7978845608, out=g4))
        op("bwd", "gelu/mul_grad/Mul", "ew_scalar", 2 * nb(g), lambda: torch.mul(g4, 0.044715, out=g5))
        op("bwd", "gelu/Pow_grad/Pow", "ew_scalar", 2 * nb(g), lambda: torch.pow(g2, 2, out=g))
        op("bwd", "gelu/Pow_grad/mul", "ew_scalar", 2 * nb(g), lambda: torch.mul(g, 3.0, out=g))
        op("bwd", "gelu/Pow_grad/mul_1", "ew", 3 * nb(g), lambda: torch.mul(g5, g, out=g5))
        op("bwd", "gelu/x_grad/AddN", "ew", 4 * nb(g), lambda: g3.add_(g4).add_(g5), kernels=2)
        op("bwd", "intermediate/BiasAddGrad", "col_reduce", nb(g, vff), lambda: torch.sum(g3, 0, out=vff))
        op("bwd", "intermediate/MatMul_grad/MatMul", "matmul", nb(g, Wi, h), lambda: torch.mm(g3, Wi.t(), out=h2))
        op("bwd", "intermediate/MatMul_grad/MatMul_1", "matmul", nb(h, g, Wi), lambda: torch.mm(h.t(), g3, out=dWi))
        op("bwd", "attention_output/LayerNorm_out/AddN", "ew", 3 * nb(h), lambda: h2.add_(h4))
        layer_norm_bwd("attention_output/LayerNorm")
        dropout_bwd("attention_output/dropout", h, h3, h2)
        op("bwd", "attention_output/BiasAddGrad", "col_reduce", nb(h, vec), lambda: torch.sum(h2, 0, out=vec))
        op("bwd", "attention_output/MatMul_grad/MatMul", "matmul", nb(h, W, h), lambda: torch.mm(h2, W.t(), out=h4))
        op("bwd", "attention_output/MatMul_grad/MatMul_1", "matmul", nb(h, h, W), lambda: torch.mm(h3.t(), h2, out=dW))
        op("bwd", "context/transpose_grad", "transpose", 2 * nb(h), lambda: qt.copy_(ctx.permute(0, 2, 1, 3)))
        op("bwd", "context/BatchMatMul_grad/BatchMatMul", "bmm", nb(qt, vt, P),
           lambda: torch.matmul(qt, vt.transpose(-1, -2), out=P2))
        op("bwd", "context/BatchMatMul_grad/BatchMatMul_1", "bmm", nb(P, qt, vt),
           lambda: torch.matmul(P.transpose(-1, -2), qt, out=kt))
        op("bwd", "v/transpose_grad", "transpose", 2 * nb(h), lambda: ctx.copy_(kt.permute(0, 2, 1, 3)))
        op("bwd", "attn_dropout/mul_1_grad/Mul", "ew", 3 * nb(P), lambda: torch.mul(P2, Pm, out=P3))
        op("bwd", "attn_dropout/mul_grad/Mul", "ew_scalar", 2 * nb(P), lambda: torch.mul(P3, 1 / 0.9, out=P3))
        # _SoftmaxGrad: (grad - sum(grad * softmax, -1)) * softmax
        op("bwd", "softmax_grad/mul", "ew", 3 * nb(P), lambda: torch.mul(P3, P, out=P2))
        op("bwd", "softmax_grad/Sum", "row_reduce", nb(P) + nb(P) // S, lambda: torch.sum(P2, -1, keepdim=True))
        op("bwd", "softmax_grad/sub", "ew_bcast", 2 * nb(P) + nb(P) // S, lambda: torch.sub(P3, P3[..., :1], out=P2))
        op("bwd", "softmax_grad/mul_1", "ew", 3 * nb(P), lambda: torch.mul(P2, P, out=P3))
        op("bwd", "scores/Mul_grad/Mul", "ew_scalar", 2 * nb(P), lambda: torch.mul(P3, 0.125, out=P2))
        op("bwd", "scores/BatchMatMul_grad/BatchMatMul", "bmm", nb(P, kt, qt), lambda: torch.matmul(P2, kt, out=qt))
        op("bwd", "scores/BatchMatMul_grad/BatchMatMul_1", "bmm", nb(P, qt, kt),
           lambda: torch.matmul(P2.transpose(-1, -2), qt, out=vt))
        for n in "qk":
            op("bwd", n + "/transpose_grad", "transpose", 2 * nb(h), lambda: ctx.copy_(qt.permute(0, 2, 1, 3)))
        for n in "qkv":
            op("bwd", n + "/BiasAddGrad", "col_reduce", nb(h, vec), lambda: torch.sum(h2, 0, out=vec))
            op("bwd", n + "/MatMul_grad/MatMul", "matmul", nb(h, W, h), lambda: torch.mm(h2, W.t(), out=h4))
            op("bwd", n + "/MatMul_grad/MatMul_1", "matmul", nb(h, h, W), lambda: torch.mm(x.t(), h2, out=dW))
        op("bwd", "layer_input/AddN", "ew", 5 * nb(h), lambda: h2.add_(h3).add_(h4).add_(x), kernels=3)


def kernel_times(trace_path):
    """Per user annotation: summed kernel time (s) and kernel count, from a Chrome trace."""
    ev = json.load(open(trace_path))["traceEvents"]
    ann = sorted((e for e in ev if e.get("cat") == "user_annotation"), key=lambda e: e["ts"])
    kern = {e["args"].get("correlation"): e for e in ev if e.get("cat") == "kernel"}
    out = {}
    import bisect
    starts = [a["ts"] for a in ann]
    for e in ev:
        if e.get("cat") != "cuda_runtime" or "Launch" not in e.get("name", ""):
            continue
        k = kern.get(e["args"].get("correlation"))
        if k is None:
            continue
        i = bisect.bisect_right(starts, e["ts"]) - 1
        while i >= 0 and not (ann[i]["ts"] <= e["ts"] <= ann[i]["ts"] + ann[i]["dur"] and ann[i]["tid"] == e["tid"]):
            i -= 1
        if i < 0:
            continue
        s = out.setdefault(ann[i]["name"], [0.0, 0])
        s[0] += k["dur"] / 1e6
        s[1] += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", default="4,10")
    ap.add_argument("--iters", type=int, default=10)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    rows = []
    for B in [int(x) for x in a.batches.split(",")]:
        L = Layer(B)
        for _ in range(3):
            for o in L.ops:
                o[5]()
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(a.iters):
                for i, o in enumerate(L.ops):
                    with torch.profiler.record_function("op%03d" % i):
                        o[5]()
            torch.cuda.synchronize()
        tp = os.path.join(a.out, "trace_b%d.json" % B)
        prof.export_chrome_trace(tp)
        kt = kernel_times(tp)
        os.remove(tp)
        for i, (phase, name, kind, nbytes, kernels, _) in enumerate(L.ops):
            s, n = kt.get("op%03d" % i, [0.0, 0])
            rows.append((B, phase, name, kind, nbytes, kernels, n / a.iters, s / a.iters))
        print("batch %d done at %.1fs" % (B, time.time() - t0), flush=True)
        del L
        torch.cuda.empty_cache()
    with open(os.path.join(a.out, "ops.csv"), "w") as f:
        f.write("batch,phase,op,kind,bytes,tf_kernels,kernels,kernel_s\n")
        for r in rows:
            f.write("%d,%s,%s,%s,%d,%d,%.2f,%.4e\n" % r)
    env = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
           "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
           "allow_tf32": torch.backends.cuda.matmul.allow_tf32, "iters": a.iters,
           "elapsed_s": time.time() - t0}
    json.dump(env, open(os.path.join(a.out, "env.json"), "w"), indent=1)
    # Summary by kind: bytes over kernel time, as a fraction of the H200's 4.8 TB/s.
    by = {}
    for B, phase, name, kind, nbytes, _, n, s in rows:
        k = by.setdefault((B, kind), [0, 0.0, 0.0])
        k[0] += nbytes
        k[1] += s
        k[2] += n
    for (B, kind), (nbytes, s, n) in sorted(by.items()):
        print("b%-3d %-11s %8.1f MB %8.3f ms %6.1f kernels  %.3f of 4.8 TB/s" % (
            B, kind, nbytes / 1e6, s * 1e3, n, nbytes / s / 4.8e12 if s else 0))


if __name__ == "__main__":
    main()
