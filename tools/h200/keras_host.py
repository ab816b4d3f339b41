#!/usr/bin/env python3
"""Records the host side of a Keras 3 (JAX backend) training step on one GPU.

What a step costs the host apart from the GPU: the dispatch of the jitted train step, whose
arguments are every state array (keras/src/backend/jax/trainer.py, `fit` passes
trainable, non-trainable, optimizer and metrics variables to `train_function` each step,
jitted with donate_argnums=0), and, when `fit` reads numpy arrays, the gather and copy of
each batch (the array data adapter and `JAXEpochIterator._one_batch_ahead_iterator`).
testdata/h200/keras/host/README.md says how the committed recording was made.

Keras and optree are not installed on the device machine: pass their sources as
keras_fit.py does (PYTHONPATH=OPTREE_SITE:KERAS_SRC, KERAS_BACKEND=jax).

Parts (each in its own process, rows appended to OUT/PART.csv as they are measured):
  jaxargs  pure JAX: a jitted step over N donated float32 arrays (N = 8..2048), light (one
           tiny kernel's work) and heavy (a ~10 ms matmul chain besides): call_us (time to
           return from the call, back to back), pipelined_ms, sync_ms (each call blocked).
  kfit     Keras: Sequential of K Dense(16) layers (state arrays 4K+4: kernels, biases,
           their momenta, iterations, learning rate, the loss tracker's total and count), and
           one with BatchNormalization; host-fed fit at batch 32 in three shapes (1 epoch x 4
           steps, 1 x 64, 16 x 4) to split fit's cost per call, per epoch and per step; per
           step inside fit: gather_ms (next(iterator)) and dispatch_ms (the jitted call);
           device-fed sync and pipelined steps as keras_fit.py.
  kgather  Keras: GlobalAveragePooling2D + Dense(1000) on 224x224x3 (and 299x299x3) images at
           batches 32-256 (8 state arrays): fit's per-step host cost against batch bytes.
  kmodel   keras.applications models, host-fed with the same per-step split, after a probe
           of the host's speed at fit's own host work (host_probe: gather, copy, device_put).
  hostmicro  the host feed's pieces alone and together on one 77 MB batch: gather, copy,
           device_put with the GPU idle and busy, the gather during a device_put, a bare
           jitted call over 538 donated arrays (testdata/h200/keras/split/README.md).
  ksplit   kmodel's configs with every step of fit split into the slice, the device_put calls
           and the jitted call (raw rows in ksplit_steps.csv), the probe before and after.
  kseq     keras_fit.py's phase A sequence (each config in its own process, in the order of
           --jobs, 4 batches fit 1 epoch then 5), with ksplit's per-step split and, before and
           after the fits, the host probe, the host's counters (page faults and CPU times of
           the process, /proc/vmstat's THP and compaction counters, the CPU time the hypervisor
           stole, free 2 MiB blocks, RSS and AnonHugePages) and a CPU-only probe; between the
           configs the same probe from the long-lived parent (testdata/h200/keras/seq/README.md).

Usage: python3 keras_host.py plan --parts PART[,PART] [--jobs MODEL:PRECISION:BATCH,...] --budget S --out DIR
       python3 keras_host.py part --part PART [--jobs ...] --budget S --out DIR   (one part, in this process)
plan runs each part in its own process, appending rows to DIR/PART.csv; --jobs is kmodel's,
ksplit's and kseq's config list (default mobilenetv2:float32:128,resnet50:mixed_bfloat16:128).
"""
import csv
import json
import os
import subprocess
import sys
import time

OUT = None


def append(part, row):
    path = os.path.join(OUT, part + ".csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row.keys()))
        if new:
            w.writeheader()
        w.writerow(row)


def med(xs):
    import numpy as np
    return round(float(np.median(xs)), 4) if len(xs) else ""


def part_jaxargs(budget):
    import jax
    import jax.numpy as jnp
    import numpy as np
    t0 = time.time()
    for heavy in (False, True):
        for n in (8, 32, 128, 256, 512, 1024, 2048):
            if time.time() - t0 > budget:
                return
            state = [jnp.full((64,), float(i), jnp.float32) for i in range(n)]
            x = jnp.ones((4096, 4096), jnp.float32) * 1e-3

            def step(s, x):
                y = x
                if heavy:
                    y = jax.lax.fori_loop(0, 24, lambda i, y: jnp.tanh(y @ x), x)
                return jnp.sum(y[0]), [a * 0.999 + 1e-3 for a in s]

            f = jax.jit(step, donate_argnums=0)
            tc = time.perf_counter()
            out, state = f(state, x)
            jax.block_until_ready(state)
            compile_s = time.perf_counter() - tc
            for _ in range(3):
                out, state = f(state, x)
            jax.block_until_ready(state)
            k = 30
            calls = []
            t = time.perf_counter()
            for _ in range(k):
                a = time.perf_counter()
                out, state = f(state, x)
                calls.append(time.perf_counter() - a)
            jax.block_until_ready((out, state))
            pipe = (time.perf_counter() - t) / k
            sync = []
            for _ in range(15):
                a = time.perf_counter()
                out, state = f(state, x)
                jax.block_until_ready((out, state))
                sync.append(time.perf_counter() - a)
            append("jaxargs", dict(heavy=int(heavy), arrays=n, compile_s=round(compile_s, 3),
                                   call_us=med([1e6 * c for c in calls]),
                                   call_mean_us=round(1e6 * float(np.mean(calls)), 2),
                                   pipelined_ms=round(1e3 * pipe, 4),
                                   sync_ms=med([1e3 * s for s in sync]),
                                   sync_p10_ms=round(1e3 * float(np.percentile(sync, 10)), 4),
                                   sync_p90_ms=round(1e3 * float(np.percentile(sync, 90)), 4)))
            print("jaxargs", heavy, n, flush=True)


def instrument(model, rec):
    """Wraps model.train_function to time next(iterator) and the jitted call apart."""
    model.make_train_function()
    orig = model.train_function

    def wrapped(state, iterator):
        a = time.perf_counter()
        data = next(iterator)
        b = time.perf_counter()
        out = orig(state, iter([data]))
        rec.append((a, b, time.perf_counter()))
        return out
    model.train_function = wrapped
    return orig


def shape_fit(model, x, y, batch, epochs, steps, rec):
    """One fit of epochs epochs of steps steps on the first steps*batch samples, with rec
    cleared first (so it holds only this fit's steps); its wall time as wall_ms_EPOCHSxSTEPS."""
    n = steps * batch
    rec.clear()
    t = time.perf_counter()
    model.fit(x[:n], y[:n], batch_size=batch, epochs=epochs, verbose=0, shuffle=True)
    wall = time.perf_counter() - t
    return {"wall_ms_%dx%d" % (epochs, steps): round(1e3 * wall, 3)}


def fit_shapes(model, x, y, batch, shapes, rec):
    """Runs fit per (epochs, steps) shape on the first epochs*... samples; returns walls and
    the per-step gather/dispatch medians over all of them."""
    import numpy as np
    res = {}
    gathers, dispatches, intervals = [], [], []
    for epochs, steps in shapes:
        res.update(shape_fit(model, x, y, batch, epochs, steps, rec))
        gathers += [1e3 * (b - a) for a, b, _ in rec]
        dispatches += [1e3 * (c - b) for _, b, c in rec]
        intervals += list(1e3 * np.diff([c for _, _, c in rec]))
    res["gather_ms"] = med(gathers)
    res["dispatch_ms"] = med(dispatches)
    res["dispatch_p90_ms"] = round(float(np.percentile(dispatches, 90)), 4)
    res["interval_ms"] = med(intervals)
    return res


def device_steps(model, orig, data):
    import jax
    import numpy as np
    state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                 optimizer_variables=True, metrics_variables=True,
                                 purge_model_variables=True)
    for _ in range(3):
        logs, state = orig(state, iter([data]))
    jax.block_until_ready(state)
    n = 20
    t = time.perf_counter()
    for _ in range(n):
        logs, state = orig(state, iter([data]))
    jax.block_until_ready((logs, state))
    pipe = (time.perf_counter() - t) / n
    dts = []
    for _ in range(10):
        t = time.perf_counter()
        logs, state = orig(state, iter([data]))
        jax.block_until_ready((logs, state))
        dts.append(time.perf_counter() - t)
    return dict(device_fed_ms=round(1e3 * pipe, 4), device_sync_median_ms=med([1e3 * d for d in dts]))


def counts(model):
    return dict(trainable=len(model.trainable_variables),
                non_trainable=len(model.non_trainable_variables),
                optimizer=len(model.optimizer.variables),
                metrics=len(model.metrics_variables))


def cpu_probe(reps=5):
    """Milliseconds (median of reps) of a fixed pure-Python loop: the CPU's speed at
    interpreter work, with no memory traffic beyond the caches and no page faults, so a slow
    host that shows here is a slow (or shared) CPU, not slow memory."""
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        s = 0
        for i in range(200000):
            s += i * i
        ts.append(1e3 * (time.perf_counter() - t))
    return med(ts)


def host_probe(x, batch, reps=5, more=False, put=True):
    """The host's speed at fit's own host work, timed in this process just before the fits:
    probe_gather_ms, a shuffled batch gathered out of the arrays by numpy fancy indexing into a
    new array (what the array data adapter does each step: slice_and_convert_to_jax, the
    first touch of the new array's pages included); probe_copy_ms, the same bytes copied into
    an array already touched (memory bandwidth alone); probe_put_ms, jax.device_put of the
    batch to the GPU, waited for. Medians of reps; a slow host shows here, apart from the fit.
    more adds the same gather into an array already touched (np.take out=: no new pages),
    the page faults and system CPU time of the fresh gather (getrusage of this thread), the
    fresh gather with numpy's madvise(MADV_HUGEPAGE) switched off (probe_gather_4k_*: numpy
    asks for transparent huge pages on arrays of 4 MiB or more, numpy/_core/src/multiarray/
    alloc.c, indicate_hugepages; glibc malloc mmaps blocks above M_MMAP_THRESHOLD, at most
    32 MiB, so each batch is new pages), and cpu_probe; put=False times no device_put
    (probe_put_ms left out), for a process without JAX (kseq's parent)."""
    import numpy as np
    import resource
    rng = np.random.default_rng(7)
    buf = np.empty((batch,) + x.shape[1:], x.dtype)
    buf[...] = 0
    g, c, p, gt, flt, st, g4, f4 = [], [], [], [], [], [], [], []
    who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
    core = getattr(np, "_core", None) or np.core
    hint = getattr(core.multiarray, "_set_madvise_hugepage", lambda on: False)
    for _ in range(reps):
        idx = rng.permutation(len(x))[:batch]
        r0 = resource.getrusage(who)
        t0 = time.perf_counter()
        b = x[idx]
        t1 = time.perf_counter()
        r1 = resource.getrusage(who)
        np.copyto(buf, x[:batch])
        t2 = time.perf_counter()
        if put:
            import jax
            jax.device_put(b).block_until_ready()
        t3 = time.perf_counter()
        g.append(1e3 * (t1 - t0))
        c.append(1e3 * (t2 - t1))
        p.append(1e3 * (t3 - t2))
        flt.append(r1.ru_minflt - r0.ru_minflt)
        st.append(1e3 * (r1.ru_stime - r0.ru_stime))
        if more:
            t4 = time.perf_counter()
            np.take(x, idx, axis=0, out=buf)
            gt.append(1e3 * (time.perf_counter() - t4))
            # The fresh gather again with numpy's madvise(MADV_HUGEPAGE) off: 4 KiB pages only.
            del b
            was = hint(False)
            r0 = resource.getrusage(who)
            t5 = time.perf_counter()
            b = x[idx]
            t6 = time.perf_counter()
            r1 = resource.getrusage(who)
            hint(was)
            g4.append(1e3 * (t6 - t5))
            f4.append(r1.ru_minflt - r0.ru_minflt)
        del b
    out = dict(probe_gather_ms=med(g), probe_copy_ms=med(c), probe_put_ms=med(p))
    if not put:
        del out["probe_put_ms"]
    if more:
        out.update(probe_gather_touched_ms=med(gt), probe_gather_minflt=med(flt),
                   probe_gather_stime_ms=med(st), probe_gather_4k_ms=med(g4),
                   probe_gather_4k_minflt=med(f4), probe_cpu_ms=cpu_probe())
    return out


def first_fit(model, x, y, batch, tag, extra):
    """Fits two batches (the step's compile) and starts the config's row: config, batch, bytes
    a sample, extra, the model's array counts, and the first fit's seconds."""
    t = time.perf_counter()
    model.fit(x[:2 * batch], y[:2 * batch], batch_size=batch, epochs=1, verbose=0)
    compile_s = time.perf_counter() - t
    row = dict(config=tag, batch=batch, sample_bytes=int(x[0].nbytes) + 4)
    row.update(extra)
    c = counts(model)
    row.update(c)
    row["arrays"] = sum(c.values())
    row["compile_s"] = round(compile_s, 3)
    return row


def keras_run(part, tag, model, x, y, batch, shapes, extra, probe=False):
    import jax
    rec = []
    orig = instrument(model, rec)
    row = first_fit(model, x, y, batch, tag, extra)
    if probe:
        row.update(host_probe(x, batch))
    row.update(fit_shapes(model, x, y, batch, shapes, rec))
    data = (jax.device_put(x[:batch]), jax.device_put(y[:batch]))
    row.update(device_steps(model, orig, data))
    append(part, row)
    print(part, tag, flush=True)


def compile_model(keras, model):
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss="sparse_categorical_crossentropy", jit_compile=True)


def part_kfit(budget):
    import keras
    import numpy as np
    t0 = time.time()
    batch = 32
    shapes = [(1, 4), (1, 64), (16, 4)]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64 * batch, 16), dtype=np.float32)
    y = rng.integers(0, 16, size=(64 * batch,), dtype=np.int32)
    for k, bn in ((4, False), (16, False), (64, False), (128, False), (256, False), (512, False), (128, True)):
        if time.time() - t0 > budget:
            return
        keras.backend.clear_session()
        layers = [keras.Input((16,))]
        for _ in range(k):
            layers.append(keras.layers.Dense(16, activation="relu"))
            if bn:
                layers.append(keras.layers.BatchNormalization())
        layers.append(keras.layers.Dense(16))
        model = keras.Sequential(layers)
        compile_model(keras, model)
        keras_run("kfit", "dense%d%s" % (k, "_bn" if bn else ""), model, x, y, batch, shapes, {})


def part_kgather(budget):
    import keras
    import numpy as np
    t0 = time.time()
    shapes = [(1, 4), (1, 16), (4, 4)]
    for image, batches in ((224, (32, 64, 128, 256)), (299, (128,))):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((16 * max(batches), image, image, 3), dtype=np.float32)
        y = rng.integers(0, 1000, size=(len(x),), dtype=np.int32)
        for batch in batches:
            if time.time() - t0 > budget:
                return
            keras.backend.clear_session()
            model = keras.Sequential([keras.Input((image, image, 3)),
                                      keras.layers.GlobalAveragePooling2D(),
                                      keras.layers.Dense(1000)])
            compile_model(keras, model)
            keras_run("kgather", "gap%d_b%d" % (image, batch), model, x, y, batch, shapes, dict(image=image))
        del x, y


APPS = {"resnet50": "ResNet50", "mobilenetv2": "MobileNetV2", "vgg16": "VGG16",
        "efficientnetb0": "EfficientNetB0", "inceptionv3": "InceptionV3"}


def app_model(name, prec, batch, batches=8):
    """The compiled keras.applications model of a kmodel, ksplit or kseq job under precision
    policy prec (in a fresh session), its image side, and `batches` batches of random data
    seeded by batch."""
    import keras
    import numpy as np
    keras.backend.clear_session()
    keras.mixed_precision.set_global_policy(prec)
    image = 299 if name == "inceptionv3" else 224
    model = getattr(keras.applications, APPS[name])(weights=None, input_shape=(image, image, 3), classes=1000)
    compile_model(keras, model)
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batches * batch, image, image, 3), dtype=np.float32)
    y = rng.integers(0, 1000, size=(len(x),), dtype=np.int32)
    return model, image, x, y


def app_jobs(budget, jobs):
    """(name, prec, batch) and app_model's (model, image, x, y) of each job "name:prec:batch" in
    turn, until budget seconds have passed; it keeps no reference to what it yielded, so the
    caller's del frees a job's data before the next job's is made."""
    t0 = time.time()
    for job in jobs:
        name, prec, batch = job.split(":")
        batch = int(batch)
        if time.time() - t0 > budget:
            return
        yield (name, prec, batch) + app_model(name, prec, batch)


def part_kmodel(budget, jobs):
    for name, prec, batch, model, image, x, y in app_jobs(budget, jobs):
        keras_run("kmodel", "%s_%s_b%d" % (name, prec, batch), model, x, y, batch,
                  [(5, 4), (1, 8)], dict(model=name, precision=prec, image=image), probe=True)
        del x, y


def meminfo():
    """MemTotal, MemFree and AnonHugePages (kB) from /proc/meminfo, and the THP mode: the
    device machine is a VM whose RAM grows as it is touched (a new page can cost the host's
    backing of it, not only the guest's zeroing)."""
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, v = line.split(":", 1)
                if k in ("MemTotal", "MemFree", "AnonHugePages"):
                    out["mem_" + k] = int(v.split()[0])
    except OSError:
        pass
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            out["thp"] = f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        out["thp"] = ""
    return out


def part_hostmicro(budget):
    """The pieces of fit's host feed apart and together, on one 128-image batch (77 MB):
    gather (fancy indexing into a new array, as the array data adapter), gather into a touched
    array (np.take out=), copy; device_put's return and its completion, with the GPU idle and
    busy; the gather while a device_put's staging copy runs; a jitted step over 538 donated
    arrays (ResNet-50's state count) returning, alone and while a device_put runs. One row per
    test and repetition (ms)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    t0 = time.time()
    rng = np.random.default_rng(3)
    batch = 128
    x = rng.standard_normal((8 * batch, 224, 224, 3), dtype=np.float32)
    buf = np.empty((batch, 224, 224, 3), np.float32)
    buf[...] = 0
    m = jnp.ones((8192, 8192), jnp.float32)

    @jax.jit
    def busy(m):
        return jax.lax.fori_loop(0, 20, lambda i, y: jnp.tanh(y @ m) * 1e-3, m)
    busy(m).block_until_ready()
    state = [jnp.full((64,), float(i), jnp.float32) for i in range(538)]

    def step(s):
        return [a * 0.999 + 1e-3 for a in s]
    f = jax.jit(step, donate_argnums=0)
    state = f(state)
    jax.block_until_ready(state)
    busy_ms = []
    for _ in range(3):
        a = time.perf_counter()
        busy(m).block_until_ready()
        busy_ms.append(1e3 * (time.perf_counter() - a))

    def row(test, rep, ms, left_ms=""):
        append("hostmicro", dict(test=test, rep=rep, ms=round(ms, 4), left_ms=left_ms))
    row("busy_kernel", 0, med(busy_ms))
    append("hostmicro_mem", dict(point="start", **meminfo()))

    for rep in range(6):
        if time.time() - t0 > budget:
            return
        idx = rng.permutation(len(x))[:batch]
        a = time.perf_counter()
        b = x[idx]
        row("gather", rep, 1e3 * (time.perf_counter() - a))
        a = time.perf_counter()
        np.take(x, idx, axis=0, out=buf)
        row("gather_into_touched", rep, 1e3 * (time.perf_counter() - a))
        a = time.perf_counter()
        np.copyto(buf, x[:batch])
        row("copy_touched", rep, 1e3 * (time.perf_counter() - a))
        a = time.perf_counter()
        p = jax.device_put(b)
        c = time.perf_counter()
        p.block_until_ready()
        d = time.perf_counter()
        row("put_return", rep, 1e3 * (c - a))
        row("put_done", rep, 1e3 * (d - a))
        del p
        # device_put with the GPU busy: does the copy wait for the compute stream?
        g = busy(m)
        a = time.perf_counter()
        p = jax.device_put(b)
        c = time.perf_counter()
        p.block_until_ready()
        d = time.perf_counter()
        g.block_until_ready()
        e = time.perf_counter()
        row("put_return_gpu_busy", rep, 1e3 * (c - a))
        row("put_done_gpu_busy", rep, 1e3 * (d - a), round(1e3 * (e - d), 4))
        del p, g
        # the gather with the GPU busy
        g = busy(m)
        idx = rng.permutation(len(x))[:batch]
        a = time.perf_counter()
        b2 = x[idx]
        row("gather_gpu_busy", rep, 1e3 * (time.perf_counter() - a))
        g.block_until_ready()
        del g
        # the gather while another batch's device_put (its staging copy) runs
        p = jax.device_put(b)
        idx = rng.permutation(len(x))[:batch]
        a = time.perf_counter()
        b3 = x[idx]
        c = time.perf_counter()
        p.block_until_ready()
        d = time.perf_counter()
        row("gather_during_put", rep, 1e3 * (c - a), round(1e3 * (d - c), 4))
        del p, b2, b3
        # the jitted call over 538 donated arrays returning, alone and during a device_put
        a = time.perf_counter()
        state = f(state)
        row("call538", rep, 1e3 * (time.perf_counter() - a))
        jax.block_until_ready(state)
        p = jax.device_put(b)
        a = time.perf_counter()
        state = f(state)
        row("call538_during_put", rep, 1e3 * (time.perf_counter() - a))
        p.block_until_ready()
        jax.block_until_ready(state)
        del p, b
    append("hostmicro_mem", dict(point="end", **meminfo()))


PUTS = []


def instrument_split(model, rec, puts):
    """As instrument, and also times each jax.device_put of a batch inside next(iterator)
    (keras/src/backend/jax/trainer.py, _distribute_data, called by _one_batch_ahead_iterator
    right after the array adapter's slice), and notes whether the batch handed to the step was
    already on the device and whether the step before had ended when fit asked for the next
    batch."""
    import jax
    import keras.src.backend.jax.trainer as jt
    if not getattr(jt._distribute_data, "timed", False):
        real = jt._distribute_data

        def timed(data, layouts=None):
            a = time.perf_counter()
            r = real(data, layouts)
            PUTS.append((a, time.perf_counter()))
            return r
        timed.timed = True
        jt._distribute_data = timed
    model.make_train_function()
    orig = model.train_function
    last = {}

    def ready(tree):
        try:
            return int(all(a.is_ready() for a in jax.tree_util.tree_leaves(tree)))
        except Exception:
            return -1

    import resource
    who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)

    def wrapped(state, iterator):
        prev = ready(last["logs"]) if "logs" in last else -1
        n0 = len(puts)
        r0 = resource.getrusage(who)
        a = time.perf_counter()
        data = next(iterator)
        b = time.perf_counter()
        r1 = resource.getrusage(who)
        on_dev = ready(data)
        put = sum(q - p for p, q in puts[n0:])
        out = orig(state, iter([data]))
        c = time.perf_counter()
        last["logs"] = out[0]
        # The page faults and system CPU time of fit's thread inside next(iterator).
        rec.append((a, b, c, put, len(puts) - n0, on_dev, prev, r1.ru_minflt - r0.ru_minflt,
                    r1.ru_stime - r0.ru_stime))
        return out
    model.train_function = wrapped
    return orig


def part_ksplit(budget, jobs):
    """kmodel's configs with fit's host step split into its pieces: per step the slice
    (next(iterator) less its device_put calls), the device_put calls, the jitted call, and
    whether the batch was on the device at the call and the step before done when fit asked
    for the next batch (raw rows in ksplit_steps.csv); a host probe before and after the fits
    (host drift within a config shows as the two differing); then the device-fed steps."""
    import jax
    import numpy as np
    for name, prec, batch, model, image, x, y in app_jobs(budget, jobs):
        tag = "%s_%s_b%d" % (name, prec, batch)
        rec, puts = [], PUTS
        puts.clear()
        orig = instrument_split(model, rec, puts)
        row = first_fit(model, x, y, batch, tag, dict(model=name, precision=prec, image=image))
        row.update(meminfo())
        row.update(host_probe(x, batch))
        slices, putms, calls, intervals = [], [], [], []
        for epochs, steps in [(5, 4), (1, 8)]:
            row.update(shape_fit(model, x, y, batch, epochs, steps, rec))
            base = rec[0][0]
            for k, (a, b, cc, put, nput, on_dev, prev, _, _) in enumerate(rec):
                append("ksplit_steps", dict(config=tag, shape="%dx%d" % (epochs, steps), k=k,
                                            epoch=k // steps, t_ms=round(1e3 * (a - base), 3),
                                            next_ms=round(1e3 * (b - a), 3),
                                            slice_ms=round(1e3 * (b - a - put), 3),
                                            put_ms=round(1e3 * put, 3), puts=nput,
                                            call_ms=round(1e3 * (cc - b), 3),
                                            batch_on_device=on_dev, prev_step_done=prev))
                if nput == 1:
                    slices.append(1e3 * (b - a - put))
                    putms.append(1e3 * put)
                calls.append(1e3 * (cc - b))
            intervals += list(1e3 * np.diff([r[2] for r in rec]))
        row["gather_ms"] = med([s + p for s, p in zip(slices, putms)])
        row["slice_ms"] = med(slices)
        row["put_ms"] = med(putms)
        row["dispatch_ms"] = med(calls)
        row["interval_ms"] = med(intervals)
        after = host_probe(x, batch)
        row.update({k.replace("probe_", "probe2_"): v for k, v in after.items()})
        data = (jax.device_put(x[:batch]), jax.device_put(y[:batch]))
        row.update(device_steps(model, orig, data))
        append("ksplit", row)
        print("ksplit", tag, flush=True)
        del x, y


VMSTAT = ("pgfault", "pgmajfault", "thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc",
          "compact_stall", "compact_fail", "compact_success")


def first_int(path, key):
    """The first number on the line of path that starts with key + ':' ("" where none)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return ""


def host_counters():
    """What the kernel counts of the host's memory and CPU, one dict with the same keys every
    time: meminfo() (MemFree, AnonHugePages system-wide, the THP mode) and THP's defrag mode;
    /proc/vmstat's page faults, THP faults served and fallen back to 4 KiB pages, compaction
    stalls (vm_*); free blocks of 2 MiB or more in /proc/buddyinfo, counted in 2 MiB units
    (free_2m: what a THP fault needs without compaction); /proc/stat's CPU ticks, all and
    stolen by the hypervisor (cpu_*_ticks); this process's VmRSS and VmHWM, AnonHugePages
    (/proc/self/smaps_rollup) and getrusage (self_*: page faults, user and system CPU seconds,
    context switches); numpy's madvise(MADV_HUGEPAGE) switch for large arrays."""
    import resource
    out = {"mem_MemTotal": "", "mem_MemFree": "", "mem_AnonHugePages": "", "thp": ""}
    out.update(meminfo())
    try:
        with open("/sys/kernel/mm/transparent_hugepage/defrag") as f:
            out["thp_defrag"] = f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        out["thp_defrag"] = ""
    vm = {}
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                k, v = line.split()
                vm[k] = int(v)
    except (OSError, ValueError):
        pass
    for k in VMSTAT:
        out["vm_" + k] = vm.get(k, "")
    free2m = ""
    try:
        free2m = 0
        with open("/proc/buddyinfo") as f:
            for line in f:
                n = [int(v) for v in line.split()[4:]]
                free2m += sum(c << (o - 9) for o, c in enumerate(n) if o >= 9)
    except (OSError, ValueError):
        free2m = ""
    out["free_2m"] = free2m
    try:
        with open("/proc/stat") as f:
            cpu = [int(v) for v in f.readline().split()[1:9]]
        out["cpu_total_ticks"], out["cpu_steal_ticks"] = sum(cpu), cpu[7]
    except (OSError, ValueError, IndexError):
        out["cpu_total_ticks"], out["cpu_steal_ticks"] = "", ""
    out["self_VmRSS"] = first_int("/proc/self/status", "VmRSS")
    out["self_VmHWM"] = first_int("/proc/self/status", "VmHWM")
    out["self_AnonHugePages"] = first_int("/proc/self/smaps_rollup", "AnonHugePages")
    r = resource.getrusage(resource.RUSAGE_SELF)
    out.update(self_minflt=r.ru_minflt, self_majflt=r.ru_majflt, self_utime_s=round(r.ru_utime, 4),
               self_stime_s=round(r.ru_stime, 4), self_nvcsw=r.ru_nvcsw, self_nivcsw=r.ru_nivcsw)
    madv = ""
    try:
        import numpy as np
        core = getattr(np, "_core", None) or np.core
        madv = int(core.multiarray._get_madvise_hugepage())
    except Exception:  # noqa: BLE001 (numpy without the switch: left blank)
        pass
    out["numpy_madvise_hugepage"] = madv
    out["t_unix"] = round(time.time(), 3)
    return out


DELTAS = ("vm_pgfault", "vm_thp_fault_alloc", "vm_thp_fault_fallback", "vm_compact_stall",
          "cpu_total_ticks", "cpu_steal_ticks", "self_minflt", "self_majflt", "self_utime_s",
          "self_stime_s", "self_nivcsw")


def counter_delta(a, b, prefix):
    """host_counters() b minus a for the DELTAS counters, keys prefixed."""
    out = {}
    for k in DELTAS:
        out[prefix + k] = round(b[k] - a[k], 4) if "" not in (a[k], b[k]) else ""
    return out


def part_kseq1(budget, job, seq, rnd):
    """One config of kseq, in this process (its parent starts one process per config, as
    keras_fit.py's plan does): keras_fit.py's phase A (the persistent compilation cache, 4
    batches of random data seeded by the batch, fit for 1 epoch, then timed for 5) with
    ksplit's per-step split (kseq_steps.csv) and the page faults and system time of fit's
    thread inside each next(iterator); host_probe(more=True) before and after the timed fit;
    host_counters() at the start, before and after the timed fit and at the end
    (kseq_counters.csv), their deltas over the timed fit in the row (fit_*); then the
    device-fed steps. One row in kseq.csv, with kmodel's columns where they mean the same."""
    import jax
    import numpy as np
    for k, v in (("jax_compilation_cache_dir", os.environ.get("JAX_CACHE", "/tmp/jaxcache")),
                 ("jax_persistent_cache_min_compile_time_secs", 0),
                 ("jax_persistent_cache_min_entry_size_bytes", 0)):
        try:
            jax.config.update(k, v)
        except Exception:  # noqa: BLE001 (the run compiles without a cache; compile_s shows it)
            pass
    name, prec, batch = job.split(":")
    batch = int(batch)
    tag = "%s_%s_b%d" % (name, prec, batch)
    pts = []

    def point(p):
        c = host_counters()
        pts.append(c)
        append("kseq_counters", dict(seq=seq, round=rnd, config=tag, point=p, **c))
        return c
    c0 = point("start")
    # 4 batches, as keras_fit.py's host-fed fit (5 epochs of 4 steps).
    model, image, x, y = app_model(name, prec, batch, batches=4)
    rec, puts = [], PUTS
    orig = instrument_split(model, rec, puts)
    t = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
    row = dict(seq=seq, round=rnd, config=tag, batch=batch, sample_bytes=int(x[0].nbytes) + 4,
               model=name, precision=prec, image=image)
    c = counts(model)
    row.update(c)
    row["arrays"] = sum(c.values())
    row["compile_s"] = round(time.perf_counter() - t, 3)
    row.update(thp=c0["thp"], thp_defrag=c0["thp_defrag"], numpy_madvise_hugepage=c0["numpy_madvise_hugepage"])
    row.update(host_probe(x, batch, more=True))
    c1 = point("before_fit")
    rec.clear()
    t = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=5, verbose=0)
    row["wall_ms_5x4"] = round(1e3 * (time.perf_counter() - t), 3)
    c2 = point("after_fit")
    base = rec[0][0]
    slices, putms, calls, flts, sts = [], [], [], [], []
    for k, (a, b, cc, put, nput, on_dev, prev, flt, st) in enumerate(rec):
        append("kseq_steps", dict(seq=seq, config=tag, k=k, epoch=k // 4, t_ms=round(1e3 * (a - base), 3),
                                  next_ms=round(1e3 * (b - a), 3), slice_ms=round(1e3 * (b - a - put), 3),
                                  put_ms=round(1e3 * put, 3), puts=nput, call_ms=round(1e3 * (cc - b), 3),
                                  next_minflt=flt, next_stime_ms=round(1e3 * st, 3),
                                  batch_on_device=on_dev, prev_step_done=prev))
        if nput == 1:
            slices.append(1e3 * (b - a - put))
            putms.append(1e3 * put)
            flts.append(flt)
            sts.append(1e3 * st)
        calls.append(1e3 * (cc - b))
    row["gather_ms"] = med([s + p for s, p in zip(slices, putms)])
    row["slice_ms"] = med(slices)
    row["put_ms"] = med(putms)
    row["next_minflt"] = med(flts)
    row["next_stime_ms"] = med(sts)
    row["dispatch_ms"] = med(calls)
    row["interval_ms"] = med(list(1e3 * np.diff([r[2] for r in rec])))
    row.update(counter_delta(c1, c2, "fit_"))
    for k in ("mem_MemFree", "mem_AnonHugePages", "free_2m", "self_VmRSS", "self_AnonHugePages"):
        row["at_fit_" + k] = c1[k]
    after = host_probe(x, batch, more=True)
    row.update({k.replace("probe_", "probe2_"): v for k, v in after.items()})
    data = (jax.device_put(x[:batch]), jax.device_put(y[:batch]))
    row.update(device_steps(model, orig, data))
    point("end")
    append("kseq", row)
    print("kseq", seq, tag, row["wall_ms_5x4"], row["gather_ms"], row["interval_ms"], flush=True)


def part_kseq(budget, jobs):
    """keras_fit.py's phase A sequence: each job of jobs (model:precision:batch) in its own
    process, in order (part_kseq1), as the first recording ran them (testdata/h200/keras/
    steps.csv); a job that repeats an earlier one is its round 2. This long-lived process holds
    four 128-image batches and, at the start and after each job, probes the host
    (host_probe(more=True, put=False)) and reads host_counters() (kseq_host.csv): the host's
    speed across the sequence in one process that does not change."""
    import numpy as np
    t0 = time.time()
    rng = np.random.default_rng(11)
    px = rng.standard_normal((4 * 128, 224, 224, 3), dtype=np.float32)

    def snap(point, seq, job):
        r = dict(point=point, seq=seq, job=job, t_s=round(time.time() - t0, 2))
        r.update(host_probe(px, 128, more=True, put=False))
        r.update(host_counters())
        append("kseq_host", r)
    snap("start", -1, "")
    for i, job in enumerate(jobs):
        left = budget - (time.time() - t0)
        if left < 50:
            print("kseq: budget: skipping", i, job, flush=True)
            continue
        rnd = 1 + jobs[:i].count(job)
        cmd = [sys.executable, os.path.abspath(__file__), "part", "--part", "kseq1", "--jobs", job,
               "--seq", str(i), "--round", str(rnd), "--budget", str(int(left)), "--out", OUT]
        print("===== %s kseq %d %s" % (time.strftime("%H:%M:%S"), i, job), flush=True)
        try:
            subprocess.run(cmd, timeout=min(150, left - 5))
        except subprocess.TimeoutExpired:
            print("kseq: timeout", i, job, flush=True)
        snap("after", i, job)


def main():
    global OUT
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help", "help") or args[0] not in ("plan", "part"):
        print(__doc__.strip())
        raise SystemExit(0 if args and args[0] in ("-h", "--help", "help") else 2)
    mode = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    OUT = opts.get("--out", os.environ.get("OUT", "/tmp/keras_host"))
    os.makedirs(OUT, exist_ok=True)
    if mode == "part":
        part, budget = opts["--part"], float(opts["--budget"])
        if part == "jaxargs":
            part_jaxargs(budget)
        elif part == "kfit":
            part_kfit(budget)
        elif part == "kgather":
            part_kgather(budget)
        elif part == "kmodel":
            part_kmodel(budget, opts["--jobs"].split(","))
        elif part == "ksplit":
            part_ksplit(budget, opts["--jobs"].split(","))
        elif part == "hostmicro":
            part_hostmicro(budget)
        elif part == "kseq":
            part_kseq(budget, opts["--jobs"].split(","))
        elif part == "kseq1":
            part_kseq1(budget, opts["--jobs"], int(opts["--seq"]), int(opts["--round"]))
        else:
            raise SystemExit("keras_host.py: unknown part %r (see --help)" % part)
        return
    budget = float(opts["--budget"])
    t0 = time.time()
    with open(os.path.join(OUT, "env.json"), "w") as f:
        info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        try:
            info["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=20).stdout
            info["versions"] = subprocess.run(
                [sys.executable, "-c", "import jax, jaxlib, numpy, keras, optree; print(keras.__version__, optree.__version__, numpy.__version__, jax.__version__, jaxlib.__version__)"],
                capture_output=True, text=True, timeout=60).stdout
        except Exception as e:
            info["error"] = repr(e)
        info["cpus"] = os.cpu_count()
        json.dump(info, f, indent=1)
    share = {"jaxargs": 45, "kfit": 60, "kgather": 60, "kmodel": 150, "hostmicro": 30, "ksplit": 300, "kseq": 450}
    for part in opts["--parts"].split(","):
        left = budget - (time.time() - t0)
        if left < 20:
            break
        # A part run alone may take the whole budget.
        b = left - 10 if len(opts["--parts"].split(",")) == 1 else min(share.get(part, 60), left - 10)
        cmd = [sys.executable, os.path.abspath(__file__), "part", "--part", part, "--budget", str(b), "--out", OUT]
        if part in ("kmodel", "ksplit", "kseq"):
            cmd += ["--jobs", opts.get("--jobs", "mobilenetv2:float32:128,resnet50:mixed_bfloat16:128")]
        with open(os.path.join(OUT, "log.txt"), "a") as log:
            log.write("\n===== %s %s (budget %.0fs)\n" % (time.strftime("%H:%M:%S"), part, b))
            log.flush()
            try:
                subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=b + 60)
            except subprocess.TimeoutExpired:
                log.write("timeout\n")


if __name__ == "__main__":
    main()
