#!/usr/bin/env python3
"""Ground truth for gpusim's input pipeline: a PyTorch DataLoader feeding a GPU.

Each dataset element costs a fixed wall-clock time of CPU work (a busy loop on
time.perf_counter, ELEM_COST_S; the workers record each element's real start and end),
the GPU step is a chain of float32 matrix products of known duration, and the
training loop synchronises at the end of every step (as loss.item() does). For
num_workers in WORKERS the script records every step's host times, the GPU busy
interval of every step (CUDA events), and NVML's utilization.gpu sampled every 20 ms.

Usage (on the GPU machine):  python3 tools/input/dataloader_bench.py [OUTDIR]
Writes OUTDIR/dataloader.json (default $OUT, else .). Needs torch with CUDA and pynvml;
fails loudly without them. pipeline/testdata/h200/README.md says how it was run.
"""
import json
import os
import platform
import statistics
import sys
import threading
import time

try:
    import torch
    import torch.utils.data as tud
except ImportError as e:  # the device image has torch; this machine does not
    sys.exit(f"dataloader_bench: torch is required: {e}")
try:
    import pynvml
except ImportError as e:
    sys.exit(f"dataloader_bench: pynvml (nvidia-ml-py) is required: {e}")

ELEM_SHAPE = (3, 64, 64)       # float32: 49,152 bytes per element
BATCH = 32
ELEM_COST_S = 0.002            # target CPU cost per element
GPU_STEP_S = 0.016             # target GPU time per step
MATMUL_N = 4096
WORKERS = [0, 2, 3, 8]
WARMUP_STEPS = 6
MEASURE_S = 6.0
NVML_PERIOD_S = 0.02


def busy(d):
    """Keeps one core busy for d seconds of wall-clock time.

    A fixed-duration loop, not a fixed amount of work: the first run on the device
    (a fixed-work loop, kept as testdata/h200/dataloader-fixedwork.json) showed the
    VM's per-core speed drifting by +-40% within a minute, which would make the
    per-element cost unknown. With at most 8 workers on 16 cores no loop is
    preempted, so wall time is CPU time.
    """
    t_end = time.perf_counter() + d
    while time.perf_counter() < t_end:
        pass


def _time(fn, *a):
    t = time.perf_counter()
    fn(*a)
    return time.perf_counter() - t


class BusyDataset(tud.Dataset):
    """Element i: ELEM_COST_S of busy CPU, then a float32 tensor; also its start and end times."""

    def __init__(self, cost_s, length):
        self.cost_s = cost_s
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        t0 = time.perf_counter()
        busy(self.cost_s)
        x = torch.full(ELEM_SHAPE, float(i % 7))
        return x, t0, time.perf_counter()


class NVMLSampler(threading.Thread):
    def __init__(self, handle):
        super().__init__(daemon=True)
        self.h = handle
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            u = pynvml.nvmlDeviceGetUtilizationRates(self.h)
            self.samples.append((time.perf_counter(), u.gpu))
            time.sleep(NVML_PERIOD_S)


def gpu_step(A, x):
    y = x.float().mean()
    h = A
    for _ in range(gpu_step.k):
        h = torch.mm(A, h) * (1.0 / 64)
    return (h.mean() + y).item()     # synchronises, as loss.item() does


def run_loop(loader_iter, A, sampler, t_stop=None, max_steps=None, to_gpu=True, gpu_only_x=None):
    """Runs steps; returns per-step records (host seconds, GPU busy intervals)."""
    ref = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    ref.record()
    torch.cuda.synchronize()
    t_ref = time.perf_counter()
    recs = []
    step = 0
    while True:
        t0 = time.perf_counter()
        made = None
        if gpu_only_x is None:
            xb, e0, e1 = next(loader_iter)
        else:
            xb = gpu_only_x
        t1 = time.perf_counter()
        if gpu_only_x is None:
            made = (float(e0.min()) - t_ref, float(e1.max()) - t_ref, float((e1 - e0).mean()))
        if to_gpu and gpu_only_x is None:
            xb = xb.cuda()
        t2 = time.perf_counter()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        gpu_step(A, xb)
        e.record()
        e.synchronize()
        t3 = time.perf_counter()
        recs.append({"t_ask": t0 - t_ref, "t_batch": t1 - t_ref, "t_h2d": t2 - t_ref, "t_end": t3 - t_ref,
                     "gpu_start": ref.elapsed_time(s) / 1e3, "gpu_end": ref.elapsed_time(e) / 1e3,
                     "made": made})
        step += 1
        if max_steps is not None and step >= max_steps:
            break
        if t_stop is not None and time.perf_counter() >= t_stop:
            break
    return t_ref, recs


def summarize(recs, samples, t_ref, warmup):
    steady = recs[warmup:]
    steps = [b["t_end"] - a["t_end"] for a, b in zip(steady, steady[1:])]
    waits = [r["t_batch"] - r["t_ask"] for r in steady[1:]]
    t0, t1 = steady[0]["t_end"], steady[-1]["t_end"]
    busy = sum(r["gpu_end"] - r["gpu_start"] for r in steady[1:])
    # NVML reports the busy share of its own past sample period, so keep samples taken
    # at least 0.2 s after the steady window starts.
    util = [u for (t, u) in samples if t0 + 0.2 <= t - t_ref <= t1]
    made = [r["made"] for r in steady if r["made"]]
    return {
        "elem_cost_mean_s": statistics.fmean(m[2] for m in made) if made else None,
        "batch_make_mean_s": statistics.fmean(m[1] - m[0] for m in made) if made else None,
        "steps": len(steps),
        "step_time_median_s": statistics.median(steps),
        "step_time_mean_s": statistics.fmean(steps),
        "input_wait_mean_s": statistics.fmean(waits),
        "gpu_busy_fraction_events": busy / (t1 - t0),
        "nvml_util_mean": statistics.fmean(util) / 100 if util else None,
        "nvml_util_min": min(util) / 100 if util else None,
        "nvml_util_max": max(util) / 100 if util else None,
        "nvml_samples": len(util),
    }


def h2d_bandwidth(nbytes, pinned, reps=20):
    src = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        dst.copy_(src)
    torch.cuda.synchronize()
    return nbytes * reps / (time.perf_counter() - t)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
    if not torch.cuda.is_available():
        sys.exit("dataloader_bench: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    host = {
        "os_cpu_count": os.cpu_count(),
        "sched_affinity": len(os.sched_getaffinity(0)),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "driver": pynvml.nvmlSystemGetDriverVersion(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            host["cpu_model"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        with open("/proc/meminfo") as f:
            host["meminfo_total"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    print("host", json.dumps(host), flush=True)

    ds = BusyDataset(ELEM_COST_S, 1 << 20)
    elem = [_time(ds.__getitem__, i) for i in range(200)]
    loader0 = iter(tud.DataLoader(ds, batch_size=BATCH, num_workers=0))
    batch_serial = [_time(next, loader0) for _ in range(15)]
    cpu = {"elem_cost_target_s": ELEM_COST_S, "elem_cost_mean_s": statistics.fmean(elem),
           "elem_cost_stdev_s": statistics.stdev(elem), "batch_serial_mean_s": statistics.fmean(batch_serial),
           "batch_serial_median_s": statistics.median(batch_serial),
           "elem_bytes": 4 * ELEM_SHAPE[0] * ELEM_SHAPE[1] * ELEM_SHAPE[2], "batch": BATCH}
    print("cpu", json.dumps(cpu), flush=True)

    A = torch.randn(MATMUL_N, MATMUL_N, device="cuda")
    gpu_step.k = 1
    x_gpu = torch.zeros((BATCH,) + ELEM_SHAPE, device="cuda").normal_()
    for _ in range(3):
        gpu_step(A, x_gpu)
    t_mm = min(_time(gpu_step, A, x_gpu) for _ in range(10))
    gpu_step.k = max(1, round(GPU_STEP_S / t_mm))

    sampler = NVMLSampler(h)
    sampler.start()
    results = {"host": host, "cpu": cpu, "matmul_n": MATMUL_N, "matmuls_per_step": gpu_step.k,
               "nvml_poll_period_s": NVML_PERIOD_S, "configs": []}
    t_ref, recs = run_loop(None, A, sampler, t_stop=time.perf_counter() + 4.0, gpu_only_x=x_gpu)
    base = summarize(recs, sampler.samples, t_ref, WARMUP_STEPS)
    base["gpu_busy_per_step_s"] = statistics.median(r["gpu_end"] - r["gpu_start"] for r in recs[WARMUP_STEPS:])
    results["gpu_only"] = base
    print("gpu_only", json.dumps(base), flush=True)

    for w in WORKERS:
        kw = {"num_workers": w}
        if w > 0:
            kw["prefetch_factor"] = 2
        loader = tud.DataLoader(ds, batch_size=BATCH, **kw)
        it = iter(loader)
        t_ref, recs = run_loop(it, A, sampler, t_stop=time.perf_counter() + MEASURE_S)
        del it, loader
        s = summarize(recs, sampler.samples, t_ref, WARMUP_STEPS)
        s["num_workers"] = w
        s["prefetch_factor"] = 2 if w > 0 else None
        print("config", json.dumps(s), flush=True)
        s["records"] = recs
        s["nvml"] = [(round(t - t_ref, 4), u) for (t, u) in sampler.samples
                     if recs[0]["t_ask"] <= t - t_ref <= recs[-1]["t_end"]]
        results["configs"].append(s)

    sampler.stop.set()
    sampler.join()
    try:  # the driver's own samples give its sample period
        vt, smp = pynvml.nvmlDeviceGetSamples(h, pynvml.NVML_GPU_UTILIZATION_SAMPLES, 0)
        ts = [s.timeStamp for s in smp]
        gaps = [b - a for a, b in zip(ts, ts[1:]) if b > a]
        results["nvml_driver_sample_period_s"] = statistics.median(gaps) / 1e6 if gaps else None
    except pynvml.NVMLError as e:
        results["nvml_driver_sample_period_s"] = None
        results["nvml_samples_error"] = str(e)
    batch_bytes = BATCH * cpu["elem_bytes"]
    results["h2d"] = {"batch_bytes": batch_bytes,
                      "pageable_batch_Bps": h2d_bandwidth(batch_bytes, False),
                      "pinned_batch_Bps": h2d_bandwidth(batch_bytes, True),
                      "pageable_64MiB_Bps": h2d_bandwidth(64 << 20, False),
                      "pinned_64MiB_Bps": h2d_bandwidth(64 << 20, True)}
    print("nvml_period", results["nvml_driver_sample_period_s"], "h2d", json.dumps(results["h2d"]), flush=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "dataloader.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"{'workers':>7} {'step_ms':>8} {'wait_ms':>8} {'busy':>6} {'nvml':>6}")
    print(f"{'gpu':>7} {1e3 * base['step_time_median_s']:8.2f} {'':>8} "
          f"{base['gpu_busy_fraction_events']:6.3f} {base['nvml_util_mean'] or -1:6.3f}")
    for s in results["configs"]:
        print(f"{s['num_workers']:>7} {1e3 * s['step_time_median_s']:8.2f} {1e3 * s['input_wait_mean_s']:8.2f} "
              f"{s['gpu_busy_fraction_events']:6.3f} {s['nvml_util_mean'] or -1:6.3f}")


if __name__ == "__main__":
    main()
