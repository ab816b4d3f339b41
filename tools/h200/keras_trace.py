#!/usr/bin/env python3
"""Maps a traced Keras train step's kernels to the Keras layers they run, and sums them by kind.

Reads a kernels CSV of tools/h200/memkinds.py's keras part (kernel, hlo_op, count, total_ns,
steps) and XLA's optimized HLO of the same step (`--xla_dump_to` ... after_optimizations.txt),
and prints the step's kernel time by kind: cuDNN/cuBLAS calls (depthwise when
feature_group_count > 1; forward, input and filter gradient), XLA's pad, reduction, loop and
transpose fusions, and the fusions by which layers' forward (L) and backward (L/bwd) ops they
hold. A kernel is matched to its HLO instruction by the hlo_op of the trace (library calls) or
by its name (XLA names a fusion's kernel after the fusion); the layers come from each fused
instruction's metadata op_name (jit(train_step)/jvp(LAYER)/..., transpose(jvp(LAYER)) for
the backward). XLA reuses one kernel for identical fusions, so a few kernels are attributed to
the first of their twins; the sums by kind are exact. testdata/h200/keras/trace/README.md
shows its output for the committed traces.

Usage: python3 tools/h200/keras_trace.py KERNELS.csv HLO.txt[.tar.gz]
"""
import collections
import csv
import re
import sys

from h200lib import hlo_lines


def parse(lines):
    comps, cur, inst = {}, None, {}
    for l in lines:
        m = re.match(r"^(?:ENTRY )?%(\S+) .*\{\s*$", l)
        if m:
            cur = m.group(1)
            comps[cur] = []
            continue
        if cur and l.startswith("  "):
            comps[cur].append(l)
            m = re.match(r"\s+(?:ROOT )?%(\S+) = ", l)
            if m:
                inst[m.group(1)] = l
    return comps, inst


def layers_of(line, comps):
    ops = re.findall(r'op_name="([^"]+)"', line)
    m = re.search(r"calls=%([^,\s]+)", line)
    if m and m.group(1) in comps:
        for fl in comps[m.group(1)]:
            ops += re.findall(r'op_name="([^"]+)"', fl)
    out = collections.Counter()
    for o in ops:
        names = re.findall(r"jvp\(([^()/]+)\)", o)
        if names:
            out[names[-1] + ("/bwd" if "transpose(" in o else "")] += 1
    return out


def main():
    kernels, hlo = sys.argv[1], sys.argv[2]
    comps, inst = parse(hlo_lines(hlo))
    kinds, sigs = collections.Counter(), collections.Counter()
    steps = 1
    for r in csv.DictReader(open(kernels)):
        steps = int(r["steps"])
        us = int(r["total_ns"]) / 1e3
        k, op = r["kernel"], r["hlo_op"]
        cand = ([op] if op and not op.startswith("command_buffer") else []) + [
            k, re.sub(r"_(\d+)$", r".\1", k)]
        name = next((c for c in cand if c in inst), None)
        if name is None:
            kinds["other (memcpy, memset)"] += us
            continue
        line = inst[name]
        tgt = re.search(r'custom_call_target="([^"]+)"', line)
        lay = layers_of(line, comps)
        if tgt and ("cudnn" in tgt.group(1) or "cublas" in tgt.group(1)):
            g = re.search(r"feature_group_count=(\d+)", line)
            dw = "depthwise conv" if g and int(g.group(1)) > 1 else "conv/gemm"
            if "BackwardFilter" in tgt.group(1):
                d = "filter gradient"
            elif "BackwardInput" in tgt.group(1) or any(l.endswith("/bwd") for l in lay):
                d = "input gradient"
            else:
                d = "forward"
            kinds["%s %s" % (dw, d)] += us
            continue
        kind = next((f for f in ("pad", "reduce", "transpose") if f in k), "loop")
        kinds["%s fusion" % kind] += us
        roles = sorted({re.sub(r"^(block\d[a-z]|conv\d_block\d+)_", "", l) for l in lay})
        sigs[" + ".join(roles)] += us
    tot = sum(kinds.values())
    print("kernel time per step: %.3f ms" % (tot / steps / 1e3))
    for k, us in kinds.most_common():
        print("  %-34s %9.1f us  %5.1f%%" % (k, us / steps, 100 * us / tot))
    print("fusions by the layers whose ops they hold (block prefix dropped):")
    for s, us in sigs.most_common(25):
        print("  %9.1f us  %s" % (us / steps, s or "(no layer)"))


if __name__ == "__main__":
    main()
