#!/usr/bin/env python3
"""The executor-kernel memory classes of bert_unfused.py at sizes far above the L2, in float32
and bfloat16: whether a class is bound by its bytes (bfloat16 takes about half the time) or by
its elements (the same time), PyTorch eager on one GPU, CUDA-event timing.

    python3 tools/h200/exec_classes.py --out $OUT

Writes OUT/classes.csv (class, dtype, elements, bytes, seconds per call: the median of 20
back-to-back calls, each 0.1-2 ms) and OUT/env.json with the SM clock NVML read during the
run. testdata/h200/bertunfused/README.md says how it was run and what it shows.
"""
import argparse
import json
import os
import time

import torch

import h200lib
from h200lib import median_call


def smi():
    return h200lib.smi("clocks.sm,clocks.mem,power.draw", timeout=10, failed=str)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    rows, clocks = [], [smi()]
    T, D = 170 * 384, 1024  # 67M elements: 267 MB in float32, 134 MB in bfloat16 (L2 50 MB)
    B, S, H = 32, 384, 16  # scores [B, H, S, S] = 75.5M elements
    for dt in (torch.float32, torch.bfloat16):
        f = dict(device="cuda", dtype=dt)
        x, y, o = torch.randn(T, D, **f), torch.randn(T, D, **f), torch.empty(T, D, **f)
        v, r = torch.randn(D, **f), torch.randn(T, 1, **f)
        p = torch.randn(B * H * S, S, **f)
        n, es = T * D, x.element_size()
        cases = [
            ("stream_mul", n, 3 * n * es, lambda: torch.mul(x, y, out=o)),
            ("stream_scalar", n, 2 * n * es, lambda: torch.mul(x, 0.5, out=o)),
            ("broadcast_row", n, 2 * n * es, lambda: torch.add(x, v, out=o)),
            ("broadcast_col", n, 2 * n * es, lambda: torch.mul(x, r, out=o)),
            ("broadcast_outer", n, n * es, lambda: torch.mul(r, v, out=o)),
            ("row_reduce_1024", n, n * es, lambda: torch.sum(x, -1, keepdim=True)),
            ("row_reduce_384", p.numel(), p.numel() * es, lambda: torch.amax(p, -1, keepdim=True)),
            ("col_reduce", n, n * es, lambda: torch.sum(x, 0)),
            ("tile", n, n * es, lambda: o.copy_(r.expand(-1, D))),
            ("transpose", n, 2 * n * es, lambda: o.view(T // S, H, S, D // H).copy_(
                x.view(T // S, S, H, D // H).permute(0, 2, 1, 3))),
            ("random", n, n * es, lambda: o.uniform_()),
        ]
        for name, elems, nbytes, fn in cases:
            s = median_call(fn)
            rows.append((name, str(dt).replace("torch.", ""), elems, nbytes, s))
        clocks.append(smi())
        del x, y, o, p
        torch.cuda.empty_cache()
    with open(os.path.join(a.out, "classes.csv"), "w") as fh:
        fh.write("class,dtype,elements,bytes,seconds\n")
        for r_ in rows:
            fh.write("%s,%s,%d,%d,%.4e\n" % r_)
    json.dump({"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
               "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
               "sms": torch.cuda.get_device_properties(0).multi_processor_count,
               "smi_sm_mem_power": clocks, "elapsed_s": time.time() - t0},
              open(os.path.join(a.out, "env.json"), "w"), indent=1)
    for name, dt, elems, nbytes, s in rows:
        print("%-16s %-9s %7.3f ms  %.3f of 4.8 TB/s  %.3f G elem/s" % (name, dt, s * 1e3, nbytes / s / 4.8e12, elems / s / 1e9))


if __name__ == "__main__":
    main()
