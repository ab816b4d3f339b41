#!/usr/bin/env python3
"""Raw JAX profiler output of real Keras 3 train steps, with their unprofiled step times, peaks
and the GPU's clock while they run (testdata/h200/profiles/README.md says how the committed
recordings were made).

Fixtures for gpusim's profile import (XSpace `*.xplane.pb` and Chrome trace JSON) and for the
step times and peaks of held-out model families. Keras and optree are not installed on the
device machine: the caller passes their sources as for keras_fit.py (KERAS_SRC and the optree
build on PYTHONPATH, KERAS_BACKEND=jax).

Usage (on the device machine):
  python3 tools/h200/keras_profile.py plan --jobs MODEL:PRECISION:BATCH[,...] --budget S --out DIR
      [--clock] [--sustain MODEL[,MODEL]] [--sustain-s S] [--dump MODEL[,MODEL]]
      [--trace-steps N] [--max-xplane-mb M]

Per job, in a process of its own (each JAX client takes 75% of the GPU):
  - keras.applications.MODEL(weights=None, 224x224, 1000 classes), SGD(0.01, momentum 0.9),
    sparse categorical cross-entropy, jit_compile=True, precision by the global dtype policy;
    one `fit` epoch of one random batch from host numpy compiles the step (BFC stats read right
    after it: `peak_first_step_bytes`, XLA's autotuning included);
  - the same compiled `train_function` on that batch put on the GPU: 3 warm-up steps, 20
    pipelined steps (`pipelined_ms`, mean) and 20 steps synchronised one by one
    (`sync_median_ms`, p10, p90), none under the profiler; BFC stats after them (`peak_bytes`,
    `bytes_in_use`, `largest_alloc_bytes`);
  - --sustain: pipelined steps for --sustain-s seconds more (a steady load for the clock);
  - `jax.profiler.trace` around --trace-steps synchronised steps, each inside
    `jax.profiler.StepTraceAnnotation("train", step_num=i)` (the step marker TensorFlow's
    Keras fit emits, which JAX's Keras does not), default ProfileOptions. Kept: the raw
    `*.xplane.pb`, gzipped (while larger than --max-xplane-mb gzipped it is traced again
    without the HLO protos, then with fewer steps), and the Chrome trace JSON the profiler
    writes beside it (`HOST.trace.json.gz`, kept when under 6 MB); from the XSpace, per
    kernel name and HLO op (the event's `hlo_op` stat, else the "XLA Ops" event around it):
    count and total device ns (MODEL.kernels.csv), and the planes, lines and stat names seen
    (MODEL.structure.json);
  - --dump: the step compiled with XLA's dumps on (`--xla_dump_to`, train step only): its
    optimized HLO, buffer assignment and memory-usage report, gzipped.
The parent appends one row per job to DIR/steps.csv as each ends and packs each job's files into
DIR/profiles_K.tar (a new K past 12 MB, as the device tool returns at most 8 files of 16 MB).
--clock samples NVML (SM and memory clock, board power, temperature, clock-event reasons) at
10 Hz all along into DIR/clock.csv, each sample tagged with the phase the running job is in.
"""
import argparse
import csv
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

STEP_COLS = ["model", "precision", "batch", "image", "params", "status", "first_step_s",
             "warmup_steps", "pipelined_steps", "pipelined_ms", "sync_steps", "sync_median_ms",
             "sync_p10_ms", "sync_p90_ms", "sync_min_ms", "sync_max_ms",
             "peak_first_step_bytes", "peak_bytes", "bytes_in_use", "largest_alloc_bytes",
             "bytes_limit", "peak_after_trace_bytes", "state_bytes", "sustain_s",
             "sustain_steps", "sustain_ms", "trace_steps", "trace_sync_ms",
             "trace_kernel_ms_per_step", "trace_kernels_per_step", "step_markers", "trace_options",
             "xplane_bytes", "xplane_gz_bytes", "trace_json_gz_bytes", "files",
             "matmul_precision", "wall_s", "error", "sync_call_median_ms",
             "sync_wait_median_ms", "sync_all_ms", "sync_state_arrays",
             # The columns validate.ReadShipped reads (as testdata/h200/keras/steps.csv).
             "prec", "size", "optimizer", "step_s", "pipelined_step_s"]
PREC = {"float32": "tf32", "mixed_bfloat16": "bf16", "mixed_float16": "fp16"}
PHASE_FILE = "/tmp/keras_profile_phase"
STAGE = "/tmp/keras_profile_stage"


def tag_of(model, prec, batch):
    return "%s_%s_b%s" % (model, prec, batch)


def set_phase(s):
    with open(PHASE_FILE + ".tmp", "w") as f:
        f.write(s)
    os.replace(PHASE_FILE + ".tmp", PHASE_FILE)


def bfc():
    import jax
    return jax.devices()[0].memory_stats() or {}


# ---------------------------------------------------------------- the XSpace, read back

def read_xspace(path):
    """(kernels, structure, step markers) of one xplane.pb through jax's ProfileData: kernels
    maps (line, kernel name, hlo_op) to [count, total ns] over the GPU planes' stream lines;
    structure lists each plane's name, stat names and lines (event count, a few names, the stat
    names on their events)."""
    import bisect
    import jax
    with open(path, "rb") as f:
        pd = jax.profiler.ProfileData.from_serialized_xspace(f.read())
    kernels, structure, markers = {}, [], 0
    for plane in pd.planes:
        pl = {"plane": plane.name, "lines": []}
        try:
            pl["stats"] = sorted({str(k) for k, _ in plane.stats})
        except Exception as e:  # noqa: BLE001
            pl["stats_error"] = repr(e)[:100]
        ops = []
        for line in plane.lines:
            names, stat_names, n = [], set(), 0
            for e in line.events:
                n += 1
                if len(names) < 4 and e.name not in names:
                    names.append(e.name[:120])
                try:
                    stat_names.update(str(k) for k, _ in e.stats)
                except Exception:  # noqa: BLE001
                    pass
                if line.name == "XLA Ops":
                    ops.append((int(e.start_ns), int(e.duration_ns), e.name))
                if e.name == "train" and "step_num" in {str(k) for k, _ in e.stats}:
                    markers += 1
            pl["lines"].append({"line": line.name, "events": n, "first_names": names,
                                "event_stats": sorted(stat_names)})
        structure.append(pl)
        if not plane.name.startswith("/device:GPU"):
            continue
        ops.sort()
        starts = [o[0] for o in ops]
        for line in plane.lines:
            if not line.name.startswith("Stream"):
                continue
            for e in line.events:
                s, du = int(e.start_ns), int(e.duration_ns)
                st = {}
                try:
                    st = {str(k): v for k, v in e.stats}
                except Exception:  # noqa: BLE001
                    pass
                op = str(st.get("hlo_op", ""))
                if not op and ops:
                    i = bisect.bisect_right(starts, s) - 1
                    if i >= 0 and s + du <= ops[i][0] + ops[i][1] + 1000:
                        op = ops[i][2]
                k = (line.name, e.name, op)
                c = kernels.setdefault(k, [0, 0])
                c[0] += 1
                c[1] += du
    return kernels, structure, markers


# ---------------------------------------------------------------- one job (child process)

def child(spec, rp, a):
    model_name, prec, batch = spec.split(":")
    batch = int(batch)
    tag = tag_of(model_name, prec, batch)
    t0 = time.time()
    res = {"model": model_name, "precision": prec, "batch": batch, "status": "started",
           "files": []}

    def save():
        res["wall_s"] = round(time.time() - t0, 1)
        with open(rp, "w") as f:
            json.dump(res, f)

    try:
        set_phase(tag + " compile")
        import numpy as np
        import jax
        import keras
        from keras_fit import build
        res["matmul_precision"] = str(jax.config.jax_default_matmul_precision)
        if prec != "float32":
            keras.mixed_precision.set_global_policy(prec)
        image = 224
        res["image"] = image
        model = build(model_name, image)
        res["params"] = int(model.count_params())
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
        res["first_step_s"] = round(time.perf_counter() - t, 3)
        res["peak_first_step_bytes"] = bfc().get("peak_bytes_in_use", "")
        save()
        state = model._get_jax_state(trainable_variables=True, non_trainable_variables=True,
                                     optimizer_variables=True, metrics_variables=True,
                                     purge_model_variables=True)
        res["state_bytes"] = int(sum(int(v.nbytes) for part in state for v in part))
        data = jax.tree_util.tree_map(jax.device_put, captured["data"])
        del x, y
        set_phase(tag + " timed")
        for _ in range(3):
            logs, state = fn(state, iter([data]))
        jax.block_until_ready((logs, state))
        res["warmup_steps"] = 3
        n = 20
        t = time.perf_counter()
        for _ in range(n):
            logs, state = fn(state, iter([data]))
        jax.block_until_ready((logs, state))
        res["pipelined_steps"] = n
        res["pipelined_ms"] = round(1e3 * (time.perf_counter() - t) / n, 3)
        dts, calls = [], []
        for _ in range(a.sync_steps):
            t = time.perf_counter()
            logs, state = fn(state, iter([data]))
            calls.append(1e3 * (time.perf_counter() - t))
            jax.block_until_ready((logs, state))
            dts.append(1e3 * (time.perf_counter() - t))
        # The host's own part of a synchronised step: train_function's return (the jitted
        # call's thunk issue and output wrapping) and the wait for the outputs after it.
        res["sync_call_median_ms"] = round(float(np.median(calls)), 3)
        res["sync_wait_median_ms"] = round(float(np.median(np.subtract(dts, calls))), 3)
        res["sync_all_ms"] = ";".join("%.3f" % v for v in dts)
        res["sync_state_arrays"] = len(jax.tree_util.tree_leaves(state))
        res["sync_steps"] = len(dts)
        res["sync_median_ms"] = round(float(np.median(dts)), 3)
        res["sync_p10_ms"] = round(float(np.percentile(dts, 10)), 3)
        res["sync_p90_ms"] = round(float(np.percentile(dts, 90)), 3)
        res["sync_min_ms"] = round(min(dts), 3)
        res["sync_max_ms"] = round(max(dts), 3)
        st = bfc()
        res["peak_bytes"] = st.get("peak_bytes_in_use", "")
        res["bytes_in_use"] = st.get("bytes_in_use", "")
        res["largest_alloc_bytes"] = st.get("largest_alloc_size", "")
        res["bytes_limit"] = st.get("bytes_limit", "")
        save()

        if model_name in a.sustain:
            set_phase(tag + " sustain")
            t = time.perf_counter()
            k = 0
            while time.perf_counter() - t < a.sustain_s:
                for _ in range(10):
                    logs, state = fn(state, iter([data]))
                jax.block_until_ready((logs, state))
                k += 10
            el = time.perf_counter() - t
            res.update(sustain_s=round(el, 2), sustain_steps=k, sustain_ms=round(1e3 * el / k, 3))
            save()

        os.makedirs(STAGE, exist_ok=True)
        steps = a.trace_steps
        box = {"s": state}
        hlo_proto = True
        while True:
            set_phase(tag + " trace")
            d = "/tmp/keras_profile_trace_" + tag
            shutil.rmtree(d, ignore_errors=True)
            dts = []
            opts = jax.profiler.ProfileOptions()
            opts.enable_hlo_proto = hlo_proto
            res["trace_options"] = "host_tracer_level=%s python_tracer_level=%s enable_hlo_proto=%s" % (
                opts.host_tracer_level, opts.python_tracer_level, opts.enable_hlo_proto)
            with jax.profiler.trace(d, profiler_options=opts):
                s = box["s"]
                for i in range(steps):
                    with jax.profiler.StepTraceAnnotation("train", step_num=i):
                        t = time.perf_counter()
                        lg, s = fn(s, iter([data]))
                        jax.block_until_ready((lg, s))
                        dts.append(1e3 * (time.perf_counter() - t))
                box["s"] = s
            set_phase(tag + " write")
            xp = sorted(glob.glob(d + "/**/*.xplane.pb", recursive=True))
            if not xp:
                raise RuntimeError("no xplane.pb under " + d)
            dst = os.path.join(STAGE, tag + ".xplane.pb.gz")
            with open(xp[0], "rb") as f, gzip.open(dst, "wb", compresslevel=9) as g:
                shutil.copyfileobj(f, g)
            res["xplane_bytes"] = os.path.getsize(xp[0])
            res["xplane_gz_bytes"] = os.path.getsize(dst)
            res["trace_steps"] = steps
            res["trace_sync_ms"] = ";".join("%.3f" % v for v in dts)
            if res["xplane_gz_bytes"] <= a.max_xplane_mb * 2**20 or steps <= 1:
                break
            # Too large: first without the HLO protos the XSpace carries, then fewer steps.
            if hlo_proto:
                hlo_proto = False
            else:
                steps -= 1
        res["files"].append(os.path.basename(dst))
        res["peak_after_trace_bytes"] = bfc().get("peak_bytes_in_use", "")
        pf = sorted(p for p in glob.glob(d + "/**/*.trace.json.gz", recursive=True)
                    if not os.path.basename(p).startswith("perfetto"))
        if pf:
            sz = os.path.getsize(pf[0])
            res["trace_json_gz_bytes"] = sz
            if sz <= 6 * 2**20:
                shutil.copy(pf[0], os.path.join(STAGE, tag + ".trace.json.gz"))
                res["files"].append(tag + ".trace.json.gz")
        res["trace_dir_files"] = [os.path.relpath(p, d) for p in
                                  glob.glob(d + "/**/*", recursive=True)]
        save()
        kernels, structure, markers = read_xspace(xp[0])
        res["step_markers"] = markers
        kp = os.path.join(STAGE, tag + ".kernels.csv")
        with open(kp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["line", "kernel", "hlo_op", "count", "total_ns", "steps"])
            for (ln, name, op), (c, tt) in sorted(kernels.items(), key=lambda kv: -kv[1][1]):
                w.writerow([ln, name, op, c, tt, steps])
        res["files"].append(os.path.basename(kp))
        with open(os.path.join(STAGE, tag + ".structure.json"), "w") as f:
            json.dump(structure, f, indent=1)
        res["files"].append(tag + ".structure.json")
        res["trace_kernel_ms_per_step"] = round(sum(v[1] for v in kernels.values()) * 1e-6 / steps, 3)
        res["trace_kernels_per_step"] = round(sum(v[0] for v in kernels.values()) / steps, 1)
        shutil.rmtree(d, ignore_errors=True)
        res["status"] = "ok"
    except Exception as e:  # noqa: BLE001
        res["status"] = "error"
        res["error"] = (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:400]
        traceback.print_exc()
    set_phase(tag + " done")
    save()


# ---------------------------------------------------------------- the parent

class Clock:
    """NVML samples at 10 Hz into OUT/clock.csv, each tagged with PHASE_FILE's text."""

    COLS = ["t_unix", "t_s", "phase", "sm_mhz", "mem_mhz", "power_w", "temp_c", "reasons"]

    def __init__(self, out):
        import pynvml
        pynvml.nvmlInit()
        self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        self.f = open(os.path.join(out, "clock.csv"), "w", newline="")
        self.w = csv.writer(self.f)
        self.w.writerow(self.COLS)
        self.on, self.t0 = True, time.time()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def reasons(self):
        for name in ("nvmlDeviceGetCurrentClocksEventReasons",
                     "nvmlDeviceGetCurrentClocksThrottleReasons"):
            fn = getattr(self.nv, name, None)
            if fn is not None:
                try:
                    return "0x%x" % fn(self.h)
                except Exception:  # noqa: BLE001
                    return ""
        return ""

    def run(self):
        nv, h, k = self.nv, self.h, 0
        while self.on:
            t = time.time()
            try:
                ph = open(PHASE_FILE).read().strip()
            except OSError:
                ph = ""
            try:
                self.w.writerow(["%.3f" % t, "%.3f" % (t - self.t0), ph,
                                 nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                                 nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                                 "%.1f" % (nv.nvmlDeviceGetPowerUsage(h) / 1e3),
                                 nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
                                 self.reasons()])
            except Exception as e:  # noqa: BLE001
                self.w.writerow(["%.3f" % t, "%.3f" % (t - self.t0), ph, "", "", "", "",
                                 "error " + repr(e)[:80]])
            k += 1
            if k % 10 == 0:
                self.f.flush()
            time.sleep(max(0.0, 0.1 - (time.time() - t)))

    def stop(self):
        self.on = False
        self.th.join()
        self.f.close()


def env_json(out):
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "argv": sys.argv}
    for key, cmd in (("nvidia_smi", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                                     "clocks.sm,clocks.max.sm,power.limit",
                                     "--format=csv,noheader"]),
                     ("jax_env", [sys.executable, "-c", "import jax; jax.print_environment_info()"]),
                     ("versions", [sys.executable, "-c",
                                   "import keras, optree, numpy, jax, jaxlib, sys; print('keras', "
                                   "keras.__version__, 'optree', optree.__version__, 'numpy', "
                                   "numpy.__version__, 'jax', jax.__version__, 'jaxlib', "
                                   "jaxlib.__version__, 'python', sys.version.split()[0], "
                                   "'matmul_precision', jax.config.jax_default_matmul_precision)"]),
                     ("uname", ["uname", "-a"])):
        try:
            info[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=90).stdout
        except Exception as e:  # noqa: BLE001
            info[key] = repr(e)
    info["env"] = {k: v for k, v in os.environ.items()
                   if k.startswith(("XLA", "JAX", "KERAS", "CUDA", "NVIDIA", "TF_"))}
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(info, f, indent=1)


def append_row(path, res):
    new = not os.path.exists(path)
    row = {c: res.get(c, "") for c in STEP_COLS}
    if isinstance(res.get("files"), list):
        row["files"] = " ".join(res["files"])
    row.update(prec=PREC.get(res.get("precision"), ""), size=res.get("image", ""),
               optimizer="momentum")
    if res.get("sync_median_ms") not in (None, ""):
        row["step_s"] = round(res["sync_median_ms"] / 1e3, 6)
        row["pipelined_step_s"] = round(res["pipelined_ms"] / 1e3, 6)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=STEP_COLS)
        if new:
            w.writeheader()
        w.writerow(row)


class Packer:
    """Each job's files into OUT/profiles_K.tar, a new K once one passes 12 MB."""

    def __init__(self, out):
        self.out, self.k = out, 1

    def add(self, paths):
        p = os.path.join(self.out, "profiles_%d.tar" % self.k)
        if os.path.exists(p) and os.path.getsize(p) > 12 * 2**20:
            self.k += 1
            p = os.path.join(self.out, "profiles_%d.tar" % self.k)
        with tarfile.open(p, "a") as t:
            for q in paths:
                t.add(q, arcname=os.path.basename(q))
        return os.path.basename(p)


def dump_files(ddir, tag):
    """The train step's optimized HLO, buffer assignment and memory-usage report from an XLA
    dump folder, gzipped into STAGE (the module with the largest buffer assignment)."""
    bas = sorted(glob.glob(os.path.join(ddir, "*jit_train_step*buffer-assignment.txt")),
                 key=os.path.getsize)
    if not bas:
        bas = sorted(glob.glob(os.path.join(ddir, "*buffer-assignment.txt")), key=os.path.getsize)
    if not bas:
        return []
    pre = bas[-1][:-len("-buffer-assignment.txt")]
    out = []
    for suf, name in ((".txt", "hlo.txt"), ("-buffer-assignment.txt", "buffer-assignment.txt"),
                      ("-memory-usage-report.txt", "memory-usage-report.txt")):
        if os.path.exists(pre + suf):
            dst = os.path.join(STAGE, "%s.%s.gz" % (tag, name))
            with open(pre + suf, "rb") as f, gzip.open(dst, "wb", compresslevel=9) as g:
                shutil.copyfileobj(f, g)
            out.append(dst)
    return out


def plan(a):
    t0 = time.time()
    left = lambda: a.budget - (time.time() - t0)  # noqa: E731
    os.makedirs(a.out, exist_ok=True)
    logp = os.path.join(a.out, "log.txt")

    def log(*m):
        s = "[%6.1fs] " % (time.time() - t0) + " ".join(str(x) for x in m)
        print(s, flush=True)
        with open(logp, "a") as f:
            f.write(s + "\n")
    set_phase("start")
    clock = None
    if a.clock:
        try:
            clock = Clock(a.out)
        except Exception as e:  # noqa: BLE001
            log("clock sampler failed:", repr(e)[:200])
    env_json(a.out)
    set_phase("idle")
    time.sleep(2 if clock else 0)
    packer = Packer(a.out)
    for spec in [j for j in a.jobs.split(",") if j]:
        if left() < 60:
            log("budget short: skipping", spec)
            continue
        model, prec, batch = spec.split(":")
        tag = tag_of(model, prec, batch)
        shutil.rmtree(STAGE, ignore_errors=True)
        os.makedirs(STAGE)
        env = dict(os.environ)
        ddir = "/tmp/keras_profile_dump/" + tag
        if model in a.autotune_log:
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_gpu_dump_autotune_logs_to=" +
                                os.path.join(STAGE, tag + ".autotune_logs.txt")).strip()
        if model in a.dump:
            shutil.rmtree(ddir, ignore_errors=True)
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_dump_to=" + ddir +
                                " --xla_dump_hlo_as_text --xla_dump_hlo_module_re=jit_train_step").strip()
        rp = "/tmp/keras_profile_%s.json" % tag
        if os.path.exists(rp):
            os.remove(rp)
        cmd = [sys.executable, os.path.abspath(__file__), "child", spec, rp] + a.passthrough
        log("start", spec, "timeout", int(min(a.job_timeout, left() - 10)))
        with open(logp, "a") as f:
            f.write("===== %s\n" % spec)
            f.flush()
            try:
                rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                    timeout=int(min(a.job_timeout, left() - 10))).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        res = {"model": model, "precision": prec, "batch": batch}
        if os.path.exists(rp):
            with open(rp) as f:
                res = json.load(f)
        if res.get("status") in (None, "started"):
            res["status"] = "timeout" if rc == "timeout" else "crash rc=%s" % rc
        if model in a.dump:
            for p in dump_files(ddir, tag):
                res.setdefault("files", []).append(os.path.basename(p))
        staged = sorted(glob.glob(STAGE + "/*"))
        if staged:
            res["tar"] = packer.add(staged)
        append_row(os.path.join(a.out, "steps.csv"), res)
        log("end", spec, res.get("status"), "sync_ms", res.get("sync_median_ms"), "peak",
            res.get("peak_bytes"), "xplane_gz", res.get("xplane_gz_bytes"), "trace_steps",
            res.get("trace_steps"), "tar", res.get("tar"), "wall", res.get("wall_s"),
            res.get("error", ""))
    set_phase("idle")
    if clock:
        time.sleep(2)
        clock.stop()
    log("done")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["plan", "child"])
    ap.add_argument("spec", nargs="?")
    ap.add_argument("rp", nargs="?")
    ap.add_argument("--jobs", default="resnet50:float32:128")
    ap.add_argument("--budget", type=float, default=500)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/keras_profile"))
    ap.add_argument("--clock", action="store_true")
    ap.add_argument("--sustain", default="")
    ap.add_argument("--sustain-s", type=float, default=10.0)
    ap.add_argument("--dump", default="")
    ap.add_argument("--autotune-log", default="",
                    help="models whose XLA autotuning log (every candidate's time and scratch "
                         "bytes: --xla_gpu_dump_autotune_logs_to) is kept")
    ap.add_argument("--sync-steps", type=int, default=20)
    ap.add_argument("--trace-steps", type=int, default=3)
    ap.add_argument("--max-xplane-mb", type=float, default=5.0)
    ap.add_argument("--job-timeout", type=float, default=240)
    a = ap.parse_args()
    a.sustain = [m for m in a.sustain.split(",") if m]
    a.dump = [m for m in a.dump.split(",") if m]
    a.autotune_log = [m for m in a.autotune_log.split(",") if m]
    a.passthrough = ["--sustain", ",".join(a.sustain), "--sustain-s", str(a.sustain_s),
                     "--trace-steps", str(a.trace_steps), "--sync-steps", str(a.sync_steps), "--max-xplane-mb", str(a.max_xplane_mb)]
    if a.mode == "child":
        child(a.spec, a.rp, a)
    else:
        plan(a)


if __name__ == "__main__":
    main()
