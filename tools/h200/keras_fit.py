#!/usr/bin/env python3
"""Records real Keras 3 training (JAX backend, XLA) on one GPU: step times and BFC memory.

Ground truth for gpusim's memory and step-time models (testdata/h200/keras/README.md says how
the committed recordings were made). Keras and optree are not installed on the device machine:
the caller passes their sources (KERAS_SRC: a folder holding the `keras` package, as
`git archive HEAD keras` of keras-team/keras gives; OPTREE_SITE: a folder where optree was
built with `pip install --no-build-isolation --no-deps --target`).

Modes:
  plan --jobs NAME[,NAME] --budget S --out DIR   runs configs, one subprocess each, in order,
      appending one CSV row per config to DIR/steps.csv and DIR/memory.csv as each ends, and
      every child's output to DIR/log.txt; stops starting jobs when the budget runs short.
  one MODEL PRECISION BATCH PHASE RESULT_JSON    one config in this process (used by plan).

Per config (phase A, a fresh compile into a persistent compilation cache):
  - fit#1 on host numpy (4 batches, 1 epoch): compiles; BFC stats are read right after the
    first step (the first-step peak: XLA's autotuning and compile-time buffers included);
  - fit#2 on host numpy (4 batches x 5 epochs): host-fed step = wall time / steps (what
    `model.fit` costs: shuffling, slicing, host-to-device copies one batch ahead);
  - device-fed: the same compiled `train_function` on a batch already on the GPU, 3 warm-up
    steps, 20 pipelined steps (mean) and 10 steps synchronised one by one (median);
  - the compiled step's `memory_analysis()` (XLA buffer assignment: arguments, outputs, aliased,
    temporaries).
Phase B repeats the config in a new process that loads the executable from the cache (no
compile, no autotuning), so its peaks are the steady state without first-step transients.
Phase M (max batch): like B's steps but in a fresh compile under XLA_PYTHON_CLIENT_MEM_FRACTION.
"""
import json
import os
import subprocess
import sys
import time

STAT_KEYS = [
    "bytes_in_use", "peak_bytes_in_use", "largest_alloc_size", "num_allocs", "bytes_limit",
    "bytes_reserved", "peak_bytes_reserved", "largest_free_block_bytes", "pool_bytes",
    "peak_pool_bytes",
]
MA_KEYS = [
    "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
    "temp_size_in_bytes", "generated_code_size_in_bytes", "host_temp_size_in_bytes",
    "peak_memory_in_bytes",
]
STEP_COLS = ["model", "precision", "batch", "phase", "image", "params", "status",
             "first_step_s", "fit_warm_s", "host_fed_ms", "host_fed_steps",
             "host_dispatch_median_ms", "device_fed_ms", "device_fed_steps",
             "device_sync_median_ms", "device_sync_p10_ms", "device_sync_p90_ms",
             "wall_s", "error",
             # The columns validate.ReadShipped reads (as testdata/h200/jax/steps.csv):
             # phase A rows only (B and M rows are memory data; M's steps ran side by side).
             "prec", "size", "optimizer", "step_s", "pipelined_step_s", "fit_step_s"]
PREC = {"float32": "tf32", "mixed_bfloat16": "bf16", "mixed_float16": "fp16"}
MEM_COLS = ["model", "precision", "batch", "phase", "point"] + STAT_KEYS + MA_KEYS + [
    "trainable_bytes", "non_trainable_bytes", "optimizer_bytes", "metrics_bytes"]

IMAGE = {"inceptionv3": 299}


def build(name, image):
    import keras
    apps = keras.applications
    # Any keras.applications constructor by its lower-case name (resnet50, convnexttiny,
    # mobilenetv3large, efficientnetv2b0, resnet50v2, ...).
    ctors = {n.lower(): getattr(apps, n) for n in dir(apps) if n[:1].isupper()}
    return ctors[name](weights=None, input_shape=(image, image, 3), classes=1000)


def stats():
    import jax
    s = jax.devices()[0].memory_stats() or {}
    return {k: s.get(k, "") for k in STAT_KEYS}


def one(model_name, precision, batch, phase, result_path):
    t_start = time.time()
    res = {"model": model_name, "precision": precision, "batch": batch, "phase": phase,
           "status": "started", "mem": []}

    def save():
        res["wall_s"] = round(time.time() - t_start, 1)
        with open(result_path, "w") as f:
            json.dump(res, f)

    import jax
    if phase in ("A", "B"):
        for k, v in (("jax_compilation_cache_dir", os.environ.get("JAX_CACHE", "/tmp/jaxcache")),
                     ("jax_persistent_cache_min_compile_time_secs", 0),
                     ("jax_persistent_cache_min_entry_size_bytes", 0)):
            try:
                jax.config.update(k, v)
            except Exception as e:  # phase B then compiles again; its first_step_s shows it
                res.setdefault("cache_error", []).append(repr(e)[:200])
    import numpy as np
    import keras

    def mem(point, **extra):
        row = {"point": point}
        row.update(stats())
        row.update(extra)
        res["mem"].append(row)
        save()

    try:
        if precision != "float32":
            keras.mixed_precision.set_global_policy(precision)
        image = IMAGE.get(model_name, 224)
        res["image"] = image
        model = build(model_name, image)
        res["params"] = int(model.count_params())
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                      loss="sparse_categorical_crossentropy", jit_compile=True)
        rng = np.random.default_rng(batch)
        nb = 4 if phase == "A" else 2
        x = rng.standard_normal((nb * batch, image, image, 3), dtype=np.float32)
        y = rng.integers(0, 1000, size=(nb * batch,), dtype=np.int32)
        mem("built")

        orig = None
        captured = {}
        dispatch = []

        def wrapped(state, iterator):
            data = next(iterator)
            if "batch" not in captured:
                captured["batch"] = data
                t = time.perf_counter()
                out = orig(state, iter([data]))
                jax.block_until_ready(out)
                res["first_step_s"] = round(time.perf_counter() - t, 3)
                mem("after_first_step")
                return out
            out = orig(state, iter([data]))
            dispatch.append(time.perf_counter())
            return out

        model.make_train_function()
        orig = model.train_function
        model.train_function = wrapped
        t = time.perf_counter()
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
        res["fit_warm_s"] = round(time.perf_counter() - t, 3)
        mem("after_fit_warm")

        if phase == "A":
            epochs = 5
            dispatch.clear()
            t = time.perf_counter()
            model.fit(x, y, batch_size=batch, epochs=epochs, verbose=0)
            wall = time.perf_counter() - t
            res["host_fed_steps"] = nb * epochs
            res["host_fed_ms"] = round(1e3 * wall / (nb * epochs), 3)
            d = np.diff(dispatch) * 1e3
            if len(d):
                res["host_dispatch_median_ms"] = round(float(np.median(d)), 3)
            mem("after_fit_timed")
        del x, y

        state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                     optimizer_variables=True, metrics_variables=True,
                                     purge_model_variables=True)
        sizes = [sum(int(a.nbytes) for a in part) for part in state]
        names = ["trainable_bytes", "non_trainable_bytes", "optimizer_bytes", "metrics_bytes"]
        data = captured["batch"]
        warm, n, m = (3, 20, 10) if phase == "A" else (2, 3, 3)
        for _ in range(warm):
            logs, state = orig(state, iter([data]))
        jax.block_until_ready(state)
        t = time.perf_counter()
        for _ in range(n):
            logs, state = orig(state, iter([data]))
        jax.block_until_ready((logs, state))
        res["device_fed_steps"] = n
        res["device_fed_ms"] = round(1e3 * (time.perf_counter() - t) / n, 3)
        dts = []
        for _ in range(m):
            t = time.perf_counter()
            logs, state = orig(state, iter([data]))
            jax.block_until_ready((logs, state))
            dts.append(1e3 * (time.perf_counter() - t))
        res["device_sync_median_ms"] = round(float(np.median(dts)), 3)
        res["device_sync_p10_ms"] = round(float(np.percentile(dts, 10)), 3)
        res["device_sync_p90_ms"] = round(float(np.percentile(dts, 90)), 3)
        mem("after_device", **dict(zip(names, sizes)))

        if phase == "A":
            jitted = None
            for c in orig.__closure__ or ():
                if hasattr(c.cell_contents, "lower"):
                    jitted = c.cell_contents
            if jitted is not None:
                try:
                    ma = jitted.lower(state, data).compile().memory_analysis()
                    mem("compiled", **{k: getattr(ma, k, "") for k in MA_KEYS})
                except Exception as e:  # the analysis is extra; the timings stand without it
                    res["ma_error"] = repr(e)[:300]
        res["status"] = "ok"
    except Exception as e:
        res["status"] = "error"
        res["error"] = (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:400]
        try:
            mem("at_error")
        except Exception:
            pass
    save()


def csv_row(cols, d):
    out = []
    for c in cols:
        v = d.get(c, "")
        v = "" if v is None else str(v)
        if "," in v or '"' in v:
            v = '"' + v.replace('"', '""') + '"'
        out.append(v)
    return ",".join(out) + "\n"


def append(path, cols, d):
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write(",".join(cols) + "\n")
        f.write(csv_row(cols, d))


PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
JOBS = {"resnet_" + p: [("resnet50", p, b) for b in (64, 128, 256)] for p in PRECISIONS}
JOBS["others"] = [(m, "float32", 128) for m in ("vgg16", "mobilenetv2", "inceptionv3",
                                                 "efficientnetb0")]


def configs(job):
    """A job name of JOBS, or one config as model:precision:batch."""
    if job in JOBS:
        return JOBS[job]
    m, p, b = job.split(":")
    return [(m, p, int(b))]


def env_json(out):
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for cmd, key in ((["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,"
                       "clocks.max.sm", "--format=csv,noheader"], "nvidia_smi"),
                     ([sys.executable, "-c", "import jax; jax.print_environment_info()"],
                      "jax_env"),
                     ([sys.executable, "-c", "import keras, optree, numpy, jax, jaxlib; "
                       "print(keras.__version__, optree.__version__, numpy.__version__, "
                       "jax.__version__, jaxlib.__version__)"], "keras_optree_numpy_jax_jaxlib")):
        try:
            info[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
        except Exception as e:
            info[key] = repr(e)
    info["env"] = {k: v for k, v in os.environ.items()
                   if k.startswith(("XLA", "JAX", "KERAS", "TF_", "CUDA", "NVIDIA"))}
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(info, f, indent=1)


def run_child(args, out, timeout, env=None, tag=""):
    """Runs one config; returns its result dict (status 'timeout'/'crash' when it gave none)."""
    rp = "/tmp/keras_fit_%s.json" % tag
    if os.path.exists(rp):
        os.remove(rp)
    cmd = [sys.executable, os.path.abspath(__file__), "one"] + [str(a) for a in args] + [rp]
    t = time.time()
    with open(os.path.join(out, "log.txt"), "a") as log:
        log.write("\n===== %s %s (timeout %ds)\n" % (time.strftime("%H:%M:%S"), " ".join(
            str(a) for a in args), timeout))
        log.flush()
        try:
            p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout,
                               env=env)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    res = {}
    if os.path.exists(rp):
        with open(rp) as f:
            res = json.load(f)
    if res.get("status") in (None, "started"):
        res["status"] = "timeout" if rc == "timeout" else "crash rc=%s" % rc
    res.setdefault("wall_s", round(time.time() - t, 1))
    return res


def record(out, res, phase_override=None):
    base = {k: res.get(k, "") for k in ("model", "precision", "batch", "phase")}
    if phase_override:
        base["phase"] = phase_override
    row = dict(res)
    row.update(base)
    row.update(prec=PREC.get(row["precision"], ""), size=row.get("image", ""), optimizer="momentum")
    if row["phase"] == "A" and row.get("status") == "ok":
        # XLA runs float32 dots and convolutions as TF32 on Hopper (default matmul precision).
        row.update(step_s=round(row["device_sync_median_ms"] / 1e3, 6),
                   pipelined_step_s=round(row["device_fed_ms"] / 1e3, 6),
                   fit_step_s=round(row["host_fed_ms"] / 1e3, 6))
    append(os.path.join(out, "steps.csv"), STEP_COLS, row)
    for m in res.get("mem", []):
        r = dict(base)
        r.update(m)
        append(os.path.join(out, "memory.csv"), MEM_COLS, r)


def plan(jobs, budget, out, fraction, batches, phases=("A", "B")):
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    left = lambda: budget - (time.time() - t0)
    if not os.path.exists(os.path.join(out, "env.json")):
        env_json(out)
    failures = 0
    for job in jobs:
        if job == "maxbatch":
            ok = maxbatch(out, fraction, batches, left)
            step = batches[1] - batches[0]
            # One more round when the bracket is not closed: above when all fit, below when none.
            if ok and max(ok) == max(batches) and left() > 120:
                maxbatch(out, fraction, [max(batches) + step * (i + 1) for i in range(5)], left)
            elif not ok and left() > 120:
                maxbatch(out, fraction, [min(batches) - step * (i + 1) for i in range(5)], left)
            continue
        if job.startswith("dump"):
            # One fresh compile (dump, or dump=MODEL:BATCH; ResNet-50 FP32 b128 by default) with
            # XLA's dumps on (buffer assignment, memory-usage report) into /tmp/xdump/MODEL;
            # the caller packs the files.
            model, batch = (job.split("=")[1].split(":") if "=" in job else ("resnet50", 128))
            env = dict(os.environ)
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_dump_to=/tmp/xdump/" +
                                model).strip()
            res = run_child([model, "float32", int(batch), "M"], out, int(min(150, left() - 5)),
                            env=env, tag="dump")
            record(out, res, phase_override="dump")
            print("dump", res.get("status"), res.get("wall_s"), flush=True)
            continue
        for model, prec, batch in configs(job):
            if failures >= 2:
                print("two configs in a row failed: stopping", flush=True)
                return
            if left() < 45:
                print("budget: skipping", model, prec, batch, flush=True)
                continue
            tag = "%s_%s_%d" % (model, prec, batch)
            res = run_child([model, prec, batch, "A"], out, int(min(240, left() - 5)),
                            tag=tag + "A")
            record(out, res)
            failures = failures + 1 if res.get("status") != "ok" else 0
            print("A", tag, res.get("status"), res.get("device_fed_ms"), res.get("host_fed_ms"),
                  res.get("wall_s"), flush=True)
            if res.get("status") == "ok" and "B" in phases and left() > 25:
                rb = run_child([model, prec, batch, "B"], out, int(min(90, left() - 5)),
                               tag=tag + "B")
                record(out, rb)
                print("B", tag, rb.get("status"), rb.get("wall_s"), flush=True)


def maxbatch(out, fraction, batches, left):
    """Tries each batch of ResNet-50 FP32 in its own process under one memory fraction, all at
    once (each process's BFC pool is its own; only the step times would suffer, and they are not
    recorded here)."""
    env = dict(os.environ)
    env["XLA_PYTHON_CLIENT_MEM_FRACTION"] = str(fraction)
    procs = []
    timeout = int(min(300, left() - 10))
    for b in batches:
        tag = "max_%d" % b
        rp = "/tmp/keras_fit_%s.json" % tag
        if os.path.exists(rp):
            os.remove(rp)
        logp = "/tmp/keras_fit_%s.log" % tag
        cmd = [sys.executable, os.path.abspath(__file__), "one", "resnet50", "float32", str(b),
               "M", rp]
        procs.append((b, rp, logp, subprocess.Popen(cmd, stdout=open(logp, "w"),
                                                    stderr=subprocess.STDOUT, env=env)))
    t = time.time()
    for b, rp, logp, p in procs:
        try:
            p.wait(timeout=max(1, timeout - (time.time() - t)))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for b, rp, logp, p in procs:
        res = {}
        if os.path.exists(rp):
            with open(rp) as f:
                res = json.load(f)
        if res.get("status") in (None, "started"):
            res["status"] = "timeout/crash rc=%s" % p.returncode
        res.update({"model": "resnet50", "precision": "float32", "batch": b,
                    "phase": "M%.3f" % fraction})
        record(out, res)
        with open(os.path.join(out, "log.txt"), "a") as log, open(logp) as lf:
            log.write("\n===== maxbatch b=%d fraction=%s status=%s\n" % (b, fraction,
                                                                        res["status"]))
            log.write(lf.read())
        print("M", b, res["status"], res.get("error", "")[:160], flush=True)
    return [b for b, rp, logp, p in procs if status_ok(out, b)]


def status_ok(out, b):
    ok = False
    with open(os.path.join(out, "steps.csv")) as f:
        for line in f:
            c = line.split(",")
            if c[0] == "resnet50" and c[2] == str(b) and c[3].startswith("M"):
                ok = c[6] == "ok"
    return ok


def main():
    if sys.argv[1] == "one":
        _, _, model, prec, batch, phase, rp = sys.argv
        one(model, prec, int(batch), phase, rp)
        return
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("--jobs", default="resnet_float32")
    ap.add_argument("--budget", type=float, default=500)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/keras_fit"))
    ap.add_argument("--fraction", type=float, default=0.15)
    ap.add_argument("--batches", default="368,384,400,416,432")
    ap.add_argument("--phases", default="A,B", help="A alone skips the steady-state rerun")
    a = ap.parse_args()
    plan(a.jobs.split(","), a.budget, a.out, a.fraction, [int(b) for b in a.batches.split(",")],
         a.phases.split(","))


if __name__ == "__main__":
    main()
