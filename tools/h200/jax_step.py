#!/usr/bin/env python3
"""Step times and peak memory of jitted pure-JAX training steps on one GPU.

Stand-in for TensorFlow with jit_compile=True: the same compiler (XLA), one compiled
program per step, no per-op Python overhead. Models follow the Keras layouts gpusim's zoo
builds (models/zoo_cnn.go, models/zoo_nlp.go): ResNet-50 v1 (keras.applications.ResNet50,
NHWC, batch norm in training mode with moving statistics), VGG16 (with its 4096-wide top),
MobileNetV2 (alpha 1.0), BERT-base (sequence 128, pooled classification head, 2 classes,
dropout 0.1) and GPT-2 small (sequence 1024, LM head tied to the token embedding, dropout
0.1). CNNs train with SGD momentum 0.9, the transformers with AdamW, as train's
H200 comparison configures them.

Precisions:
  tf32  float32 params and compute; jax_default_matmul_precision='tensorfloat32' set
        explicitly (TF's default: TF32 on for matmuls and convolutions on Ampere+).
  fp32  the same with 'float32' (full-precision matmuls; TF32 off).
  bf16  Keras mixed_bfloat16: float32 params and optimizer, bfloat16 compute; batch norm,
        layer norm, softmax and the loss in float32 as Keras upcasts them.

Only jax, jax.numpy and jax.lax (no flax/optax). One subprocess per model runs its configs
in order of growing memory (batch ascending, bf16 before float32 at each batch), so that
device.memory_stats()['peak_bytes_in_use'] (a process-lifetime peak) is each config's own
(peak_clean=0 marks one whose peak did not exceed an earlier config's: then only
memory_analysis's figures are its own).

Run on the device machine from the repository root:
    python3 tools/h200/jax_step.py --budget 220 --out $OUT
--quick runs tiny sizes (a smoke test). Writes $OUT/jax_steps.csv (one row per config,
rewritten after each), $OUT/jax_env.json and $OUT/jax_log.txt.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "h200", "jax", "configs.csv")
FIELDS = ["model", "prec", "batch", "size", "optimizer", "step_s", "step_min_s", "step_max_s",
          "pipelined_step_s", "steps", "compile_s", "params", "peak_bytes", "peak_clean",
          "live_bytes_before", "temp_bytes", "argument_bytes", "output_bytes", "alias_bytes",
          "matmul_precision", "prng_impl", "error"]


# ---------------------------------------------------------------- models (run in a child)

def build(jax, jnp, lax, model, size, cdt):
    """Returns init(key) -> (params, bn_state) and apply(params, bn_state, x, rng) ->
    (logits float32, new_bn_state)."""
    f32 = jnp.float32

    def normal(key, shape, std):
        return std * jax.random.normal(key, shape, f32)

    class Keys:
        def __init__(self, key):
            self.key = key

        def __call__(self):
            self.key, k = jax.random.split(self.key)
            return k

    def conv_w(ks, k, cin, cout, groups=1):
        fan_in = k * k * cin // groups
        return normal(ks(), (k, k, cin // groups, cout), (2.0 / fan_in) ** 0.5)

    def conv(x, w, b=None, stride=1, padding="SAME", groups=1):
        y = lax.conv_general_dilated(x, w.astype(cdt), (stride, stride), padding,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=groups)
        if b is not None:
            y = y + b.astype(cdt)
        return y

    def dense(x, p):
        return x @ p["w"].astype(cdt) + p["b"].astype(cdt)

    def dense_p(ks, din, dout):
        return {"w": normal(ks(), (din, dout), (1.0 / din) ** 0.5), "b": jnp.zeros((dout,), f32)}

    def bn(x, p, st, eps, out):
        # Keras BatchNormalization(training=True): batch statistics in float32, moving
        # statistics updated (momentum 0.99; MobileNetV2 uses 0.999).
        xf = x.astype(f32)
        mean = jnp.mean(xf, axis=(0, 1, 2))
        var = jnp.mean(jnp.square(xf - mean), axis=(0, 1, 2))
        y = (xf - mean) * lax.rsqrt(var + eps) * p["g"] + p["b"]
        m = st["momentum"]
        out.append({"mean": m * st["mean"] + (1 - m) * lax.stop_gradient(mean),
                    "var": m * st["var"] + (1 - m) * lax.stop_gradient(var), "momentum": m})
        return y.astype(cdt)

    def bn_p(c, momentum=0.99):
        return ({"g": jnp.ones((c,), f32), "b": jnp.zeros((c,), f32)},
                {"mean": jnp.zeros((c,), f32), "var": jnp.ones((c,), f32), "momentum": jnp.asarray(momentum, f32)})

    def maxpool(x, k, s, padding="VALID"):
        # The init value must be a concrete -inf (a Python float, as flax.linen.max_pool and
        # Keras's JAX backend pass): only then does lax.reduce_window take its monoid path
        # (jax/_src/lax/windowed_reductions.py, _get_monoid_window_reducer: core.is_concrete)
        # to reduce_window_max, which has a transpose rule. jnp.asarray(-inf) inside jit is a
        # tracer, so it built the generic reduce_window, whose JVP reduces primal and tangent
        # together; jax.grad then failed with "Linearization failed to produce known values
        # for all output primals" (ResNet-50 on the H200, testdata/h200/jax/log.txt).
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, k, k, 1), (1, s, s, 1), padding)

    def layer_norm(x, p, eps):
        xf = x.astype(f32)
        mean = jnp.mean(xf, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(xf - mean), axis=-1, keepdims=True)
        return ((xf - mean) * lax.rsqrt(var + eps) * p["g"] + p["b"]).astype(cdt)

    def ln_p(d):
        return {"g": jnp.ones((d,), f32), "b": jnp.zeros((d,), f32)}

    def dropout(x, rng, rate):
        keep = jax.random.bernoulli(rng, 1.0 - rate, x.shape)
        return jnp.where(keep, x / jnp.asarray(1.0 - rate, x.dtype), jnp.zeros((), x.dtype))

    if model == "resnet50":
        eps = 1.001e-5
        stacks = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]

        def init(key):
            ks = Keys(key)
            P, S = {"conv1": {"w": conv_w(ks, 7, 3, 64), "b": jnp.zeros((64,), f32)}}, {}
            P["bn1"], S["bn1"] = bn_p(64)
            cin = 64
            for si, (f, n, _) in enumerate(stacks):
                for bi in range(n):
                    name = "s%d_b%d" % (si, bi)
                    blk, bst = {}, {}
                    if bi == 0:
                        blk["sc"] = {"w": conv_w(ks, 1, cin, 4 * f), "b": jnp.zeros((4 * f,), f32)}
                        blk["sc_bn"], bst["sc_bn"] = bn_p(4 * f)
                    for ci, (k, a, o) in enumerate([(1, cin, f), (3, f, f), (1, f, 4 * f)]):
                        blk["c%d" % ci] = {"w": conv_w(ks, k, a, o), "b": jnp.zeros((o,), f32)}
                        blk["bn%d" % ci], bst["bn%d" % ci] = bn_p(o)
                    P[name], S[name] = blk, bst
                    cin = 4 * f
            P["fc"] = dense_p(ks, 2048, 1000)
            return P, S

        def apply(P, S, x, rng):
            out, new = [], {}
            x = jnp.pad(x, ((0, 0), (3, 3), (3, 3), (0, 0)))
            x = conv(x, P["conv1"]["w"], P["conv1"]["b"], 2, "VALID")
            x = jax.nn.relu(bn(x, P["bn1"], S["bn1"], eps, out))
            new["bn1"] = out.pop()
            x = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
            x = maxpool(x, 3, 2)
            for si, (f, n, stride) in enumerate(stacks):
                for bi in range(n):
                    name = "s%d_b%d" % (si, bi)
                    p, st, ns = P[name], S[name], {}
                    s = stride if bi == 0 else 1
                    if bi == 0:
                        sc = bn(conv(x, p["sc"]["w"], p["sc"]["b"], s), p["sc_bn"], st["sc_bn"], eps, out)
                        ns["sc_bn"] = out.pop()
                    else:
                        sc = x
                    y = x
                    for ci, cs in enumerate([s, 1, 1]):
                        y = bn(conv(y, p["c%d" % ci]["w"], p["c%d" % ci]["b"], cs), p["bn%d" % ci], st["bn%d" % ci], eps, out)
                        ns["bn%d" % ci] = out.pop()
                        if ci < 2:
                            y = jax.nn.relu(y)
                    x = jax.nn.relu(sc + y)
                    new[name] = ns
            x = jnp.mean(x, axis=(1, 2))
            return dense(x, P["fc"]).astype(f32), new

        def inputs(key, b):
            return jax.random.normal(key, (b, size, size, 3), f32), jax.random.randint(key, (b,), 0, 1000)
        return init, apply, inputs

    if model == "vgg16":
        cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]

        def init(key):
            ks = Keys(key)
            P, cin = {"convs": []}, 3
            for v in cfg:
                if v != "M":
                    P["convs"].append({"w": conv_w(ks, 3, cin, v), "b": jnp.zeros((v,), f32)})
                    cin = v
            s = size // 32
            P["fc1"], P["fc2"], P["fc3"] = dense_p(ks, s * s * 512, 4096), dense_p(ks, 4096, 4096), dense_p(ks, 4096, 1000)
            return P, {}

        def apply(P, S, x, rng):
            i = 0
            x = x.astype(cdt)
            for v in cfg:
                if v == "M":
                    x = maxpool(x, 2, 2)
                else:
                    x = jax.nn.relu(conv(x, P["convs"][i]["w"], P["convs"][i]["b"]))
                    i += 1
            x = x.reshape((x.shape[0], -1))
            x = jax.nn.relu(dense(x, P["fc1"]))
            x = jax.nn.relu(dense(x, P["fc2"]))
            return dense(x, P["fc3"]).astype(f32), {}

        def inputs(key, b):
            return jax.random.normal(key, (b, size, size, 3), f32), jax.random.randint(key, (b,), 0, 1000)
        return init, apply, inputs

    if model == "mobilenetv2":
        eps = 1e-3
        # keras.applications.MobileNetV2 alpha 1.0: (expansion, filters, repeats, stride).
        spec = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

        def blocks():
            cin = 32
            for t, c, n, s in spec:
                for i in range(n):
                    yield t, cin, c, (s if i == 0 else 1)
                    cin = c

        def init(key):
            ks = Keys(key)
            P, S = {"stem": conv_w(ks, 3, 3, 32)}, {}
            P["stem_bn"], S["stem_bn"] = bn_p(32, 0.999)
            P["blocks"], S["blocks"] = [], []
            for t, cin, c, s in blocks():
                p, st = {}, {}
                h = cin * t
                if t != 1:
                    p["expand"] = conv_w(ks, 1, cin, h)
                    p["expand_bn"], st["expand_bn"] = bn_p(h, 0.999)
                p["dw"] = conv_w(ks, 3, h, h, groups=h)
                p["dw_bn"], st["dw_bn"] = bn_p(h, 0.999)
                p["project"] = conv_w(ks, 1, h, c)
                p["project_bn"], st["project_bn"] = bn_p(c, 0.999)
                P["blocks"].append(p)
                S["blocks"].append(st)
            P["head"] = conv_w(ks, 1, 320, 1280)
            P["head_bn"], S["head_bn"] = bn_p(1280, 0.999)
            P["fc"] = dense_p(ks, 1280, 1000)
            return P, S

        def apply(P, S, x, rng):
            out, new = [], {"blocks": []}
            relu6 = lambda v: jnp.clip(v, 0, 6)
            x = relu6(bn(conv(x, P["stem"], None, 2), P["stem_bn"], S["stem_bn"], eps, out))
            new["stem_bn"] = out.pop()
            for (t, cin, c, s), p, st in zip(blocks(), P["blocks"], S["blocks"]):
                ns, y = {}, x
                if t != 1:
                    y = relu6(bn(conv(y, p["expand"]), p["expand_bn"], st["expand_bn"], eps, out))
                    ns["expand_bn"] = out.pop()
                y = relu6(bn(conv(y, p["dw"], None, s, "SAME", groups=y.shape[-1]), p["dw_bn"], st["dw_bn"], eps, out))
                ns["dw_bn"] = out.pop()
                y = bn(conv(y, p["project"]), p["project_bn"], st["project_bn"], eps, out)
                ns["project_bn"] = out.pop()
                x = x + y if (s == 1 and cin == c) else y
                new["blocks"].append(ns)
            x = relu6(bn(conv(x, P["head"]), P["head_bn"], S["head_bn"], eps, out))
            new["head_bn"] = out.pop()
            x = jnp.mean(x, axis=(1, 2))
            return dense(x, P["fc"]).astype(f32), new

        def inputs(key, b):
            return jax.random.normal(key, (b, size, size, 3), f32), jax.random.randint(key, (b,), 0, 1000)
        return init, apply, inputs

    if model in ("bert-base", "gpt2"):
        bert = model == "bert-base"
        d, heads, layers, seq = 768, 12, 12, size
        vocab, npos = (30522, 512) if bert else (50257, 1024)
        eps = 1e-12 if bert else 1e-5
        rate = 0.1

        def init(key):
            ks = Keys(key)
            P = {"tok": normal(ks(), (vocab, d), 0.02), "pos": normal(ks(), (npos, d), 0.02), "layers": []}
            if bert:
                P["seg"] = normal(ks(), (2, d), 0.02)
                P["emb_ln"] = ln_p(d)
            for _ in range(layers):
                P["layers"].append({"q": dense_p(ks, d, d), "k": dense_p(ks, d, d), "v": dense_p(ks, d, d),
                                    "o": dense_p(ks, d, d), "ln1": ln_p(d), "ln2": ln_p(d),
                                    "ff1": dense_p(ks, d, 4 * d), "ff2": dense_p(ks, 4 * d, d)})
            if bert:
                P["pool"], P["cls"] = dense_p(ks, d, d), dense_p(ks, d, 2)
            else:
                P["ln_f"] = ln_p(d)
            return P, {}

        def attention(x, p, rng):
            b = x.shape[0]
            split = lambda t: t.reshape((b, seq, heads, d // heads))
            q, k, v = split(dense(x, p["q"])), split(dense(x, p["k"])), split(dense(x, p["v"]))
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.asarray((d // heads) ** 0.5, cdt)
            s = s.astype(f32)
            if not bert:
                causal = jnp.tril(jnp.ones((seq, seq), bool))
                s = jnp.where(causal, s, jnp.asarray(-1e9, f32))
            a = jax.nn.softmax(s, axis=-1).astype(cdt)
            a = dropout(a, rng, rate)
            y = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape((b, seq, d))
            return dense(y, p["o"])

        def apply(P, S, x, rng):
            ids = x
            rngs = jax.random.split(rng, 3 * layers + 2)
            h = jnp.take(P["tok"], ids, axis=0) + P["pos"][:seq][None]
            if bert:
                h = h + P["seg"][0][None, None]  # segment ids all zero
                h = layer_norm(h, P["emb_ln"], eps)
            h = dropout(h.astype(cdt), rngs[0], rate)
            for i, p in enumerate(P["layers"]):
                r = rngs[1 + 3 * i: 4 + 3 * i]
                if bert:  # post-norm
                    h = layer_norm(h + dropout(attention(h, p, r[0]), r[1], rate), p["ln1"], eps)
                    y = dense(jax.nn.gelu(dense(h, p["ff1"]), approximate=False), p["ff2"])
                    h = layer_norm(h + dropout(y, r[2], rate), p["ln2"], eps)
                else:  # pre-norm
                    h = h + dropout(attention(layer_norm(h, p["ln1"], eps), p, r[0]), r[1], rate)
                    y = dense(jax.nn.gelu(dense(layer_norm(h, p["ln2"], eps), p["ff1"]), approximate=True), p["ff2"])
                    h = h + dropout(y, r[2], rate)
            if bert:
                c = jnp.tanh(dense(h[:, 0], P["pool"]))
                c = dropout(c, rngs[-1], rate)
                return dense(c, P["cls"]).astype(f32), {}
            h = layer_norm(h, P["ln_f"], eps)
            return (h @ P["tok"].astype(cdt).T).astype(f32), {}

        def inputs(key, b):
            ids = jax.random.randint(key, (b, seq), 0, vocab)
            labels = jax.random.randint(key, (b,), 0, 2) if bert else jax.random.randint(key, (b, seq), 0, vocab)
            return ids, labels
        return init, apply, inputs

    raise ValueError("unknown model %r" % model)


def run_one(jax, jnp, lax, row, steps, warmup):
    """Builds, compiles and times one config; returns the result fields."""
    f32 = jnp.float32
    model, prec, batch, size, opt = row["model"], row["prec"], int(row["batch"]), int(row["size"]), row["optimizer"]
    cdt = jnp.bfloat16 if prec == "bf16" else f32
    matmul = {"tf32": "tensorfloat32", "fp32": "float32", "bf16": "tensorfloat32"}[prec]
    init, apply, make_inputs = build(jax, jnp, lax, model, size, cdt)
    mkkey = getattr(jax.random, "PRNGKey", None) or jax.random.key  # legacy raw keys where present
    key = mkkey(0)
    params, bn_state = init(key)
    x, labels = make_inputs(mkkey(1), batch)
    if model not in ("bert-base", "gpt2"):
        x = x.astype(cdt)
    if opt == "momentum":
        opt_state = jax.tree_util.tree_map(jnp.zeros_like, params)
    else:
        opt_state = (jax.tree_util.tree_map(jnp.zeros_like, params), jax.tree_util.tree_map(jnp.zeros_like, params),
                     jnp.zeros((), f32))

    def loss_fn(p, st, x, y, rng):
        logits, new_st = apply(p, st, x, rng)
        logp = jax.nn.log_softmax(logits, axis=-1)
        nll = -jnp.take_along_axis(logp, y[..., None], axis=-1)
        return jnp.mean(nll), new_st

    def step(p, o, st, rng, x, y):
        rng, sub = jax.random.split(rng)
        (loss, new_st), g = jax.value_and_grad(loss_fn, has_aux=True)(p, st, x, y, sub)
        if opt == "momentum":  # keras.optimizers.SGD(0.01, momentum=0.9)
            o = jax.tree_util.tree_map(lambda v, gi: 0.9 * v - 0.01 * gi, o, g)
            p = jax.tree_util.tree_map(lambda w, v: w + v, p, o)
        else:  # keras.optimizers.AdamW(1e-4, weight_decay=0.004)
            m, v, t = o
            t = t + 1
            m = jax.tree_util.tree_map(lambda a, gi: 0.9 * a + 0.1 * gi, m, g)
            v = jax.tree_util.tree_map(lambda a, gi: 0.999 * a + 0.001 * gi * gi, v, g)
            lr = 1e-4 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            p = jax.tree_util.tree_map(lambda w, a, b: w - 1e-4 * 0.004 * w - lr * a / (jnp.sqrt(b) + 1e-7), p, m, v)
            o = (m, v, t)
        return p, o, new_st, rng, loss

    live = sum(a.nbytes for a in jax.live_arrays())
    rng = mkkey(2)
    t0 = time.perf_counter()
    with jax.default_matmul_precision(matmul):
        compiled = jax.jit(step, donate_argnums=(0, 1, 2, 3)).lower(params, opt_state, bn_state, rng, x, labels).compile()
    compile_s = time.perf_counter() - t0
    mem = {}
    try:
        ma = compiled.memory_analysis()
        mem = {"temp_bytes": ma.temp_size_in_bytes, "argument_bytes": ma.argument_size_in_bytes,
               "output_bytes": ma.output_size_in_bytes, "alias_bytes": ma.alias_size_in_bytes}
    except Exception as e:  # memory_analysis is optional per backend
        print("memory_analysis: %r" % e, flush=True)
    state = (params, opt_state, bn_state, rng)
    for _ in range(warmup):
        *state, loss = compiled(*state, x, labels)
        loss.block_until_ready()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        *state, loss = compiled(*state, x, labels)
        jax.block_until_ready((state, loss))
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(steps):
        *state, loss = compiled(*state, x, labels)
    jax.block_until_ready((state, loss))
    pipelined = (time.perf_counter() - t) / steps
    if not bool(jnp.isfinite(loss)):
        print("%s %s %d: loss is not finite (%r); timing kept" % (model, prec, batch, float(loss)), flush=True)
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    nparams = sum(a.size for a in jax.tree_util.tree_leaves(state[0]))
    stats = jax.devices()[0].memory_stats() or {}
    out = dict(step_s=median, step_min_s=times[0], step_max_s=times[-1], pipelined_step_s=pipelined, steps=n,
               compile_s=compile_s, params=nparams, peak_bytes=stats.get("peak_bytes_in_use", -1),
               live_bytes_before=live, matmul_precision=matmul, **mem)
    del state, compiled, params, opt_state, bn_state, x, labels, loss
    return out


def child(args):
    """Runs one model's configs in this process, in order of growing memory."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    prng = "threefry2x32"
    try:  # XLA's RngBitGenerator (Philox on GPU), as TF's stateless dropout uses Philox
        jax.config.update("jax_default_prng_impl", "rbg")
        prng = "rbg"
    except Exception as e:
        print("prng rbg unavailable: %r" % e, flush=True)
    try:
        import jaxlib
        print("ENV " + json.dumps({"jax": jax.__version__, "jaxlib": jaxlib.__version__, "prng_impl": prng,
                                   "devices": [str(d) for d in jax.devices()],
                                   "device_kind": jax.devices()[0].device_kind}), flush=True)
    except Exception as e:
        print("ENV " + json.dumps({"error": repr(e)}), flush=True)
    rows = json.loads(args.child)
    rows.sort(key=lambda r: (int(r["batch"]), r["prec"] != "bf16"))
    last_peak = 0
    for r in rows:
        res = dict(r)
        try:
            res.update(run_one(jax, jnp, lax, r, args.steps, args.warmup))
            res["peak_clean"] = int(last_peak == 0 or res["peak_bytes"] > last_peak)
            last_peak = max(last_peak, res["peak_bytes"])
        except Exception as e:
            res["error"] = ("%s: %s" % (type(e).__name__, e))[:300].replace("\n", " ")
        res["prng_impl"] = prng
        print("RESULT " + json.dumps(res), flush=True)
        for a in jax.live_arrays():
            a.delete()
        jax.clear_caches()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--budget", type=float, default=220, help="seconds for the whole run")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--configs", default=CONFIGS)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    os.makedirs(args.out, exist_ok=True)
    with open(args.configs) as f:
        rows = list(csv.DictReader(f))
    if args.quick:
        for r in rows:
            r["batch"] = str(max(1, int(r["batch"]) // 16))
            r["size"] = "64" if r["model"] in ("bert-base", "gpt2") else "32"
    groups = []
    for r in rows:  # one group per model, in file order
        if not groups or groups[-1][0]["model"] != r["model"]:
            groups.append([])
        groups[-1].append(r)
    start = time.time()
    log = open(os.path.join(args.out, "jax_log.txt"), "w")
    results, envj = [], {}
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    for g in groups:
        left = args.budget - (time.time() - start)
        if left < 20:
            log.write("budget spent: skipped %s\n" % g[0]["model"])
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(g),
               "--steps", str(args.steps), "--warmup", str(args.warmup)]
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=left, env=env)
            text, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            text, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
        log.write("== %s rc=%s %.1fs\n%s\n" % (g[0]["model"], rc, time.time() - t, text[-6000:]))
        log.flush()
        for line in text.splitlines():
            if line.startswith("ENV ") and not envj:
                envj = json.loads(line[4:])
            if line.startswith("RESULT "):
                results.append(json.loads(line[7:]))
        with open(os.path.join(args.out, "jax_steps.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in results:
                w.writerow(r)
        print("%s: %d rows so far, %.0fs" % (g[0]["model"], len(results), time.time() - start), flush=True)
    envj.update(budget_s=args.budget, steps=args.steps, warmup=args.warmup, quick=args.quick,
                wall_s=time.time() - start, date_utc=time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()))
    with open(os.path.join(args.out, "jax_env.json"), "w") as f:
        json.dump(envj, f, indent=1)
    log.close()


if __name__ == "__main__":
    main()
