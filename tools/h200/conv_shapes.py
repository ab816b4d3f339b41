#!/usr/bin/env python3
"""Lists the forward convolutions of a traced Keras train step as conv_bench.py takes them.

Reads XLA's optimized HLO of the step (testdata/h200/keras/trace/MODEL.hlo.tar.gz) and prints
one JSON object per line for every distinct forward cuDNN convolution (the layer's own pass,
not a gradient XLA runs as a forward): the Keras layer (the first of those of that shape),
how many layers share the shape, the input [N, H, W, C], the filter [K, R, S], the stride and
the padding, as the HLO's window holds them (NHWC, dim_labels b01f_o01i->b01f).

Usage: python3 tools/h200/conv_shapes.py MODEL HLO.tar.gz >> shapes.jsonl
"""
import json
import re
import sys

from h200lib import hlo_lines


def dims(s):
    m = re.search(r"\[([\d,]*)\]", s)
    return [int(d) for d in m.group(1).split(",") if d]


def main():
    model, path = sys.argv[1], sys.argv[2]
    lines = hlo_lines(path)
    shape = {}
    for l in lines:
        m = re.match(r"\s+(?:ROOT )?%(\S+) = (\((?:[^()]|\([^()]*\))*\)|\w+\[[\d,]*\])", l)
        if m:
            # A tuple-shaped instruction: its elements are named NAME#i where used.
            elems = re.findall(r"\w+\[[\d,]*\]", m.group(2))
            shape[m.group(1)] = elems[0]
            for i, e in enumerate(elems):
                shape["%s#%d" % (m.group(1), i)] = e
    seen = {}
    for l in lines:
        if 'custom_call_target="__cudnn$conv' not in l or "Forward" not in l:
            continue
        name = re.search(r'op_name="([^"]+)"', l).group(1)
        if "transpose(" in name:
            continue
        layer = (re.findall(r"jvp\(([^()/]+)\)", name) or ["?"])[-1]
        ops = re.search(r"custom-call\(([^)]*)\)", l).group(1).split(", ")
        x = dims(shape[ops[0].lstrip("%")])
        w = dims(shape[ops[1].lstrip("%")])  # o01i
        lab = re.search(r"dim_labels=(\S+),", l).group(1)
        if lab != "b01f_o01i->b01f":
            raise SystemExit("%s: layout %s" % (layer, lab))
        win = re.search(r"window=\{([^}]*)\}", l).group(1)
        st = re.search(r"stride=(\d+)x(\d+)", win)
        pd = re.search(r"pad=(\d+)_(\d+)x(\d+)_(\d+)", win)
        groups = re.search(r"feature_group_count=(\d+)", l)
        if groups and int(groups.group(1)) > 1:
            continue  # depthwise: not a GEMM (hw.depthwise)
        key = (tuple(x), tuple(w), st.groups() if st else None, pd.groups() if pd else None)
        if key in seen:
            seen[key]["count"] += 1
            continue
        seen[key] = {
            "model": model, "layer": layer, "count": 1,
            "n": x[0], "h": x[1], "w": x[2], "c": x[3],
            "k": w[0], "r": w[1], "s": w[2],
            "stride": [int(st.group(1)), int(st.group(2))] if st else [1, 1],
            "pad": [int(pd.group(1)), int(pd.group(3))] if pd else [0, 0],
        }
        if pd and (pd.group(1) != pd.group(2) or pd.group(3) != pd.group(4)):
            seen[key]["pad_hi"] = [int(pd.group(2)), int(pd.group(4))]
    for v in seen.values():
        print(json.dumps(v))


if __name__ == "__main__":
    main()
