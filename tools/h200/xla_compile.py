#!/usr/bin/env python3
"""Measure XLA compile time on one GPU with JAX: jax.jit(step).lower(args).compile().

For training steps (forward, grad, SGD update) of models of different sizes (MLPs, ResNet-like
CNNs, Transformer encoders of growing depth) it writes one row per compile to
$OUT/xla_compile.csv:

    model,batch,jaxpr_eqns,hlo_ops,compiled_hlo_ops,lower_s,compile_s,recompile

jaxpr_eqns counts the step's framework-level ops (jax.make_jaxpr, nested jaxprs included),
hlo_ops the instructions of the lowered StableHLO, compiled_hlo_ops those of the optimized HLO.
recompile=1 rows compile the same function again for a new batch size (a new input shape
is a new XLA cluster signature: a full compile, no cache hit); recompile=0 rows are the first
compile. Everything runs within --budget seconds (later configs are skipped, logged).

Run on the device machine: python3 tools/h200/xla_compile.py --budget 150 --out $OUT
"""
import argparse
import csv
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--budget", type=float, default=150)
p.add_argument("--quick", action="store_true")
a = p.parse_args()
T0 = time.time()
os.makedirs(a.out, exist_ok=True)
log = open(os.path.join(a.out, "xla_log.txt"), "w")


def say(*xs):
    s = " ".join(str(x) for x in xs)
    print(s, flush=True)
    log.write(s + "\n")
    log.flush()


import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

say("jax", jax.__version__, "devices", jax.devices(), "import+init %.1fs" % (time.time() - T0))
env = {"jax": jax.__version__, "devices": [str(d) for d in jax.devices()]}
try:
    import jaxlib

    env["jaxlib"] = jaxlib.__version__
except Exception as e:  # noqa: BLE001
    env["jaxlib_error"] = str(e)
json.dump(env, open(os.path.join(a.out, "xla_env.json"), "w"), indent=1)


def count_eqns(jaxpr):
    n = 0
    for e in jaxpr.eqns:
        n += 1
        for v in e.params.values():
            for sub in (v if isinstance(v, (list, tuple)) else [v]):
                if hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    n += count_eqns(sub.jaxpr)
                elif hasattr(sub, "eqns"):
                    n += count_eqns(sub)
    return n


def count_hlo(text):
    return sum(1 for ln in text.splitlines() if " = " in ln and not ln.lstrip().startswith(("//", "#")))


key = jax.random.PRNGKey(0)


def dense(k, i, o):
    return {"w": jax.random.normal(k, (i, o), jnp.float32) * 0.02, "b": jnp.zeros((o,), jnp.float32)}


def mlp(depth, width=1024):
    ks = jax.random.split(key, depth + 1)
    params = [dense(ks[i], width, width) for i in range(depth)]

    def fwd(ps, x):
        for l in ps:
            x = jax.nn.relu(x @ l["w"] + l["b"])
        return x

    return params, fwd, lambda b: jnp.ones((b, width), jnp.float32)


def conv(x, w, s=1):
    return jax.lax.conv_general_dilated(x, w, (s, s), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def bn(x, g, b):
    m = x.mean(axis=(0, 1, 2))
    v = x.var(axis=(0, 1, 2))
    return (x - m) * jax.lax.rsqrt(v + 1e-3) * g + b


def cnn(blocks, ch=64):
    ks = iter(jax.random.split(key, 4 * blocks + 4))
    params = {"stem": jax.random.normal(next(ks), (7, 7, 3, ch)) * 0.05, "blocks": []}
    for _ in range(blocks):
        params["blocks"].append({
            "w1": jax.random.normal(next(ks), (1, 1, ch, ch)) * 0.05,
            "w2": jax.random.normal(next(ks), (3, 3, ch, ch)) * 0.05,
            "w3": jax.random.normal(next(ks), (1, 1, ch, ch)) * 0.05,
            "g": jnp.ones((3, ch)), "b": jnp.zeros((3, ch)),
        })
    params["fc"] = dense(next(ks), ch, 1000)

    def fwd(ps, x):
        x = jax.nn.relu(conv(x, ps["stem"], 2))
        for bp in ps["blocks"]:
            y = jax.nn.relu(bn(conv(x, bp["w1"]), bp["g"][0], bp["b"][0]))
            y = jax.nn.relu(bn(conv(y, bp["w2"]), bp["g"][1], bp["b"][1]))
            y = bn(conv(y, bp["w3"]), bp["g"][2], bp["b"][2])
            x = jax.nn.relu(x + y)
        return x.mean(axis=(1, 2)) @ ps["fc"]["w"] + ps["fc"]["b"]

    return params, fwd, lambda b: jnp.ones((b, 64, 64, 3), jnp.float32)


def ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def transformer(layers, d=768, heads=12, seq=128):
    ks = iter(jax.random.split(key, 6 * layers + 2))
    params = []
    for _ in range(layers):
        params.append({"qkv": dense(next(ks), d, 3 * d), "o": dense(next(ks), d, d),
                       "f1": dense(next(ks), d, 4 * d), "f2": dense(next(ks), 4 * d, d),
                       "g": jnp.ones((2, d)), "b": jnp.zeros((2, d))})

    def fwd(ps, x):
        B = x.shape[0]
        for l in ps:
            qkv = x @ l["qkv"]["w"] + l["qkv"]["b"]
            q, k, v = jnp.split(qkv.reshape(B, seq, 3, heads, d // heads), 3, axis=2)
            q, k, v = q[:, :, 0], k[:, :, 0], v[:, :, 0]
            att = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0, axis=-1)
            o = jnp.einsum("bhqk,bkhd->bqhd", att, v).reshape(B, seq, d)
            x = ln(x + o @ l["o"]["w"] + l["o"]["b"], l["g"][0], l["b"][0])
            h = jax.nn.gelu(x @ l["f1"]["w"] + l["f1"]["b"])
            x = ln(x + h @ l["f2"]["w"] + l["f2"]["b"], l["g"][1], l["b"][1])
        return x

    return params, fwd, lambda b: jnp.ones((b, seq, d), jnp.float32)


def step_fn(fwd):
    def loss(ps, x):
        return jnp.mean(fwd(ps, x) ** 2)

    def step(ps, x):
        l, g = jax.value_and_grad(loss)(ps, x)
        return jax.tree_util.tree_map(lambda p, q: p - 0.01 * q, ps, g), l

    return step


configs = [("mlp", 2), ("mlp", 8), ("cnn", 2), ("transformer", 1), ("mlp", 32), ("cnn", 8),
           ("transformer", 4), ("cnn", 16), ("transformer", 12), ("cnn", 32), ("mlp", 128),
           ("transformer", 24)]
if a.quick:
    configs = [("mlp", 2), ("cnn", 1), ("transformer", 1)]
builders = {"mlp": mlp, "cnn": cnn, "transformer": transformer}
rows = []
w = csv.writer(open(os.path.join(a.out, "xla_compile.csv"), "w", newline=""))
w.writerow(["model", "depth", "batch", "jaxpr_eqns", "hlo_ops", "compiled_hlo_ops", "lower_s", "compile_s", "recompile"])
for i, (name, depth) in enumerate(configs):
    if time.time() - T0 > a.budget:
        say("budget spent: skipped", configs[i:])
        break
    params, fwd, mk = builders[name](depth)
    step = jax.jit(step_fn(fwd))
    for j, batch in enumerate([8, 16] if (i % 3 == 0 or a.quick) else [8]):
        if time.time() - T0 > a.budget:
            break
        x = mk(batch)
        n = count_eqns(jax.make_jaxpr(step_fn(fwd))(params, x).jaxpr)
        t = time.perf_counter()
        lowered = step.lower(params, x)
        tl = time.perf_counter() - t
        t = time.perf_counter()
        compiled = lowered.compile()
        tc = time.perf_counter() - t
        h = count_hlo(lowered.as_text())
        try:
            ch = count_hlo(compiled.as_text())
        except Exception:  # noqa: BLE001
            ch = -1
        if j == 0:
            out = compiled(params, x)
            jax.block_until_ready(out)
        w.writerow([name, depth, batch, n, h, ch, "%.4f" % tl, "%.4f" % tc, j])
        say("%s depth %d batch %d: eqns %d hlo %d compiled %d lower %.3fs compile %.3fs recompile %d (t=%.0fs)"
            % (name, depth, batch, n, h, ch, tl, tc, j, time.time() - T0))
say("done in %.1fs" % (time.time() - T0))
