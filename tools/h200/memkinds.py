#!/usr/bin/env python3
"""Memory-bound kernels by kind under JAX/XLA on one GPU, and where Keras train steps spend it.

Ground truth for hw's per-kind memory efficiencies (testdata/h200/memkinds/README.md says how the
committed recordings were made). Two parts, each writing CSV rows as it goes:

  micro   XLA-compiled micro-benchmarks, one jitted function per row: element-wise ops (one op;
          a chain of eight fused into one kernel; the same eight kept apart by optimization
          barriers), casts, reductions (all, column as batch norm reduces NHWC, row), Keras-style
          batch norm (training forward; forward with the backward) at ResNet-50 and MobileNetV2
          NHWC shapes in float32, bfloat16 and float16, depthwise convolutions (forward; input and
          filter gradients) at MobileNetV2 and EfficientNetB0 shapes, SGD-momentum and Adam
          updates over ResNet-50's 25.6M parameters (one array; the 214 arrays of the Keras
          model). Each row: wall time per call of back-to-back calls (device_s) and, from a JAX
          profiler trace of a few calls, the kernels' own device time per call (kernel_s,
          kernels): the latter is what the cost model prices.
  keras   real Keras 3 train steps (the same compiled train_function keras_fit.py times) under
          the JAX profiler: per kernel name and the HLO op that launched it, count and device
          time over the traced steps (keras_kernels.csv),
          and the step's host-side call time, pipelined and synchronised step times and the
          number of state arrays (keras_steps.csv).

  dw7     only the 7x7 depthwise convolutions at ConvNeXtTiny's shapes (forward, input
          gradient, filter gradient apart), into the same micro.csv and micro_kernels.csv
          (testdata/h200/profiles/README.md).

Usage: python3 tools/h200/memkinds.py [--parts micro,keras,dw7] [--budget S] [--out DIR] [--quick]
(keras needs KERAS_SRC and OPTREE_SITE on PYTHONPATH, as keras_fit.py; KERAS_BACKEND=jax).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time
import traceback

from h200lib import RunLog

T0 = time.time()


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", nargs="?", default="plan")
    ap.add_argument("--parts", default="micro,keras")
    ap.add_argument("--budget", type=float, default=420.0)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/memkinds"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default="mobilenetv2:float32:128,efficientnetb0:float32:128,"
                                        "resnet50:float32:128,resnet50:mixed_bfloat16:128")
    ap.add_argument("--child", default="")
    return ap.parse_args()


A = parse()
RL = RunLog(A.out, A.budget, T0)
log, left = RL.log, RL.left


class Writer:
    def __init__(self, name, cols):
        self.path = os.path.join(A.out, name)
        self.cols = cols
        self.new = not os.path.exists(self.path)

    def row(self, **kw):
        with open(self.path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.cols, extrasaction="ignore")
            if self.new:
                w.writeheader()
                self.new = False
            w.writerow({k: kw.get(k, "") for k in self.cols})


# ---------------------------------------------------------------- profiler trace parsing

def trace_kernels(fn_run, tag):
    """Runs fn_run() under jax.profiler.trace and returns the GPU kernel events as
    (module, line, name, start_ns, dur_ns, hlo_op) tuples; module is the enclosing XLA module
    event (from the "XLA Modules" line, or the event's hlo_module stat) or ""; hlo_op is the
    event's hlo_op stat, else the "XLA Ops" event it lies in (the HLO instruction that launched
    it: a fusion's or a library call's name in the optimized HLO), or ""."""
    import bisect
    import jax
    d = "/tmp/memkinds_trace_%s" % tag
    subprocess.run(["rm", "-rf", d])
    with jax.profiler.trace(d):
        fn_run()
    paths = []
    for root, _, files in os.walk(d):
        paths += [os.path.join(root, f) for f in files if f.endswith(".xplane.pb")]
    if not paths:
        raise RuntimeError("no xplane.pb under " + d)
    with open(paths[0], "rb") as f:
        pd = jax.profiler.ProfileData.from_serialized_xspace(f.read())
    out = []
    for plane in pd.planes:
        if not plane.name.startswith("/device:GPU"):
            continue
        mods, ops, evs = [], [], []
        for line in plane.lines:
            for e in line.events:
                item = (line.name, e.name, int(e.start_ns), int(e.duration_ns))
                if line.name == "XLA Modules":
                    mods.append(item)
                elif line.name == "XLA Ops":
                    ops.append((int(e.start_ns), int(e.duration_ns), e.name))
                else:
                    st = {}
                    try:
                        st = {k: v for k, v in e.stats}
                    except Exception:
                        pass
                    evs.append(item + (str(st.get("hlo_module", "")), str(st.get("hlo_op", ""))))
        mods.sort(key=lambda m: m[2])
        ops.sort()
        starts = [o[0] for o in ops]
        for ln, name, s, du, hm, op in evs:
            mod = hm
            if not mod:
                for _, mn, ms, md in mods:
                    if ms <= s and s + du <= ms + md + 1000:
                        mod = mn
                        break
            if not op and ops:
                i = bisect.bisect_right(starts, s) - 1
                if i >= 0 and s + du <= ops[i][0] + ops[i][1] + 1000:
                    op = ops[i][2]
            out.append((mod, ln, name, s, du, op))
    subprocess.run(["rm", "-rf", d])
    return out


def kernel_lines(events):
    """The line names that hold kernels: stream lines ("Stream #..."), else all but XLA Ops."""
    names = {e[1] for e in events}
    streams = {n for n in names if n.startswith("Stream")}
    return streams or (names - {"XLA Ops", "XLA Modules"})


# ---------------------------------------------------------------- micro-benchmarks

MICRO_COLS = ["bench", "kind", "dtype", "shape", "elements", "bytes", "flops", "calls",
              "device_s", "kernel_s", "kernels", "kernel_names", "note"]


def micro():
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax

    W = Writer("micro.csv", MICRO_COLS)
    KW = Writer("micro_kernels.csv", ["bench", "dtype", "shape", "line", "kernel", "count",
                                      "total_ns", "calls"])
    DT = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}
    SZ = {"float32": 4, "bfloat16": 2, "float16": 2}
    key = jax.random.PRNGKey(0)
    q = A.quick
    pending = []  # (bench meta, jitted fn, args) awaiting the profiler pass

    def rnd(shape, dt):
        return jax.random.normal(key, shape, jnp.float32).astype(DT[dt])

    def time_fn(f, args, donate=False):
        """Wall time per call of back-to-back calls (the GPU's time when it is longer than
        dispatch), after 3 warm-ups; for donating functions the outputs feed the next call."""
        out = None
        a = args
        for _ in range(3):
            out = f(*a)
            if donate:
                a = out if isinstance(out, tuple) else (out,)
        jax.block_until_ready(out)
        t = time.perf_counter()
        out = f(*a)
        if donate:
            a = out if isinstance(out, tuple) else (out,)
        jax.block_until_ready(out)
        one = time.perf_counter() - t
        n = int(min(200, max(5, 0.05 / max(one, 1e-6))))
        if q:
            n = 3
        t = time.perf_counter()
        for _ in range(n):
            out = f(*a)
            if donate:
                a = out if isinstance(out, tuple) else (out,)
        jax.block_until_ready(out)
        return (time.perf_counter() - t) / n, n, a

    def bench(name, kind, dt, shape, nbytes, flops, f, args, note="", donate=False):
        if left() < 20:
            return
        try:
            fname = ("%s_%s_%s" % (name, dt, "x".join(str(s) for s in shape))).replace("-", "_")
            f.__name__ = fname
            jf = jax.jit(f, donate_argnums=tuple(range(len(args))) if donate else ())
            sec, n, args2 = time_fn(jf, args, donate)
            meta = dict(bench=name, kind=kind, dtype=dt, shape="x".join(str(s) for s in shape),
                        elements=int(np.prod(shape)), bytes=int(nbytes), flops=int(flops),
                        calls=n, device_s="%.4e" % sec, note=note)
            pending.append((meta, jf, args2, donate, fname))
            if len(pending) >= 24:
                flush()
        except Exception as e:
            log("bench", name, dt, shape, "failed:", repr(e)[:300])

    def flush():
        """One profiler trace over the pending benches: each runs R calls; the kernels of its
        module give kernel_s (device time per call) and kernels (per call)."""
        if not pending:
            return
        R = 5
        state = {}

        def run():
            for i, (meta, jf, args, donate, fname) in enumerate(pending):
                a = args
                out = None
                for _ in range(R):
                    out = jf(*a)
                    if donate:
                        a = out if isinstance(out, tuple) else (out,)
                jax.block_until_ready(out)
                state[i] = a
        evs = []
        try:
            evs = trace_kernels(run, "micro")
        except Exception as e:
            log("trace failed:", repr(e)[:300])
        lines = kernel_lines(evs) if evs else set()
        for meta, jf, args, donate, fname in pending:
            mine = [e for e in evs if e[1] in lines and
                    e[0].split("(")[0].strip() in ("jit_" + fname, fname)]
            agg = {}
            for mod, ln, name, s, du, _ in mine:
                k = (ln, name)
                c, t = agg.get(k, (0, 0))
                agg[k] = (c + 1, t + du)
            tot = sum(t for c, t in agg.values())
            cnt = sum(c for c, t in agg.values())
            for (ln, name), (c, t) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
                KW.row(bench=meta["bench"], dtype=meta["dtype"], shape=meta["shape"], line=ln,
                       kernel=name[:120], count=c, total_ns=t, calls=R)
            meta = dict(meta)
            if cnt:
                meta["kernel_s"] = "%.4e" % (tot * 1e-9 / R)
                meta["kernels"] = "%.2f" % (cnt / R)
                meta["kernel_names"] = ";".join(sorted({n[:40] for (_, n) in agg}))[:200]
            W.row(**meta)
        log("flushed", len(pending), "benches;", len(evs), "events")
        pending.clear()

    bar = lax.optimization_barrier

    if A.child == "dw7":
        dw7(bench, flush, rnd, SZ, 128 if not q else 2)
        return

    # 1. Element-wise: size sweep (launch/latency floor and asymptotic bandwidth).
    sizes = [1 << p for p in (14, 16, 18, 20, 22, 24, 26, 28)] if not q else [1 << 12, 1 << 16]
    for dt in ("float32", "bfloat16"):
        s = SZ[dt]
        for n in sizes:
            x, y = rnd((n,), dt), rnd((n,), dt)
            bench("relu", "elementwise", dt, (n,), 2 * n * s, n, lambda x: jnp.maximum(x, 0), (x,))
            bench("add", "elementwise", dt, (n,), 3 * n * s, n, lambda x, y: x + y, (x, y))
            if n >= 1 << 20:
                def chain(x, y):
                    t = x * y
                    t = t + x
                    t = jnp.maximum(t, 0)
                    t = t * 0.5
                    t = t - y
                    t = t * t
                    t = t + 1
                    return t * x
                bench("chain8_fused", "elementwise", dt, (n,), 3 * n * s, 8 * n, chain, (x, y),
                      note="8 ops, one fusion: bytes = read x,y + write")

                def chain_unfused(x, y):
                    t = bar(x * y)
                    t = bar(t + x)
                    t = bar(jnp.maximum(t, 0))
                    t = bar(t * 0.5)
                    t = bar(t - y)
                    t = bar(t * t)
                    t = bar(t + 1)
                    return t * x
                bench("chain8_unfused", "elementwise", dt, (n,), 20 * n * s, 8 * n,
                      chain_unfused, (x, y), note="8 ops kept apart by optimization_barrier")
            del x, y
    flush()

    # 5. Optimizer updates over ResNet-50's parameters: one flat array, and Keras ResNet50's
    # 214 trainable arrays (conv kernels with biases, batch-norm gamma/beta, the classifier).
    shapes = resnet50_shapes()
    total = sum(int(np.prod(s)) for s in shapes)
    flat = [(total,)]
    for label, shp_list in (("flat", flat), ("resnet50_arrays", shapes)):
        if q:
            shp_list = shp_list[:3]
        nparam = sum(int(np.prod(s)) for s in shp_list)

        def fresh(k):
            # New buffers per bench: the updates donate (alias) their inputs, as Keras's
            # jitted train step donates its state.
            return [[rnd(s, "float32") for s in shp_list] for _ in range(k)]

        def sgdm(p, m, g):
            # keras/src/optimizers/sgd.py: m = momentum * m - lr * g; p = p + m
            m2 = [0.9 * mi - 0.01 * gi for mi, gi in zip(m, g)]
            return [pi + mi for pi, mi in zip(p, m2)], m2, g

        def adam(p, m, v, g):
            m2 = [0.9 * mi + 0.1 * gi for mi, gi in zip(m, g)]
            v2 = [0.999 * vi + 0.001 * gi * gi for vi, gi in zip(v, g)]
            p2 = [pi - 1e-3 * mi / (jnp.sqrt(vi) + 1e-7) for pi, mi, vi in zip(p, m2, v2)]
            return p2, m2, v2, g
        bench("sgd_momentum_" + label, "optimizer", "float32", (nparam, len(shp_list)), 20 * nparam,
              3 * nparam, sgdm, tuple(fresh(3)), donate=True,
              note="%d arrays; bytes: read p,m,g + write p,m" % len(shp_list))
        bench("adam_" + label, "optimizer", "float32", (nparam, len(shp_list)), 28 * nparam,
              10 * nparam, adam, tuple(fresh(4)), donate=True,
              note="%d arrays; bytes: read p,m,v,g + write p,m,v" % len(shp_list))
        flush()

    # 2. Casts and reductions.
    for n in ([1 << 20, 1 << 24, 1 << 26, 1 << 28] if not q else [1 << 16]):
        x = rnd((n,), "float32")
        bench("cast_f32_bf16", "cast", "float32", (n,), 6 * n, n, lambda x: x.astype(jnp.bfloat16), (x,))
        xb = x.astype(jnp.bfloat16)
        bench("cast_bf16_f32", "cast", "bfloat16", (n,), 6 * n, n, lambda x: x.astype(jnp.float32), (xb,))
        bench("reduce_all", "reduction", "float32", (n,), 4 * n, n, lambda x: jnp.sum(x), (x,))
        rows = n // 1024
        x2 = x.reshape(rows, 1024)
        bench("reduce_row", "reduction", "float32", (rows, 1024), 4 * n, n,
              lambda x: jnp.sum(x, axis=1), (x2,), note="last axis (softmax/layer norm-like)")
        del x, xb, x2
    flush()

    B = 128 if not q else 2
    # NHWC activations of ResNet-50 (after each batch norm) and MobileNetV2.
    bn_shapes = [(B, 112, 112, 64), (B, 56, 56, 64), (B, 56, 56, 256), (B, 28, 28, 512),
                 (B, 14, 14, 1024), (B, 7, 7, 2048), (B, 112, 112, 32), (B, 112, 112, 96),
                 (B, 56, 56, 144), (B, 28, 28, 192), (B, 14, 14, 576), (B, 7, 7, 960)]
    if q:
        bn_shapes = bn_shapes[:2]
    for shp in bn_shapes:
        n = int(np.prod(shp))
        x = rnd(shp, "float32")
        bench("reduce_col_nhwc", "reduction", "float32", shp, 4 * n, n,
              lambda x: jnp.sum(x, axis=(0, 1, 2)), (x,), note="over N,H,W per channel")
        del x

    def bn_fwd(x, g, b):
        # Keras 3 BatchNormalization.call, training: moments in float32 for half inputs
        # (keras/src/layers/normalization/batch_normalization.py), then the affine transform.
        x32 = x.astype(jnp.float32)
        mean = jnp.mean(x32, axis=(0, 1, 2))
        var = jnp.mean(jnp.square(x32 - mean), axis=(0, 1, 2))
        inv = lax.rsqrt(var + 1e-3) * g
        y = (x32 - mean) * inv + b
        return y.astype(x.dtype), mean, var

    def bn_relu_fwd(x, g, b):
        y, m, v = bn_fwd(x, g, b)
        return jnp.maximum(y, 0), m, v

    def bn_fb(x, g, b, dy):
        (y, m, v), vjp = jax.vjp(bn_fwd, x, g, b)
        dx, dg, db = vjp((dy, jnp.zeros_like(m), jnp.zeros_like(v)))
        return y, dx, dg, db

    for dt in ("float32", "bfloat16", "float16"):
        s = SZ[dt]
        for shp in (bn_shapes if dt != "float16" else bn_shapes[1:6:2]):
            n = int(np.prod(shp))
            c = shp[-1]
            x, dy = rnd(shp, dt), rnd(shp, dt)
            g, b = jnp.ones((c,), jnp.float32), jnp.zeros((c,), jnp.float32)
            bench("bn_fwd", "norm", dt, shp, 2 * n * s, 8 * n, bn_fwd, (x, g, b),
                  note="bytes: read x + write y")
            bench("bn_relu_fwd", "norm", dt, shp, 2 * n * s, 9 * n, bn_relu_fwd, (x, g, b),
                  note="bytes: read x + write y")
            bench("bn_fwd_bwd", "norm", dt, shp, 4 * n * s, 20 * n, bn_fb, (x, g, b, dy),
                  note="forward and backward: bytes: read x, dy + write y, dx")
            del x, dy
        flush()

    # 4. Depthwise convolutions, NHWC, stride s, k x k, as Keras DepthwiseConv2D on JAX runs them
    # (lax.conv_general_dilated with feature_group_count = channels; "same" padding).
    dw = [("mbv2", 112, 32, 3, 1), ("mbv2", 112, 96, 3, 2), ("mbv2", 56, 144, 3, 1),
          ("mbv2", 56, 144, 3, 2), ("mbv2", 28, 192, 3, 1), ("mbv2", 14, 384, 3, 1),
          ("mbv2", 14, 576, 3, 1), ("mbv2", 7, 960, 3, 1), ("effb0", 112, 32, 3, 1),
          ("effb0", 56, 144, 3, 2), ("effb0", 28, 240, 5, 1), ("effb0", 14, 480, 3, 1),
          ("effb0", 14, 672, 5, 1), ("effb0", 7, 1152, 5, 1)]
    if q:
        dw = dw[:2]
    for dt in ("float32", "bfloat16"):
        s = SZ[dt]
        for tag, hw_, c, k, st in dw:
            shp = (B, hw_, hw_, c)
            ho = (hw_ + st - 1) // st
            nin, nout = B * hw_ * hw_ * c, B * ho * ho * c
            x = rnd(shp, dt)
            w = rnd((k, k, 1, c), dt)
            dyo = rnd((B, ho, ho, c), dt)

            def conv(x, w, st=st, c=c):
                return lax.conv_general_dilated(x, w, (st, st), "SAME",
                                                dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                feature_group_count=c)

            def conv_bwd(x, w, dy, conv=conv):
                _, vjp = jax.vjp(conv, x, w)
                return vjp(dy)
            fl = 2 * k * k * nout
            bench("dwconv_fwd_%s_k%d_s%d" % (tag, k, st), "depthwise", dt, shp, (nin + nout) * s, fl,
                  conv, (x, w), note="bytes: read x + write y")
            bench("dwconv_bwd_%s_k%d_s%d" % (tag, k, st), "depthwise", dt, shp, (2 * nin + nout) * s,
                  2 * fl, conv_bwd, (x, w, dyo),
                  note="input and filter gradients: bytes: read dy, x + write dx")
            del x, w, dyo
        flush()


def dw7(bench, flush, rnd, SZ, B):
    """7x7 depthwise convolutions at ConvNeXtTiny's four stages (keras.applications.ConvNeXtTiny:
    DepthwiseConv2D kernel 7, stride 1, "same" padding, after each stage's downsampling;
    C = 96 at 56x56, 192 at 28x28, 384 at 14x14, 768 at 7x7), NHWC, float32 and bfloat16, as
    Keras on JAX runs them (lax.conv_general_dilated with feature_group_count = C): the forward
    pass, the input gradient alone and the filter gradient alone (each its own jitted function:
    XLA drops the forward pass that a gradient does not need)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    k = 7
    for dt in ("float32", "bfloat16"):
        s = SZ[dt]
        for hw_, c in ((56, 96), (28, 192), (14, 384), (7, 768)):
            shp = (B, hw_, hw_, c)
            n = B * hw_ * hw_ * c
            x, dyo = rnd(shp, dt), rnd(shp, dt)
            w = rnd((k, k, 1, c), dt)

            def conv(x, w, c=c):
                return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                feature_group_count=c)

            # The gradients are linear in dy: the primal they are taken at only gives the shape
            # (zeros made inside the function, so no array is baked into the program as a
            # constant), and the forward output is unused, so XLA removes it.
            def dgrad(w, dy, conv=conv, shp=shp):
                x0 = jnp.zeros(shp, dy.dtype)
                return jax.vjp(lambda xx: conv(xx, w), x0)[1](dy)[0]

            def wgrad(x, dy, conv=conv, k=k, c=c):
                w0 = jnp.zeros((k, k, 1, c), x.dtype)
                return jax.vjp(lambda ww: conv(x, ww), w0)[1](dy)[0]
            fl = 2 * k * k * n
            wb = k * k * c * s
            tag = "convnext_c%d_%d" % (c, hw_)
            bench("dwconv_fwd_%s_k7_s1" % tag, "depthwise", dt, shp, 2 * n * s + wb, fl,
                  conv, (x, w), note="bytes: read x, w + write y")
            bench("dwconv_dgrad_%s_k7_s1" % tag, "depthwise", dt, shp, 2 * n * s + wb, fl,
                  dgrad, (w, dyo), note="input gradient: bytes: read dy, w + write dx")
            bench("dwconv_wgrad_%s_k7_s1" % tag, "depthwise", dt, shp, 2 * n * s + wb, fl,
                  wgrad, (x, dyo), note="filter gradient: bytes: read x, dy + write dw")
            del x, w, dyo
        flush()


def resnet50_shapes():
    """Trainable variable shapes of keras.applications.ResNet50 (conv kernels and biases,
    batch-norm gamma and beta, the 1000-class dense layer)."""
    out = []

    def conv(k, cin, cout):
        out.extend([(k, k, cin, cout), (cout,)])

    def bn(c):
        out.extend([(c,), (c,)])
    conv(7, 3, 64)
    bn(64)
    cin = 64
    for f, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        for i in range(blocks):
            if i == 0:
                conv(1, cin, 4 * f)
                bn(4 * f)
            conv(1, cin, f)
            bn(f)
            conv(3, f, f)
            bn(f)
            conv(1, f, 4 * f)
            bn(4 * f)
            cin = 4 * f
    out.extend([(2048, 1000), (1000,)])
    return out


# ---------------------------------------------------------------- Keras train steps

KSTEP_COLS = ["model", "precision", "batch", "status", "params", "trainable_arrays",
              "non_trainable_arrays", "optimizer_arrays", "first_step_s", "call_host_ms",
              "pipelined_ms", "sync_median_ms", "trace_steps", "trace_kernel_ms_per_step",
              "trace_kernels_per_step", "wall_s", "error"]


def keras_child(spec):
    """One model in this process: compile, time, trace; writes its rows."""
    model_name, prec, batch = spec.split(":")
    batch = int(batch)
    t0 = time.time()
    SW = Writer("keras_steps.csv", KSTEP_COLS)
    KW = Writer("keras_kernels.csv", ["model", "precision", "batch", "line", "kernel", "hlo_op",
                                      "count", "total_ns", "steps"])
    row = dict(model=model_name, precision=prec, batch=batch, status="started")
    try:
        import numpy as np
        import jax
        import keras
        if prec != "float32":
            keras.mixed_precision.set_global_policy(prec)
        image = 299 if model_name == "inceptionv3" else 224
        ctor = {"resnet50": keras.applications.ResNet50, "vgg16": keras.applications.VGG16,
                "mobilenetv2": keras.applications.MobileNetV2,
                "inceptionv3": keras.applications.InceptionV3,
                "efficientnetb0": keras.applications.EfficientNetB0}[model_name]
        model = ctor(weights=None, input_shape=(image, image, 3), classes=1000)
        row["params"] = int(model.count_params())
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                      loss="sparse_categorical_crossentropy", jit_compile=True)
        rng = np.random.default_rng(batch)
        x = rng.standard_normal((batch, image, image, 3), dtype=np.float32)
        y = rng.integers(0, 1000, size=(batch,), dtype=np.int32)
        captured = {}
        model.make_train_function()
        fn = model.train_function

        def wrapped(st, iterator):
            d = next(iterator)
            captured.setdefault("data", d)
            return fn(st, iter([d]))
        model.train_function = wrapped
        t = time.perf_counter()
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
        row["first_step_s"] = round(time.perf_counter() - t, 3)
        state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                     optimizer_variables=True, metrics_variables=True,
                                     purge_model_variables=True)
        row["trainable_arrays"], row["non_trainable_arrays"], row["optimizer_arrays"] = (
            len(state[0]), len(state[1]), len(state[2]))
        # The batch fit took, put on the GPU (device-fed, as keras_fit.py's device rows).
        data = jax.tree_util.tree_map(jax.device_put, captured["data"])
        for _ in range(3):
            logs, state = fn(state, iter([data]))
        jax.block_until_ready(state)
        calls = []
        t = time.perf_counter()
        for _ in range(20):
            c = time.perf_counter()
            logs, state = fn(state, iter([data]))
            calls.append(time.perf_counter() - c)
        jax.block_until_ready((logs, state))
        row["pipelined_ms"] = round(1e3 * (time.perf_counter() - t) / 20, 3)
        row["call_host_ms"] = round(1e3 * float(np.median(calls)), 3)
        dts = []
        for _ in range(10):
            t = time.perf_counter()
            logs, state = fn(state, iter([data]))
            jax.block_until_ready((logs, state))
            dts.append(1e3 * (time.perf_counter() - t))
        row["sync_median_ms"] = round(float(np.median(dts)), 3)
        S = 3
        box = {"s": state}

        def run():
            s = box["s"]
            for _ in range(S):
                lg, s = fn(s, iter([data]))
                jax.block_until_ready((lg, s))
            box["s"] = s
        evs = trace_kernels(run, "keras")
        lines = kernel_lines(evs)
        agg = {}
        for mod, ln, name, s, du, op in evs:
            if ln not in lines:
                continue
            c, tt = agg.get((ln, name, op), (0, 0))
            agg[(ln, name, op)] = (c + 1, tt + du)
        for (ln, name, op), (c, tt) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
            KW.row(model=model_name, precision=prec, batch=batch, line=ln, kernel=name[:160],
                   hlo_op=op[:160], count=c, total_ns=tt, steps=S)
        row["trace_steps"] = S
        row["trace_kernel_ms_per_step"] = round(sum(v[1] for v in agg.values()) * 1e-6 / S, 3)
        row["trace_kernels_per_step"] = round(sum(v[0] for v in agg.values()) / S, 1)
        row["status"] = "ok"
    except Exception as e:
        row["status"] = "error"
        row["error"] = (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:300]
        log(traceback.format_exc())
    row["wall_s"] = round(time.time() - t0, 1)
    SW.row(**row)
    log("keras", spec, row["status"], row.get("sync_median_ms"), row.get("trace_kernel_ms_per_step"))


def env_json():
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "argv": sys.argv}
    for key, cmd in (("nvidia_smi", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                                     "clocks.sm,clocks.max.sm", "--format=csv,noheader"]),
                     ("jax_env", [sys.executable, "-c", "import jax; jax.print_environment_info()"])):
        try:
            info[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
        except Exception as e:
            info[key] = repr(e)
    info["env"] = {k: v for k, v in os.environ.items()
                   if k.startswith(("XLA", "JAX", "KERAS", "CUDA", "NVIDIA"))}
    with open(os.path.join(A.out, "env.json"), "w") as f:
        json.dump(info, f, indent=1)


def main():
    if A.child in ("micro", "dw7"):
        try:
            micro()
        except Exception:
            log(traceback.format_exc())
        return
    if A.child:
        keras_child(A.child)
        return
    env_json()
    parts = A.parts.split(",")
    # Each part in a process of its own: every JAX client preallocates 75% of the GPU.
    if "dw7" in parts:
        cmd = [sys.executable, os.path.abspath(__file__), "--out", A.out, "--budget",
               str(A.budget), "--child", "dw7"] + (["--quick"] if A.quick else [])
        try:
            subprocess.run(cmd, timeout=A.budget + 30)
        except subprocess.TimeoutExpired:
            log("dw7 timeout")
    if "micro" in parts:
        mb = A.budget if "keras" not in parts else min(A.budget - 60, 0.5 * A.budget)
        cmd = [sys.executable, os.path.abspath(__file__), "--out", A.out, "--budget", str(mb),
               "--child", "micro"] + (["--quick"] if A.quick else [])
        try:
            subprocess.run(cmd, timeout=mb + 30)
        except subprocess.TimeoutExpired:
            log("micro timeout")
    if "keras" in parts:
        for spec in A.models.split(","):
            if left() < 75:
                log("budget short: skipping", spec)
                continue
            cmd = [sys.executable, os.path.abspath(__file__), "--out", A.out, "--child", spec]
            try:
                subprocess.run(cmd, timeout=max(30, left() - 10))
            except subprocess.TimeoutExpired:
                log("keras", spec, "timeout")
    log("done")


if __name__ == "__main__":
    main()
