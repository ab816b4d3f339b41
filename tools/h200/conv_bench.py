#!/usr/bin/env python3
"""cuDNN convolutions pass by pass: forward, data gradient and filter gradient of each layer
shape, timed apart, in TF32 and 16-bit, NHWC, with the algorithm cuDNN's autotuning keeps.

Reads the layer shapes from SHAPES (one JSON object per line, tools/h200/conv_shapes.py's
output: model, layer, count, n, h, w, c, k, r, s, stride, pad) and runs, for each config of
--plan (model:prec:batch), every shape of that model at that batch:
  fwd    y = conv(x, w)                     (aten.convolution)
  dgrad  dx = conv_backward(dy, x, w)[0]    (aten.convolution_backward, output_mask 1,0,0)
  wgrad  dw = conv_backward(dy, x, w)[1]    (output_mask 0,1,0)
with torch.backends.cudnn.benchmark on (PyTorch times cuDNN's engines on the first call and
keeps the fastest, as XLA's conv algorithm picker does) and benchmark_limit 0 (every engine,
not the heuristics' first 10), tensors channels_last. Each pass is timed from a CUDA graph of
CALLS calls replayed (so the host never binds; median of the replays, per call), and its
kernels are read from torch.profiler over one call (names and device time).

Writes into OUTDIR (default $OUT):
  convbench.csv  one row per (config, shape, pass): the shape, output P x Q, GFLOP (2 x N x P
                 x Q x K x C x R x S), us per call (graph), kernel_us (profiler: the sum of
                 the call's kernels), TFLOP/s, and the kernels (name:us|...)
  env.json, log.txt

Usage: python3 tools/h200/conv_bench.py SHAPES --plan resnet50:tf32:128,... [--budget S] [--out DIR]
"""
import argparse
import csv
import json
import os
import sys
import time
import traceback

import torch

from h200lib import RunLog, event_seconds, median_seconds, smi

T0 = time.time()
ap = argparse.ArgumentParser()
ap.add_argument("shapes")
ap.add_argument("--plan", required=True)
ap.add_argument("--budget", type=float, default=200.0)
ap.add_argument("--out", default=os.environ.get("OUT", "out"))
ap.add_argument("--limit", type=int, default=0, help="torch.backends.cudnn.benchmark_limit")
args = ap.parse_args()
OUT = args.out
RL = RunLog(OUT, args.budget, T0)
log, left = RL.log, RL.left

assert torch.cuda.is_available(), "no CUDA device"
DEV = torch.device("cuda")
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.benchmark_limit = args.limit
DT = {"tf32": torch.float32, "fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
CALLS = 10


props = torch.cuda.get_device_properties(0)
env = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
       "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "device": props.name,
       "sms": props.multi_processor_count, "cc": "%d.%d" % (props.major, props.minor),
       "benchmark_limit": args.limit, "smi_before": smi(), "argv": sys.argv}
json.dump(env, open(os.path.join(OUT, "env.json"), "w"), indent=1)
log("env", json.dumps(env))

SHAPES = [json.loads(l) for l in open(args.shapes) if l.strip()]


def graph_seconds(fn):
    """Median device time (s) of one fn() call, from a CUDA graph of CALLS calls."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(CALLS):
            fn()
    g.replay()
    torch.cuda.synchronize()
    one = event_seconds(g.replay)
    reps = max(3, min(30, int(0.03 / max(one, 1e-6))))
    t = median_seconds(g.replay, reps, per=CALLS)
    del g
    return t


def kernels(fn):
    """The kernels of one fn() call: [(name, us)]."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    out = []
    for ev in p.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            out.append((ev.name, ev.device_time))
    return out


FIELDS = ["model", "layer", "count", "prec", "n", "h", "w", "c", "k", "r", "s", "stride", "pad", "p", "q",
          "pass", "gflop", "us", "kernel_us", "tflops", "kernels"]
ROWS = []


def write():
    with open(os.path.join(OUT, "convbench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in ROWS:
            w.writerow({k: r.get(k, "") for k in FIELDS})


def run_shape(sh, prec, batch):
    torch.backends.cudnn.allow_tf32 = prec == "tf32"
    dt = DT[prec]
    n, c, h, wd, k, r, s = batch, sh["c"], sh["h"], sh["w"], sh["k"], sh["r"], sh["s"]
    st, pd = tuple(sh["stride"]), tuple(sh["pad"])
    x = torch.randn(n, c, h, wd, device=DEV, dtype=dt).to(memory_format=torch.channels_last)
    w = (torch.randn(k, c, r, s, device=DEV, dtype=dt) * 0.05).to(memory_format=torch.channels_last)
    conv = torch.ops.aten.convolution.default
    bwd = torch.ops.aten.convolution_backward.default
    y = conv(x, w, None, list(st), list(pd), [1, 1], False, [0, 0], 1)
    dy = torch.randn_like(y).contiguous(memory_format=torch.channels_last)
    p, q = y.shape[2], y.shape[3]
    gflop = 2.0 * n * p * q * k * c * r * s / 1e9
    passes = {
        "fwd": lambda: conv(x, w, None, list(st), list(pd), [1, 1], False, [0, 0], 1),
        "dgrad": lambda: bwd(dy, x, w, None, list(st), list(pd), [1, 1], False, [0, 0], 1, [True, False, False]),
        "wgrad": lambda: bwd(dy, x, w, None, list(st), list(pd), [1, 1], False, [0, 0], 1, [False, True, False]),
    }
    for name, fn in passes.items():
        if name == "dgrad" and c <= 4:  # a first layer: Keras computes no input gradient
            continue
        fn()  # cuDNN's autotuning runs here
        torch.cuda.synchronize()
        sec = graph_seconds(fn)
        ks = kernels(fn)
        row = dict(model=sh["model"], layer=sh["layer"], count=sh["count"], prec=prec, n=n, h=h, w=wd, c=c, k=k,
                   r=r, s=s, stride="%dx%d" % st, pad="%dx%d" % pd, p=p, q=q, **{"pass": name},
                   gflop="%.4f" % gflop, us="%.2f" % (sec * 1e6),
                   kernel_us="%.2f" % sum(t for _, t in ks), tflops="%.1f" % (gflop / 1e3 / sec),
                   kernels="|".join("%s:%.1f" % (nm[:160], t) for nm, t in ks))
        ROWS.append(row)
        log(prec, batch, sh["layer"], name, "%dx%d/%d c%d k%d %dx%d" % (r, s, st[0], c, k, p, q),
            "%.1f us %s TFLOP/s" % (sec * 1e6, row["tflops"]), ks[0][0][:70] if ks else "")
    del x, w, y, dy


for cfg in args.plan.split(","):
    model, prec, batch = cfg.split(":")
    shapes = [s for s in SHAPES if s["model"] == model]
    for sh in shapes:
        if left() < 20:
            log("budget: stopping at", cfg, sh["layer"])
            break
        try:
            run_shape(sh, prec, int(batch))
        except Exception:  # noqa: BLE001
            log("failed", cfg, sh["layer"], traceback.format_exc())
            torch.cuda.empty_cache()
        write()
    torch.cuda.empty_cache()
    if left() < 20:
        break

env["smi_after"] = smi()
env["elapsed_s"] = time.time() - T0
json.dump(env, open(os.path.join(OUT, "env.json"), "w"), indent=1)
log("done", len(ROWS), "rows")
