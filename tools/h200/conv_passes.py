#!/usr/bin/env python3
"""Lists a traced Keras train step's cuDNN convolutions by layer and pass, with their shapes.

Reads a kernels CSV of tools/h200/memkinds.py's keras part and XLA's optimized HLO of the same
step (as tools/h200/keras_trace.py does) and prints, for every cuDNN custom call, the Keras
layer, the pass (fwd: the layer's forward; dgrad: its input gradient, which XLA runs as a
forward convolution for 1x1 stride-1 windows, with a fourth operand when it adds another
gradient as cuDNN's side input; wgrad: its filter gradient), the window and stride, the
output shape, the convolution's GFLOP (2 x output elements x filter taps x input channels of
the forward), the kernels' time per step and the FLOP rate, then the sums by pass, filter
size and stride. testdata/h200/keras/trace/README.md shows its output for ResNet-50.

Usage: python3 tools/h200/conv_passes.py KERNELS.csv HLO.txt[.tar.gz] [--layers]
"""
import collections
import csv
import re
import sys

from h200lib import hlo_lines

PASS = {
    "__cudnn$convForward": "fwd",
    "__cudnn$convBiasActivationForward": "fwd",
    "__cudnn$convBackwardInput": "dgrad",
    "__cudnn$convBackwardFilter": "wgrad",
}


def dims(shape):
    m = re.search(r"\[([\d,]*)\]", shape or "")
    return [int(d) for d in m.group(1).split(",") if d] if m else []


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    shape, line = {}, {}
    for l in hlo_lines(sys.argv[2]):
        m = re.match(r"\s+(?:ROOT )?%(\S+) = \(?(\w+\[[\d,]*\])", l)
        if m:
            shape[m.group(1)], line[m.group(1)] = m.group(2), l
    us, kern = collections.Counter(), collections.defaultdict(list)
    for r in csv.DictReader(open(sys.argv[1])):
        op = r["hlo_op"]
        if op.startswith("cudnn"):
            t = int(r["total_ns"]) / 1e3 / int(r["steps"])
            us[op] += t
            kern[op].append(r["kernel"])
    rows = []
    for op, t in us.items():
        l = line.get(op)
        if l is None:
            continue
        target = re.search(r'custom_call_target="([^"]+)"', l).group(1)
        name = re.search(r'op_name="([^"]+)"', l).group(1)
        layer = (re.findall(r"jvp\(([^()/]+)\)", name) or ["?"])[-1]
        bwd = "transpose(" in name
        p = PASS.get(target, target)
        if p == "fwd" and bwd:
            p = "dgrad"
        operands = [o.strip().lstrip("%") for o in re.search(r"custom-call\(([^)]*)\)", l).group(1).split(",")]
        win = re.search(r"window=\{size=(\d+)x(\d+)(?: stride=(\d+)x\d+)?", l)
        fh, fw, st = int(win.group(1)), int(win.group(2)), int(win.group(3) or 1)
        out = dims(shape[op])
        if p == "wgrad":
            # out is the filter gradient, o01i: the forward's output and input channels.
            n, c = out[0], out[-1]
            x = dims(shape.get(operands[0]))
            m = x[0] * (x[1] // st) * (x[2] // st) if len(x) == 4 else 0
        else:
            filt = dims(shape.get(operands[1])) or [0]  # an operand without a plain shape: unknown
            if p == "fwd":
                n, c, m = out[-1], filt[-1], out[0] * out[1] * out[2]
            else:
                # out is dx, the forward's input. A backward-input call takes the forward's
                # filter (o = the forward's output channels); a forward convolution running
                # the data gradient takes it transposed (i = those channels).
                c = out[-1]
                n = filt[0] if target == "__cudnn$convBackwardInput" else filt[-1]
                m = out[0] * (out[1] // st) * (out[2] // st)
        groups = re.search(r"feature_group_count=(\d+)", l)
        if groups:
            c = max(c // int(groups.group(1)), 1)  # per-group input channels
        gflop = 2 * m * n * c * fh * fw / 1e9
        side = p != "wgrad" and len(operands) == 4
        rows.append((layer, p + ("+side" if side else ""), "%dx%d/%d" % (fh, fw, st), st, m, n, c, gflop, t, kern[op]))
    rows.sort(key=lambda r: (r[0], r[1]))
    if "--layers" in sys.argv:
        print("layer                  pass        window  M        N     C      GFLOP   us/step  TFLOP/s  kernels")
        for r in rows:
            print("%-22s %-11s %-7s %-8d %-5d %-5d %7.2f %8.1f %8.0f  %s" % (
                r[0], r[1], r[2], r[4], r[5], r[6], r[7], r[8], r[7] / r[8] * 1e3 if r[8] else 0,
                "; ".join(k[:60] for k in r[9])))
        print()
    tot = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for r in rows:
        for k in ((r[1].split("+")[0], r[2]), (r[1].split("+")[0], "all")):
            tot[k][0] += 1
            tot[k][1] += r[7]
            tot[k][2] += r[8]
    print("pass   window  calls  GFLOP    us/step  TFLOP/s")
    for (p, w), (n, g, t) in sorted(tot.items()):
        print("%-6s %-7s %5d  %7.1f %9.1f %8.0f" % (p, w, n, g, t, g / t * 1e3 if t else 0))
    print("side-input data gradients: %d" % sum(1 for r in rows if r[1].endswith("+side")))


if __name__ == "__main__":
    main()
