#!/usr/bin/env python3
"""GEMM rate by operand layout and by K, FP32 (SGEMM), TF32 and BF16, with the SM clock.

Writes into OUTDIR (default $OUT):
  layout.csv   one row per (prec, shape, layout): device time per call of 20 calls replayed
               from a CUDA graph (so the host never binds), TFLOP/s, the SM clock and power
               NVML reported meanwhile, and the kernel cuBLAS ran (torch.profiler, one call).
               a_major / b_major say which dimension of each operand is contiguous: "k" (the
               contracted one: cuBLAS's "T" for A and "N" for B in column-major terms) or "mn".
  ksweep.csv   the same for GEMMs of growing K at a fixed output: batched 160 x 384 x 384
               (BERT-Large's attention scores at batch 10, seq 384) and 4096 x 4096
  ncu.txt      Nsight Compute's warp-state and scheduler sections of the FP32 SGEMM kernels
               (why the issue slots go idle)
  env.json, log.txt

Usage: python3 tools/h200/gemm_layout.py [--budget SECONDS] [--out DIR] [--quick]
(--quick: one small shape per table and a 512^3 SGEMM for ncu, a smoke test of the script)
"""
import csv
import json
import os
import sys
import time
import traceback

import torch

from h200lib import (RunLog, Sampler, event_seconds, find_ncu, median_seconds, ncu_children,
                     ncu_script_args)

T0 = time.time()
args = ncu_script_args(budget=120.0)
OUT = args.out
DEV = torch.device("cuda")

if args.ncu_child:
    torch.backends.cuda.matmul.allow_tf32 = False
    m, n, k = (int(x) for x in args.ncu_child.split("x"))
    a = torch.randn(m, k, device=DEV)
    b = torch.randn(k, n, device=DEV)
    for _ in range(2):
        a @ b
    torch.cuda.synchronize()
    sys.exit(0)

RL = RunLog(OUT, args.budget, T0)
log, left = RL.log, RL.left


import pynvml  # noqa: E402

pynvml.nvmlInit()
NV = pynvml.nvmlDeviceGetHandleByIndex(0)


env = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
       "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0), "argv": sys.argv,
       "max_sm_clock_mhz": pynvml.nvmlDeviceGetMaxClockInfo(NV, pynvml.NVML_CLOCK_SM),
       "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(NV) / 1e3}
json.dump(env, open(os.path.join(OUT, "env.json"), "w"), indent=1)
log("env", json.dumps(env))

DT = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16}
CALLS = 20


def operand(rows, cols, major, dt, batch=1):
    """A rows x cols operand whose contiguous dimension is cols (major 'k' for A, 'mn' for B)
    or rows: the transposed view of a contiguous cols x rows tensor."""
    shp = (batch,) if batch > 1 else ()
    if major == "row":
        return torch.randn(*shp, rows, cols, device=DEV, dtype=dt)
    return torch.randn(*shp, cols, rows, device=DEV, dtype=dt).transpose(-1, -2)


def measure(prec, batch, m, n, k, am, bm):
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    dt = DT[prec]
    # A is m x k: K-major when its rows are contiguous along k; B is k x n: K-major when
    # contiguous along k, i.e. the transposed view of an n x k tensor.
    a = operand(m, k, "row" if am == "k" else "col", dt, batch)
    b = operand(k, n, "col" if bm == "k" else "row", dt, batch)
    mm = torch.bmm if batch > 1 else torch.matmul
    for _ in range(3):
        mm(a, b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            mm(a, b)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        for _ in range(CALLS):
            mm(a, b)
    g.replay()
    torch.cuda.synchronize()
    one = event_seconds(g.replay)
    reps = max(3, min(200, int(0.15 / max(one, 1e-6))))
    sm = Sampler(NV)
    sec = median_seconds(g.replay, reps, during=sm, per=CALLS)
    names = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        mm(a, b)
        torch.cuda.synchronize()
    for ev in p.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and not ev.name.startswith("Memset"):
            names.append(ev.name[:140])
    fl = 2.0 * batch * m * n * k
    r = dict(prec=prec, batch=batch, m=m, n=n, k=k, a_major=am, b_major=bm, seconds=sec,
             tflops=fl / sec / 1e12, reps=reps, kernel="|".join(names), **sm.stats())
    del g, a, b
    return r


FIELDS = ["prec", "batch", "m", "n", "k", "a_major", "b_major", "seconds", "tflops", "reps",
          "clock_mhz_mean", "clock_mhz_min", "power_w_mean", "kernel"]


def write(name, rows):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in FIELDS})


def run(name, plan):
    rows = []
    for p in plan:
        if left() < 35:
            log("budget: stopping", name, p)
            break
        try:
            r = measure(*p)
            rows.append(r)
            log(name, *p, "%.1f us %.1f TFLOP/s clk %.0f" % (r["seconds"] * 1e6, r["tflops"], r.get("clock_mhz_mean", 0)))
        except Exception:  # noqa: BLE001
            log("failed", p, traceback.format_exc())
        write(name, rows)


LAYOUTS = [("k", "k"), ("k", "mn"), ("mn", "k"), ("mn", "mn")]
SHAPES = [(4096, 4096, 1024), (3840, 1024, 4096), (1024, 4096, 3840), (4096, 4096, 4096)]
KS_BATCHED, KS_SQUARE = [16, 32, 64, 128, 256, 512, 1024], [64, 128, 256, 512, 1024, 4096]
NCU_SHAPES = ["4096x4096x4096", "3840x4096x1024"]
if args.quick:
    SHAPES, KS_BATCHED, KS_SQUARE, NCU_SHAPES = [(512, 512, 256)], [16, 64], [64], ["512x512x512"]
plan = []
for prec in ["tf32", "bf16", "fp32"]:
    for m, n, k in SHAPES:
        for am, bm in LAYOUTS:
            plan.append((prec, 1, m, n, k, am, bm))
run("layout.csv", plan)

plan = []
for prec in ["fp32", "tf32", "bf16"]:
    for k in KS_BATCHED:
        plan.append((prec, 160, 384, 384, k, "k", "mn"))
    for k in KS_SQUARE:
        plan.append((prec, 1, 4096, 4096, k, "k", "mn"))
run("ksweep.csv", plan)

ncu = find_ncu()
if ncu:
    ncu_children(ncu, __file__, OUT, NCU_SHAPES,
                 ["--section", "WarpStateStats", "--section", "SchedulerStats", "-k", "regex:gemm|sgemm"],
                 RL, stop_below=15, cap=50, margin=5, tails=(8000, 1500))
log("done")
