#!/usr/bin/env python3
"""BFC memory of a Keras 3 (JAX) train step at compile time and at run time, apart
(testdata/h200/keras/compilemem/README.md says how the committed recording was made).

Tells an allocation made while XLA compiles the step (its autotuners run candidate kernels on
buffers of the BFC pool) from one the executed step makes: jax's memory_stats are read after the
model and its state are on the GPU, right after `jit(train_step).lower(...).compile()` and after
a few executed steps. Each job runs in its own process (a fresh BFC pool, peak from zero), with
XLA_FLAGS as given, so `--xla_gpu_autotune_level=0` (no autotuning) can be set per job.

Usage (on the device machine, KERAS_SRC and the optree build on PYTHONPATH, KERAS_BACKEND=jax):
  python3 tools/h200/keras_compile_mem.py plan --jobs MODEL:PRECISION:BATCH:PATH:AUTOTUNE[,...] --out DIR
      [--budget S] [--timeout S] [--vlog TAG]
PATH is `aot` (jit(model.train_step).lower(state, batch).compile(), then 6 executed steps and
15 more, synchronised, each timed to the call's return: the host's issue time) or
`fit` (model.fit for one epoch of one batch, as keras_fit.py's first step, then stats);
AUTOTUNE is `default` (no flag) or a level for --xla_gpu_autotune_level.
`--vlog TAG` runs that job with TF_CPP_VMODULE set on XLA's autotuners and keeps its stderr.
Writes DIR/compilemem.csv (one row per job and point) as each job ends.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

KEYS = ["num_allocs", "bytes_in_use", "peak_bytes_in_use", "largest_alloc_size", "bytes_limit",
        "bytes_reserved", "peak_bytes_reserved", "largest_free_block_bytes", "pool_bytes",
        "peak_pool_bytes"]
COLS = ["model", "precision", "batch", "path", "autotune", "point", "t_s"] + KEYS + [
    "temp_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
    "alias_size_in_bytes", "generated_code_size_in_bytes", "host_temp_size_in_bytes",
    "compile_s", "step_ms", "call_ms", "call_p10_ms", "call_p90_ms", "sync_ms", "status",
    "error"]


def child(spec, rp):
    model_name, prec, batch, path, autotune = spec.split(":")
    batch = int(batch)
    t0 = time.time()
    rows = []

    def point(name, **extra):
        import jax
        s = jax.devices()[0].memory_stats() or {}
        r = {"model": model_name, "precision": prec, "batch": batch, "path": path,
             "autotune": autotune, "point": name, "t_s": round(time.time() - t0, 2),
             "status": "ok"}
        r.update({k: s.get(k, "") for k in KEYS})
        r.update(extra)
        rows.append(r)
        with open(rp, "w") as f:
            json.dump(rows, f)

    try:
        import numpy as np
        import jax
        import keras
        from keras_fit import build
        point("start")
        if prec != "float32":
            keras.mixed_precision.set_global_policy(prec)
        image = 224
        model = build(model_name, image)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                      loss="sparse_categorical_crossentropy", jit_compile=True)
        rng = np.random.default_rng(batch)
        x = rng.standard_normal((batch, image, image, 3), dtype=np.float32)
        y = rng.integers(0, 1000, size=(batch,), dtype=np.int32)
        if path == "fit":
            point("built")
            t = time.perf_counter()
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
            point("after_first_step", compile_s=round(time.perf_counter() - t, 2))
            model.fit(x, y, batch_size=batch, epochs=2, verbose=0)
            point("after_3_steps")
        else:
            model._symbolic_build(data_batch=(x[:1], y[:1]))
            state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                         optimizer_variables=True, metrics_variables=True,
                                         purge_model_variables=True)
            data = (jax.device_put(x), jax.device_put(y))
            jax.block_until_ready((state, data))
            point("state_on_gpu")
            step = jax.jit(model.train_step, donate_argnums=0)
            t = time.perf_counter()
            compiled = step.lower(state, data).compile()
            cs = round(time.perf_counter() - t, 2)
            ma = compiled.memory_analysis()
            mem = {k: getattr(ma, k, "") for k in COLS if k.endswith("_in_bytes")}
            point("after_compile", compile_s=cs, **mem)
            logs, state = compiled(state, data)
            jax.block_until_ready((logs, state))
            point("after_first_step", **mem)
            t = time.perf_counter()
            for _ in range(5):
                logs, state = compiled(state, data)
                jax.block_until_ready((logs, state))
            point("after_6_steps", step_ms=round(1e3 * (time.perf_counter() - t) / 5, 3), **mem)
            # The host's issue time of a step: XLA's GpuExecutable launches the step's thunks on
            # the calling thread and the call returns once they are issued (async dispatch), so
            # the time to the call's return, from an idle GPU, is the host side of the step.
            calls, syncs = [], []
            for _ in range(15):
                t = time.perf_counter()
                logs, state = compiled(state, data)
                t1 = time.perf_counter()
                jax.block_until_ready((logs, state))
                calls.append(1e3 * (t1 - t))
                syncs.append(1e3 * (time.perf_counter() - t))
            point("host_issue", call_ms=round(float(np.median(calls)), 3),
                  call_p10_ms=round(float(np.percentile(calls, 10)), 3),
                  call_p90_ms=round(float(np.percentile(calls, 90)), 3),
                  sync_ms=round(float(np.median(syncs)), 3), **mem)
    except Exception as e:  # noqa: BLE001
        rows.append({"model": model_name, "precision": prec, "batch": batch, "path": path,
                     "autotune": autotune, "point": "error", "status": "error",
                     "error": (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:400]})
        with open(rp, "w") as f:
            json.dump(rows, f)
        raise


def plan(a):
    os.makedirs(a.out, exist_ok=True)
    out_csv = os.path.join(a.out, "compilemem.csv")
    with open(out_csv, "w", newline="") as f:
        csv.DictWriter(f, COLS).writeheader()
    t_plan = time.time()
    for spec in a.jobs.split(","):
        if time.time() - t_plan > a.budget:
            print("budget spent: skipping", spec, flush=True)
            continue
        tag = spec.replace(":", "_")
        env = dict(os.environ)
        autotune = spec.split(":")[4]
        flags = env.get("XLA_FLAGS", "")
        if autotune != "default":
            flags += " --xla_gpu_autotune_level=" + autotune
        env["XLA_FLAGS"] = flags.strip()
        if not env["XLA_FLAGS"]:
            del env["XLA_FLAGS"]
        err = None
        if tag in a.vlog:
            env["TF_CPP_MIN_LOG_LEVEL"] = "0"
            env["TF_CPP_VMODULE"] = ("conv_algorithm_picker=4,gemm_algorithm_picker=2,"
                                     "gemm_fusion_autotuner=1,autotuner_util=1,redzone_allocator=2,"
                                     "autotuner_compile_util=1")
            err = open(os.path.join(a.out, tag + ".vlog.txt"), "w")
        rp = "/tmp/compilemem_%s.json" % tag
        t = time.time()
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "child", spec, rp],
                           env=env, stderr=err, timeout=a.timeout)
        if err:
            err.close()
        rows = json.load(open(rp)) if os.path.exists(rp) else [
            {"model": spec, "point": "error", "status": "error", "error": "rc %d" % p.returncode}]
        with open(out_csv, "a", newline="") as f:
            w = csv.DictWriter(f, COLS, extrasaction="ignore")
            for r in rows:
                w.writerow(r)
        print("%s rc=%d %.0f s" % (spec, p.returncode, time.time() - t), flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["plan"])
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--vlog", default="")
    ap.add_argument("--timeout", type=int, default=150)
    ap.add_argument("--budget", type=float, default=1e9, help="start no job after S seconds")
    a = ap.parse_args()
    a.vlog = set(a.vlog.split(",")) if a.vlog else set()
    plan(a)


if __name__ == "__main__":
    main()
