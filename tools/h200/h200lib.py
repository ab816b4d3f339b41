"""Helpers the H200 recording scripts share (imported from beside them: each script is run as
`python3 tools/h200/SCRIPT.py`, which puts this folder on sys.path).

- RunLog: the progress log (stdout and OUTDIR/log.txt, each line stamped with the seconds since
  the script started) and the seconds left of the run's budget.
- event_seconds / median_seconds: device time of GPU work between two CUDA events (PyTorch).
- Sampler: the SM clock and board power from NVML every 5 ms while a benchmark runs.
- smi: one nvidia-smi query line (clocks, power), for a run's env.json before and after.
- hlo_lines: the lines of XLA's optimized HLO of a step, from the text file or the tarball
  of an `--xla_dump_to` folder.

torch and pynvml are imported where they are used, so a JAX-only script imports this module
without them.
"""
import contextlib
import io
import os
import subprocess
import tarfile
import threading
import time


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
