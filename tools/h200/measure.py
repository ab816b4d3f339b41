#!/usr/bin/env python3
"""Ground truth for gpusim's cost model, measured with PyTorch on one GPU.

Writes into OUTDIR (default $OUT):
  env.json      torch/CUDA/device facts, nvidia-smi clocks before and after
  micro.csv     matmul, conv, element-wise, norm, copy and launch micro-benchmarks
  steps.csv     training-step times and memory per (model, precision, batch)
  ops.csv       every aten op of one training step per config, with kind, dtype, FLOPs, bytes
  kernels.csv   device time per aten op name from torch.profiler, one step per config
  log.txt       progress and tracebacks

Usage: python3 tools/h200/measure.py [--budget SECONDS] [--quick]
Each section catches its own errors (logged with the traceback) so one failure costs only
its rows; configs run in priority order and stop when the time budget is spent.
"""
import argparse
import csv
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from h200lib import RunLog, event_seconds, median_seconds, smi

T0 = time.time()
ap = argparse.ArgumentParser()
ap.add_argument("--budget", type=float, default=420.0, help="seconds for the whole run")
ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
ap.add_argument("--out", default=os.environ.get("OUT", "out"))
ap.add_argument("--layout", choices=["nhwc", "nchw"], default="nhwc",
                help="memory format of CNN activations and convolution micro-benchmarks")
ap.add_argument("--plan", default="", help="configs to run, model:prec:batch,... (default: the full plan)")
ap.add_argument("--micro", default="launch,matmul,conv,memory", help="micro-benchmark sections to run")
args = ap.parse_args()
OUT = args.out
RL = RunLog(OUT, args.budget, T0)
log, left = RL.log, RL.left


assert torch.cuda.is_available(), "no CUDA device"
DEV = torch.device("cuda")
MF = torch.channels_last if args.layout == "nhwc" else torch.contiguous_format
torch.backends.cudnn.benchmark = True  # TF autotunes convolutions too (TF_CUDNN_USE_AUTOTUNE=1)


props = torch.cuda.get_device_properties(0)
env = {
    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "torch": torch.__version__, "cuda": torch.version.cuda,
    "cudnn": torch.backends.cudnn.version(),
    "device": props.name, "sms": props.multi_processor_count,
    "total_memory": props.total_memory, "cc": "%d.%d" % (props.major, props.minor),
    "smi_before": smi(), "argv": sys.argv,
}
try:
    import torchvision
    env["torchvision"] = torchvision.__version__
except Exception as e:  # noqa: BLE001
    env["torchvision"] = "missing: %r" % e
try:
    import transformers
    env["transformers"] = transformers.__version__
except Exception as e:  # noqa: BLE001
    env["transformers"] = "missing: %r" % e
log("env", json.dumps(env))


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def bench(fn, reps=None, min_time=0.05):
    """Median device time (s) of fn() over reps calls, timed with CUDA events."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    if reps is None:
        one = max(event_seconds(fn), 1e-6)
        reps = int(min(200, max(5, min_time / one)))
    return median_seconds(fn, reps), reps


CONV_PRECS = ["fp32", "tf32", "bf16", "fp16"] if args.layout == "nhwc" else ["fp32", "tf32"]
DT = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
MICRO = []


def micro_row(**kw):
    MICRO.append(kw)


def section(name, fn):
    try:
        fn()
    except Exception:  # noqa: BLE001
        log("SECTION FAILED", name, traceback.format_exc())
    finally:
        torch.cuda.empty_cache()


def micro_matmul():
    sizes = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
             (4096, 4096, 4096), (8192, 8192, 8192), (2048, 768, 768), (2048, 3072, 768),
             (2048, 768, 3072), (8192, 768, 768), (8192, 3072, 768), (16384, 1000, 2048),
             (256, 4096, 25088), (4096, 50257, 768)]
    if args.quick:
        sizes = sizes[:3]
    for prec in ["fp32", "tf32", "bf16", "fp16"]:
        set_tf32(prec == "tf32")
        for m, n, k in sizes:
            a = torch.randn(m, k, device=DEV, dtype=DT[prec])
            b = torch.randn(k, n, device=DEV, dtype=DT[prec])
            t, reps = bench(lambda: torch.mm(a, b))
            el = a.element_size()
            micro_row(bench="matmul", prec=prec, shape="%dx%dx%d" % (m, n, k), flops=2.0 * m * n * k,
                      bytes=float((m * k + k * n + m * n) * el), kernels=1, seconds=t, reps=reps)
            del a, b
    set_tf32(True)
    log("matmul done")


def micro_conv():
    # (N, Cin, H, Cout, kernel, stride, groups): ResNet-50, VGG16 and MobileNetV2 layers.
    shapes = [(128, 3, 224, 64, 7, 2, 1), (128, 64, 56, 64, 3, 1, 1), (128, 64, 56, 256, 1, 1, 1),
              (128, 256, 56, 64, 1, 1, 1), (128, 128, 28, 128, 3, 1, 1), (128, 256, 14, 256, 3, 1, 1),
              (128, 512, 7, 512, 3, 1, 1), (128, 1024, 14, 256, 1, 1, 1), (64, 64, 224, 64, 3, 1, 1),
              (64, 256, 56, 256, 3, 1, 1), (128, 96, 112, 96, 3, 1, 96), (128, 144, 56, 144, 3, 1, 144),
              (128, 576, 14, 576, 3, 1, 576), (32, 64, 56, 64, 3, 1, 1)]
    if args.quick:
        shapes = shapes[:2]
    for prec in CONV_PRECS:
        set_tf32(prec == "tf32")
        for n, cin, h, cout, k, s, g in shapes:
            x = torch.randn(n, cin, h, h, device=DEV, dtype=DT[prec]).to(memory_format=MF)
            conv = nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False).to(DEV, DT[prec]).to(memory_format=MF)
            with torch.no_grad():
                y = conv(x)
                t, reps = bench(lambda: conv(x))
            ho = y.shape[2]
            flops = 2.0 * n * cout * ho * ho * (cin // g) * k * k
            el = x.element_size()
            byt = float((x.numel() + y.numel() + conv.weight.numel()) * el)
            micro_row(bench="conv", prec=prec, shape="n%d_c%d_h%d_o%d_k%d_s%d_g%d" % (n, cin, h, cout, k, s, g),
                      flops=flops, bytes=byt, kernels=1, seconds=t, reps=reps)
            del x, y, conv
    set_tf32(True)
    log("conv done")


def micro_memory():
    sizes = [1 << 14, 1 << 17, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]
    if args.quick:
        sizes = sizes[:3]
    for prec in ["fp32", "bf16", "fp16"]:
        for n in sizes:
            a = torch.randn(n, device=DEV, dtype=DT[prec])
            b = torch.randn(n, device=DEV, dtype=DT[prec])
            el = a.element_size()
            for name, fn, nbytes in [
                ("add", lambda: torch.add(a, b), 3 * n * el),
                ("relu", lambda: torch.relu(a), 2 * n * el),
                ("mul_", lambda: a.mul_(1.0000001), 2 * n * el),
                ("copy", lambda: b.copy_(a), 2 * n * el),
                ("cast", lambda: a.float() if prec != "fp32" else a.half(), n * el + n * (4 if prec != "fp32" else 2)),
                ("sum", lambda: a.sum(), n * el),
            ]:
                t, reps = bench(fn)
                micro_row(bench=name, prec=prec, shape=str(n), flops=float(n), bytes=float(nbytes),
                          kernels=1, seconds=t, reps=reps)
            del a, b
    # BatchNorm (training) and LayerNorm forward+backward at model sizes.
    for prec in ["fp32", "bf16"]:
        for n, c, h in [(128, 64, 112), (128, 256, 56), (128, 512, 28), (128, 2048, 7)]:
            if args.quick and n * c * h * h > 1 << 22:
                n = 2
            x = torch.randn(n, c, h, h, device=DEV, dtype=DT[prec]).to(memory_format=torch.channels_last)
            bn = nn.BatchNorm2d(c).to(DEV)
            with torch.autocast("cuda", dtype=DT[prec], enabled=prec != "fp32"):
                with torch.no_grad():
                    t, reps = bench(lambda: bn(x))
            micro_row(bench="batchnorm", prec=prec, shape="n%d_c%d_h%d" % (n, c, h), flops=float(x.numel() * 4),
                      bytes=float(2 * x.numel() * x.element_size()), kernels=1, seconds=t, reps=reps)
            del x, bn
        for rows, d in [(2048, 768), (8192, 768), (16384, 768)]:
            x = torch.randn(rows, d, device=DEV, dtype=DT[prec])
            ln = nn.LayerNorm(d).to(DEV, DT[prec])
            with torch.no_grad():
                t, reps = bench(lambda: ln(x))
            micro_row(bench="layernorm", prec=prec, shape="%dx%d" % (rows, d), flops=float(x.numel() * 5),
                      bytes=float(2 * x.numel() * x.element_size()), kernels=1, seconds=t, reps=reps)
            del x, ln
    log("memory-bound done")


def micro_launch():
    # Host time per op for a tiny op issued back to back (eager dispatch + cudaLaunchKernel).
    x = torch.zeros(1, device=DEV)
    for _ in range(200):
        x.add_(1)
    torch.cuda.synchronize()
    n = 5000
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    micro_row(bench="launch_host", prec="fp32", shape="1", flops=1.0, bytes=8.0, kernels=n,
              seconds=(t1 - t0) / n, reps=n)
    micro_row(bench="launch_total", prec="fp32", shape="1", flops=1.0, bytes=8.0, kernels=n,
              seconds=(t2 - t0) / n, reps=n)
    # Device-side time per tiny kernel when issued through a CUDA graph (no host in the loop).
    try:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            x.add_(1)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for _ in range(1000):
                x.add_(1)
        t, reps = bench(lambda: g.replay())
        micro_row(bench="kernel_gap_graph", prec="fp32", shape="1", flops=1.0, bytes=8.0, kernels=1000,
                  seconds=t / 1000, reps=reps)
    except Exception:  # noqa: BLE001
        log("graph launch failed", traceback.format_exc())
    # H2D pinned copy.
    for n in [1 << 20, 1 << 26, 1 << 28]:
        h = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        d = torch.empty(n, dtype=torch.uint8, device=DEV)
        t, reps = bench(lambda: d.copy_(h, non_blocking=True))
        micro_row(bench="h2d", prec="u8", shape=str(n), flops=0.0, bytes=float(n), kernels=1, seconds=t, reps=reps)
    log("launch done")


# ---------------------------------------------------------------- op logging

NOKERNEL = {
    "view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "as_strided", "detach",
    "alias", "slice", "select", "unsqueeze", "squeeze", "split", "split_with_sizes", "unbind", "chunk",
    "_reshape_alias", "lift_fresh", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
    "set_", "resize_", "is_same_size", "sym_size", "sym_stride", "sym_numel", "numel", "size", "stride",
    "_local_scalar_dense", "expand_as", "view_as", "unflatten", "flatten", "_has_compatible_shallow_copy_type",
    "is_nonzero", "item", "dim", "contiguous", "clone_noop", "_to_copy_noop", "unsafe_split", "narrow",
    "diagonal", "_unsafe_index", "record_stream", "_foreach_zero_noop", "lift_fresh_copy_noop",
}


def kind_of(name, out_dtype, in_dtype, phase):
    n = name
    if phase == "optimizer":
        return "optimizer"
    if n in ("mm", "addmm", "bmm", "baddbmm", "matmul", "addmv", "mv", "dot", "linear"):
        return "matmul"
    if "convolution" in n or n.startswith("cudnn_conv"):
        return "conv"
    if "batch_norm" in n or "layer_norm" in n or "group_norm" in n:
        return "norm"
    if "pool" in n:
        return "pool"
    if "embedding" in n or n in ("index_select", "gather", "index", "index_put_", "scatter_add_", "index_add_"):
        return "embedding"
    if n in ("_to_copy", "to", "_autocast_to_reduced_precision", "_autocast_to_full_precision"):
        return "cast" if out_dtype != in_dtype else "copy"
    if n in ("copy_",):
        return "cast" if out_dtype != in_dtype else "copy"
    if n in ("clone", "cat", "stack", "constant_pad_nd", "_to_copy"):
        return "copy"
    if n in ("sum", "mean", "amax", "max", "min", "_softmax", "_log_softmax", "_softmax_backward_data",
             "_log_softmax_backward_data", "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward",
             "argmax", "norm", "linalg_vector_norm", "var_mean", "std", "var", "logsumexp", "all", "any",
             "cross_entropy_loss", "nll_loss", "sum_", "prod"):
        return "reduction"
    return "elementwise"


def tensors_in(x, acc):
    if isinstance(x, torch.Tensor):
        acc.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            tensors_in(y, acc)
    elif isinstance(x, dict):
        for y in x.values():
            tensors_in(y, acc)
    return acc


def conv_flops(x_shape, w_shape, out_shape, transposed, groups):
    # 2 * N * Cout * prod(out spatial) * Cin/groups * prod(kernel)
    n = out_shape[0]
    cout = w_shape[0] if not transposed else w_shape[1] * groups
    cin_g = w_shape[1] if not transposed else w_shape[0] // groups
    spatial = 1
    for s in (out_shape[2:] if not transposed else x_shape[2:]):
        spatial *= s
    k = 1
    for s in w_shape[2:]:
        k *= s
    return 2.0 * n * cout * spatial * cin_g * k


def flops_of(name, a, out_list):
    try:
        if name == "mm":
            m, k = a[0].shape
            return 2.0 * m * k * a[1].shape[1]
        if name == "addmm":
            m, k = a[1].shape
            return 2.0 * m * k * a[2].shape[1]
        if name in ("bmm", "baddbmm"):
            x, y = (a[0], a[1]) if name == "bmm" else (a[1], a[2])
            b, m, k = x.shape
            return 2.0 * b * m * k * y.shape[2]
        if name == "convolution":
            x, w = a[0], a[1]
            return conv_flops(x.shape, w.shape, out_list[0].shape, bool(a[6]), int(a[8]))
        if name == "convolution_backward":
            go, x, w = a[0], a[1], a[2]
            transposed, groups, mask = bool(a[7]), int(a[9]), a[10]
            f = conv_flops(x.shape, w.shape, go.shape, transposed, groups)
            return f * (int(bool(mask[0])) + int(bool(mask[1])))
    except Exception:  # noqa: BLE001
        pass
    return float(sum(t.numel() for t in out_list))


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.rows = []
        self.phase = "forward"

    def __torch_dispatch__(self, func, types, a=(), kw=None):
        kw = kw or {}
        out = func(*a, **kw)
        name = func.overloadpacket.__name__
        if name in NOKERNEL:
            return out
        ins = tensors_in(list(a), [])
        ins = tensors_in(list(kw.values()), ins)
        outs = tensors_in(out, [])
        cuda_ins = [t for t in ins if t.is_cuda]
        if not cuda_ins and not any(t.is_cuda for t in outs):
            return out
        by = float(sum(t.numel() * t.element_size() for t in cuda_ins) +
                   sum(t.numel() * t.element_size() for t in outs if t.is_cuda))
        fl = flops_of(name, a, outs)
        out_dt = str(outs[0].dtype).replace("torch.", "") if outs else ""
        in_dt = str(cuda_ins[0].dtype).replace("torch.", "") if cuda_ins else out_dt
        if name in ("copy_",) and len(a) > 1 and isinstance(a[1], torch.Tensor):
            in_dt = str(a[1].dtype).replace("torch.", "")
            if not a[1].is_cuda:
                self.rows.append((self.phase, name, "h2d", out_dt, 0.0, float(a[1].numel() * a[1].element_size())))
                return out
        # compute dtype of a matmul/conv is its input's
        dt = in_dt if name in ("mm", "addmm", "bmm", "baddbmm", "convolution", "convolution_backward") else out_dt
        kind = kind_of(name, out_dt, in_dt, self.phase)
        self.rows.append((self.phase, name, kind, dt, fl, by))
        return out


# ---------------------------------------------------------------- models

def make_model(name):
    import torchvision.models as tvm
    if name == "resnet50":
        return tvm.resnet50(), "image", 224
    if name == "vgg16":
        return tvm.vgg16(), "image", 224
    if name == "mobilenetv2":
        return tvm.mobilenet_v2(), "image", 224
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel
    if name == "bert-base":
        cfg = BertConfig()
        cfg._attn_implementation = "eager"
        try:
            m = BertForMaskedLM(cfg)
        except Exception:  # noqa: BLE001
            m = BertForMaskedLM(BertConfig(attn_implementation="eager"))
        return m, "text", 128
    if name == "gpt2":
        cfg = GPT2Config()
        cfg._attn_implementation = "eager"
        try:
            m = GPT2LMHeadModel(cfg)
        except Exception:  # noqa: BLE001
            m = GPT2LMHeadModel(GPT2Config(attn_implementation="eager"))
        return m, "text", 1024
    raise ValueError(name)


STEPS = []
KROWS = []


def run_config(model_name, prec, batch, timed_steps=10):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    set_tf32(prec == "tf32")
    model, kind, size = make_model(model_name)
    model = model.to(DEV)
    if kind == "image":
        model = model.to(memory_format=MF)
        x = torch.randn(batch, 3, size, size, device=DEV).to(memory_format=MF)
        y = torch.randint(0, 1000, (batch,), device=DEV)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=False)

        def loss_fn():
            return F.cross_entropy(model(x), y)
    else:
        vocab = model.config.vocab_size
        ids = torch.randint(0, vocab, (batch, size), device=DEV)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)

        def loss_fn():
            return model(input_ids=ids, labels=ids).loss
    model.train()
    half = prec in ("bf16", "fp16")
    scaler = torch.amp.GradScaler("cuda", enabled=prec == "fp16")
    oplog = [None]

    def phase(p):
        if oplog[0] is not None:
            oplog[0].phase = p

    def step():
        phase("forward")
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=DT[prec], enabled=half):
            loss = loss_fn()
        phase("backward")
        scaler.scale(loss).backward()
        phase("optimizer")
        scaler.step(opt)
        scaler.update()
        return loss

    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    params = sum(p.numel() for p in model.parameters())
    t_setup = time.time()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    warm_s = time.time() - t_setup
    # Memory: state before a step (weights + optimizer state; grads are None after zero_grad),
    # and the peak during one step.
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    # Step time: each step timed with events, the host synchronised at the end of each step
    # (as Keras reads the loss every step).
    ts = []
    host = []
    for _ in range(timed_steps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        h0 = time.perf_counter()
        s.record()
        step()
        e.record()
        e.synchronize()
        host.append(time.perf_counter() - h0)
        ts.append(s.elapsed_time(e) / 1e3)
    ts.sort()
    host.sort()
    med = ts[len(ts) // 2]
    row = dict(model=model_name, prec=prec, batch=batch, seq_or_res=size, step_s=med, step_min_s=ts[0],
               step_max_s=ts[-1], host_step_s=host[len(host) // 2], steps=timed_steps, warmup_s=warm_s,
               params=params, weights_bytes=weights, base_bytes=base, peak_bytes=peak, peak_reserved_bytes=reserved,
               samples_per_s=batch / med)
    # Kernel count and device time per aten op from the profiler (one step).
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            step()
            torch.cuda.synchronize()
        tot_dev, nk = 0.0, 0
        for ev in prof.key_averages():
            sd = getattr(ev, "self_device_time_total", None)
            if sd is None:
                sd = getattr(ev, "self_cuda_time_total", 0.0)
            if sd and sd > 0:
                KROWS.append(dict(model=model_name, prec=prec, batch=batch, op=ev.key, count=ev.count,
                                  self_device_us=sd))
        for ev in prof.events():
            dt = getattr(ev, "device_type", None)
            if dt is not None and "CUDA" in str(dt):
                nk += 1
                tot_dev += ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
        row["profiler_kernels"] = nk
        row["profiler_busy_s"] = tot_dev / 1e6
    except Exception:  # noqa: BLE001
        log("profiler failed", traceback.format_exc())
    # The op list of one step.
    try:
        ol = OpLog()
        oplog[0] = ol
        with ol:
            step()
        oplog[0] = None
        torch.cuda.synchronize()
        with open(os.path.join(OUT, "ops.csv"), "a", newline="") as f:
            w = csv.writer(f)
            for i, (ph, name, kd, dt, fl, by) in enumerate(ol.rows):
                w.writerow((model_name, prec, batch, i, ph, name, kd, dt, "%.6g" % fl, "%.6g" % by))
        row["ops"] = len(ol.rows)
    except Exception:  # noqa: BLE001
        oplog[0] = None
        log("oplog failed", traceback.format_exc())
    STEPS.append(row)
    log("step", json.dumps(row))
    del model, opt
    torch.cuda.empty_cache()


def flush():
    def write(name, rows):
        if not rows:
            return
        keys = []
        for r in rows:
            for k in r:
                if k not in keys:
                    keys.append(k)
        with open(os.path.join(OUT, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    write("micro.csv", MICRO)
    write("steps.csv", STEPS)
    write("kernels.csv", KROWS)
    env["smi_after"] = smi()
    env["elapsed_s"] = time.time() - T0
    with open(os.path.join(OUT, "env.json"), "w") as f:
        json.dump(env, f, indent=1)


with open(os.path.join(OUT, "ops.csv"), "w", newline="") as f:
    csv.writer(f).writerow(["model", "prec", "batch", "idx", "phase", "op", "kind", "dtype", "flops", "bytes"])
env["layout"] = args.layout
SECTIONS = {"launch": micro_launch, "matmul": micro_matmul, "conv": micro_conv, "memory": micro_memory}
for name in [x for x in args.micro.split(",") if x]:
    section(name, SECTIONS[name])
flush()

BATCH = {"resnet50": [64, 256], "vgg16": [32, 128], "mobilenetv2": [64, 256], "bert-base": [16, 64], "gpt2": [4, 16]}
if args.quick:
    BATCH = {k: [2, 4] for k in BATCH}
plan = []
for prec in ["tf32", "bf16"]:
    for m in BATCH:
        for b in BATCH[m]:
            plan.append((m, prec, b))
for m in BATCH:
    for b in BATCH[m]:
        plan.append((m, "fp16", b))
for m in BATCH:
    plan.append((m, "fp32", BATCH[m][0]))
if not args.quick:
    plan += [("resnet50", "fp32", 128), ("resnet50", "tf32", 128), ("resnet50", "fp16", 128), ("resnet50", "fp32", 256)]
if args.plan:
    plan = [(m, p, int(b)) for m, p, b in (c.split(":") for c in args.plan.split(","))]
for cfg in plan:
    if left() < 25:
        log("budget spent; skipped", cfg)
        continue
    try:
        run_config(*cfg, timed_steps=3 if args.quick else 10)
    except Exception:  # noqa: BLE001
        log("CONFIG FAILED", cfg, traceback.format_exc())
        torch.cuda.empty_cache()
    flush()
flush()
log("done")
# Summary table last (the device reply carries the end of the output).
print("%-12s %-5s %5s %10s %12s %14s" % ("model", "prec", "batch", "step_ms", "samples/s", "act_MiB/sample"))
for r in STEPS:
    print("%-12s %-5s %5d %10.2f %12.1f %14.2f" % (r["model"], r["prec"], r["batch"], r["step_s"] * 1e3,
                                                  r["samples_per_s"], (r["peak_bytes"] - r["base_bytes"]) / r["batch"] / 2**20))
