"""Helpers the H200 recording scripts share (imported from beside them: each script is run as
`python3 tools/h200/SCRIPT.py`, which puts this folder on sys.path).

- RunLog: the progress log (stdout and OUTDIR/log.txt, each line stamped with the seconds since
  the script started) and the seconds left of the run's budget.
- event_seconds / median_seconds: device time of GPU work between two CUDA events (PyTorch).
- Sampler: the SM clock and board power from NVML every 5 ms while a benchmark runs.
- smi: one nvidia-smi query line (clocks, power), for a run's env.json before and after.
- hlo_lines: the lines of XLA's optimized HLO of a step, from the text file or the tarball
  of an `--xla_dump_to` folder.
- ncu_script_args / find_ncu / ncu_children: the flags of a script that profiles its own
  `--ncu-child` workloads, Nsight Compute, and one profiled kernel of each workload, into
  OUTDIR/ncu.txt.

torch and pynvml are imported where they are used, so a JAX-only script imports this module
without them.
"""
import argparse
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
import traceback


class RunLog:
    """Progress log of one run (in the folder out, made where missing), and the seconds left of
    its budget, both counted from t0."""

    def __init__(self, out, budget, t0):
        self.budget, self.t0 = budget, t0
        os.makedirs(out, exist_ok=True)
        self.f = open(os.path.join(out, "log.txt"), "a")

    def log(self, *a):
        msg = "[%6.1fs] " % (time.time() - self.t0) + " ".join(str(x) for x in a)
        print(msg, flush=True)
        self.f.write(msg + "\n")
        self.f.flush()

    def left(self):
        return self.budget - (time.time() - self.t0)


def event_seconds(fn):
    """Device time (s) of one call of fn, between two CUDA events."""
    import torch
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / 1e3


def median_seconds(fn, reps, during=None, per=1):
    """Median device time (s) of reps back-to-back calls of fn, each between two CUDA events,
    divided by per (the calls one fn() makes); during is a context (a Sampler) held while they
    run, the final synchronize included."""
    import torch
    ts = []
    with during if during is not None else contextlib.nullcontext():
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            ts.append((s, e))
        torch.cuda.synchronize()
    v = sorted(a.elapsed_time(b) / 1e3 / per for a, b in ts)
    return v[len(v) // 2]


SMI_FIELDS = "name,clocks.sm,clocks.mem,power.draw,temperature.gpu,memory.total"


def smi(fields=SMI_FIELDS, timeout=20, failed=lambda e: "nvidia-smi failed: %r" % e):
    """nvidia-smi's CSV line (no header) of the query fields, or failed(the exception) where it
    cannot be run in timeout seconds."""
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=timeout).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return failed(e)


def median_call(fn, reps=20, warmup=3):
    """median_seconds of reps calls of fn after warmup calls (and a synchronize)."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    return median_seconds(fn, reps)


def sm_clock_power(nv):
    """(SM clock MHz, board power W) of the NVML device handle nv, or None when nv is None."""
    if nv is None:
        return None
    import pynvml
    return (pynvml.nvmlDeviceGetClockInfo(nv, pynvml.NVML_CLOCK_SM),
            pynvml.nvmlDeviceGetPowerUsage(nv) / 1e3)


class Sampler:
    """Samples the SM clock and the board power of NVML handle nv every 5 ms while a benchmark
    runs (nothing when nv is None)."""

    def __init__(self, nv):
        self.nv, self.s, self.on = nv, [], False

    def __enter__(self):
        self.on = True
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()
        return self

    def run(self):
        while self.on:
            v = sm_clock_power(self.nv)
            if v:
                self.s.append(v)
            time.sleep(0.005)

    def __exit__(self, *a):
        self.on = False
        self.t.join()

    def stats(self):
        if not self.s:
            return {}
        c = [x[0] for x in self.s]
        p = [x[1] for x in self.s]
        return {"clock_mhz_mean": sum(c) / len(c), "clock_mhz_min": min(c), "clock_mhz_max": max(c),
                "power_w_mean": sum(p) / len(p), "samples": len(c)}


def hlo_lines(path):
    """The lines of XLA's optimized HLO: the file at path, or the after_optimizations.txt inside
    it where path is a .tar.gz of a dump folder."""
    if path.endswith((".tar.gz", ".tgz")):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.name.endswith("after_optimizations.txt"):
                    return io.TextIOWrapper(t.extractfile(m)).read().splitlines()
        raise SystemExit(path + ": no after_optimizations.txt inside")
    return open(path).read().splitlines()


def ncu_script_args(budget):
    """The parsed flags of a script that profiles its own workloads with ncu: --budget SECONDS
    (default budget), --out DIR (default $OUT, made where missing), --quick, and the hidden
    --ncu-child WORKLOAD with which ncu_children runs the script again."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=budget)
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ncu-child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    return args


# Where the CUDA toolkit and a standalone Nsight Compute install put ncu, for a PATH without it.
NCU_PATHS = ["/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"]


def find_ncu():
    """Nsight Compute's ncu: on PATH, else at NCU_PATHS; None where the machine has none."""
    found = shutil.which("ncu")
    if found:
        return found
    for p in NCU_PATHS:
        if os.path.exists(p):
            return p
    return None


def ncu_children(ncu, script, out, children, ncu_args, rl, stop_below, cap, margin, tails):
    """Profiles, for each child in children, one kernel (the launch after one warm-up) of
    `python3 script --ncu-child CHILD --out out` with ncu and ncu_args (its metrics or sections
    and its -k kernel filter), while the RunLog rl has stop_below seconds left or more; each ncu
    run may take max(10, min(cap, seconds left - margin)) s. Writes each run's return code and
    the last tails[0] and tails[1] characters of its stdout and stderr to out/ncu.txt."""
    runs = []
    for what in children:
        if rl.left() < stop_below:
            break
        try:
            cmd = [ncu] + ncu_args + ["--launch-skip", "1", "--launch-count", "1",
                                      sys.executable, os.path.abspath(script), "--ncu-child", what, "--out", out]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=max(10, min(cap, rl.left() - margin)))
            runs.append("### %s rc=%d\n%s\n%s" % (what, r.returncode, r.stdout[-tails[0]:], r.stderr[-tails[1]:]))
            rl.log("ncu", what, "rc", r.returncode)
        except Exception:  # noqa: BLE001
            runs.append("### %s failed\n%s" % (what, traceback.format_exc()))
    with open(os.path.join(out, "ncu.txt"), "w") as f:
        f.write("\n".join(runs))
