#!/usr/bin/env python3
"""FP32 (CUDA-core SGEMM) and TF32 GEMMs at BERT-Large's shapes, with the SM clock.

Writes into OUTDIR (default $OUT):
  gemm.csv     one row per (prec, op, shape): median device time of one call (CUDA events),
               TFLOP/s, and the SM clock and power that NVML reported while it ran
               (mean, min, max over samples every 5 ms)
  kernels.csv  the kernel cuBLAS ran for each (prec, op, shape) (torch.profiler), with its
               device time
  tools.txt    which profiling tools the machine has (ncu, nsys, cuobjdump)
  ncu.txt      when ncu is there and may read the counters: the instruction mix of the FP32
               GEMM and convolution kernels (issued instructions, FFMA, issue-active share)
  env.json, log.txt

Shapes (tokens T = batch x sequence; TF1's and the Model Garden's BERT-Large, hidden 1024,
16 heads of 64, FFN 4096): forward dense M=T, N in {1024, 4096}, K in {1024, 4096} (the same
shapes are the input gradients), the weight gradients M,N in {1024, 4096}, K=T (X^T dY), and
the attention products per head as batched GEMMs: scores QK^T (seq x seq x 64) and
probabilities times V (seq x 64 x seq), batch = batch x 16 heads.

Usage: python3 tools/h200/gemm_clock.py [--budget SECONDS] [--out DIR] [--quick]
"""
import csv
import json
import os
import shutil
import sys
import time
import traceback

import torch

from h200lib import (RunLog, Sampler, event_seconds, find_ncu, median_seconds, ncu_children,
                     ncu_script_args, sm_clock_power)

T0 = time.time()
args = ncu_script_args(budget=200.0)
OUT = args.out
DEV = torch.device("cuda")


def ncu_child(what):
    """The workload ncu profiles: one warm-up and one timed kernel of each kind."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    if what == "sgemm":
        a = torch.randn(4096, 4096, device=DEV)
        b = torch.randn(4096, 4096, device=DEV)
        for _ in range(2):
            a @ b
    elif what == "sgemm_bert":
        a = torch.randn(3840, 1024, device=DEV)
        b = torch.randn(1024, 4096, device=DEV)
        for _ in range(2):
            a @ b
    elif what == "conv":
        x = torch.randn(64, 256, 14, 14, device=DEV)
        w = torch.randn(256, 256, 3, 3, device=DEV)
        for _ in range(2):
            torch.nn.functional.conv2d(x, w, padding=1)
    torch.cuda.synchronize()


if args.ncu_child:
    ncu_child(args.ncu_child)
    sys.exit(0)

RL = RunLog(OUT, args.budget, T0)
log, left = RL.log, RL.left


try:
    import pynvml
    pynvml.nvmlInit()
    NV = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception as e:  # noqa: BLE001
    pynvml, NV = None, None
    log("pynvml unavailable:", repr(e))


env = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
       "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0), "argv": sys.argv}
if NV is not None:
    env["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(NV, pynvml.NVML_CLOCK_SM)
    env["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(NV) / 1e3
    env["idle"] = sm_clock_power(NV)
json.dump(env, open(os.path.join(OUT, "env.json"), "w"), indent=1)
log("env", json.dumps(env))

# Which tools are there.
tools = {t: shutil.which(t) for t in ["ncu", "nsys", "cuobjdump", "nvdisasm", "nvcc"]}
for d in ["/usr/local/cuda/bin", "/opt/nvidia/nsight-compute"]:
    if os.path.isdir(d):
        tools["dir:" + d] = " ".join(sorted(os.listdir(d))[:60])
open(os.path.join(OUT, "tools.txt"), "w").write(json.dumps(tools, indent=1) + "\n")
log("tools", json.dumps(tools))

H, HEADS, HD, FFN = 1024, 16, 64, 4096
TOKENS = [768, 1536, 3840, 4096, 8192] if not args.quick else [256]
ATT = [(384, 2), (384, 4), (384, 10), (128, 32), (512, 8)] if not args.quick else [(128, 2)]
shapes = []  # (op, batch, M, N, K, a_transposed)
shapes.append(("square", 1, 8192, 8192, 8192, False))
shapes.append(("square", 1, 4096, 4096, 4096, False))
for t in TOKENS:
    for n, k in [(H, H), (FFN, H), (H, FFN)]:
        shapes.append(("dense", 1, t, n, k, False))
    for m, n in [(H, H), (H, FFN), (FFN, H)]:
        shapes.append(("wgrad", 1, m, n, t, True))
for s, b in ATT:
    shapes.append(("scores", b * HEADS, s, s, HD, False))
    shapes.append(("context", b * HEADS, s, HD, s, False))


def operands(bt, m, n, k, at):
    if bt > 1:
        return torch.randn(bt, m, k, device=DEV), torch.randn(bt, k, n, device=DEV)
    a = torch.randn(k, m, device=DEV).t() if at else torch.randn(m, k, device=DEV)
    return a, torch.randn(k, n, device=DEV)


def timed(fn, min_time):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    one = max(event_seconds(fn), 1e-6)
    reps = int(min(2000, max(5, min_time / one)))
    sm = Sampler(NV)
    return median_seconds(fn, reps, during=sm), reps, sm.stats()


rows = []
fields = ["prec", "op", "batch", "m", "n", "k", "flops", "seconds", "tflops", "reps",
          "clock_mhz_mean", "clock_mhz_min", "clock_mhz_max", "power_w_mean", "samples"]
kern = []
for prec in ["fp32", "tf32"]:
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    for op, bt, m, n, k, at in shapes:
        if left() < 40:
            log("budget: stopping at", prec, op, m, n, k)
            break
        try:
            a, b = operands(bt, m, n, k, at)
            fn = (lambda: torch.bmm(a, b)) if bt > 1 else (lambda: a @ b)
            sec, reps, st = timed(fn, 0.15 if op != "square" else 0.4)
            fl = 2.0 * bt * m * n * k
            r = dict(prec=prec, op=op, batch=bt, m=m, n=n, k=k, flops=fl, seconds=sec,
                     tflops=fl / sec / 1e12, reps=reps, **st)
            rows.append(r)
            log(prec, op, bt, m, n, k, "%.1f us %.1f TFLOP/s clk %s" % (sec * 1e6, fl / sec / 1e12, st.get("clock_mhz_mean")))
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
                fn()
                torch.cuda.synchronize()
            for ev in p.events():
                if ev.device_type == torch.autograd.DeviceType.CUDA:
                    kern.append(dict(prec=prec, op=op, batch=bt, m=m, n=n, k=k, kernel=ev.name,
                                     device_us=ev.device_time))
            del a, b
        except Exception:  # noqa: BLE001
            log("failed", prec, op, m, n, k, traceback.format_exc())
    with open(os.path.join(OUT, "gemm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})
    with open(os.path.join(OUT, "kernels.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["prec", "op", "batch", "m", "n", "k", "kernel", "device_us"])
        w.writeheader()
        for r in kern:
            w.writerow(r)

# Instruction mix of the FP32 kernels, where ncu may read the counters.
ncu = find_ncu()
if ncu and left() > 30:
    metrics = ",".join([
        "smsp__inst_executed.sum",
        "smsp__sass_inst_executed_op_ffma.sum",
        "smsp__inst_executed_pipe_fma.sum",
        "smsp__issue_active.avg.pct_of_peak_sustained_active",
        "smsp__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__cycles_elapsed.avg",
        "smsp__cycles_active.avg",
        "gpc__cycles_elapsed.avg.per_second",
    ])
    ncu_children(ncu, __file__, OUT, ["sgemm", "sgemm_bert", "conv"],
                 ["--csv", "--metrics", metrics,
                  "-k", "regex:gemm|conv|winograd|implicit|xmma|cutlass|sm90|sm80|ampere|volta"],
                 RL, stop_below=20, cap=60, margin=10, tails=(6000, 2000))
log("done")
