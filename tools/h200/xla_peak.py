#!/usr/bin/env python3
"""Lists what an XLA GPU executable holds at its memory peak, from XLA's own dumps.

Reads one module's dump files (--xla_dump_to; the train step's files as
tools/h200/README.md says): the scheduled HLO (`*after_optimizations.txt`) and the live ranges
(`*after_optimizations-live-range.txt`, whose "Live ranges at N (peak)" section is the heap
simulator's peak), optionally gzipped. Prints one line per buffer live at the peak: bytes,
shape, the producing instruction's kind (cuDNN call, fusion kind with its root opcodes, copy,
parameter), and the JAX op_name (jit(train_step)/jvp(LAYER)/... names the Keras layer and
whether it is forward (jvp) or backward (transpose)). With --group it sums the bytes by
(kind, layer type) instead.

  python3 tools/h200/xla_peak.py DIR [--group] [--top N]
DIR holds after_optimizations.txt[.gz] and after_optimizations-live-range.txt[.gz].
"""
import gzip
import os
import re
import sys


def read(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            op = gzip.open if p.endswith(".gz") else open
            with op(p, "rt") as f:
                return f.read()
    raise SystemExit("missing " + path)


INSTR = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = (.*?) (\w[\w\-]*)\((.*)$")


def parse_hlo(text):
    """Returns {name: (shape, opcode, rest)} for the entry computation and {comp: [opcodes]}."""
    comps, cur, instrs = {}, None, {}
    entry = False
    for line in text.splitlines():
        if line.startswith("ENTRY "):
            entry, cur = True, "ENTRY"
            comps[cur] = []
            continue
        if line.startswith("%") and line.rstrip().endswith("{"):
            cur = line.split()[0][1:]
            comps[cur] = []
            entry = False
            continue
        if line.startswith("}"):
            cur, entry = None, False
            continue
        m = INSTR.match(line)
        if not m or cur is None:
            continue
        name, shape, opcode, rest = m.groups()
        comps[cur].append((name, opcode, line))
        if entry:
            instrs[name] = (shape, opcode, rest)
    return instrs, comps


def describe(name, instrs, comps):
    shape, opcode, rest = instrs.get(name, ("?", "?", ""))
    kind = opcode
    if opcode == "custom-call":
        m = re.search(r'custom_call_target="([^"]+)"', rest)
        kind = m.group(1) if m else opcode
    elif opcode == "fusion":
        m = re.search(r"kind=(\w+), calls=%([\w.\-]+)", rest)
        if m:
            ops = [o for _, o, _ in comps.get(m.group(2), []) if o not in ("parameter", "constant", "tuple", "get-tuple-element", "bitcast")]
            seen = []
            for o in ops:
                if o not in seen:
                    seen.append(o)
            kind = m.group(1) + "[" + ",".join(seen[:6]) + "]"
    m = re.search(r'op_name="([^"]+)"', rest)
    op_name = m.group(1) if m else ""
    return shape, kind, op_name


def peak(text):
    m = re.search(r"Live ranges at (\d+) \(peak\):\n((?:    .*\n?)*)", text)
    if not m:
        raise SystemExit("no peak section")
    out = []
    for line in m.group(2).splitlines():
        mm = re.match(r"\s+([\w.\-]+)\{([\d,]*)\}: (\d+) bytes", line)
        if mm:
            out.append((mm.group(1), mm.group(2), int(mm.group(3))))
    return int(m.group(1)), out


def layer_of(op_name):
    # jit(train_step)/jvp(block1_conv1)/conv_general_dilated -> (jvp, block1_conv1)
    m = re.search(r"/(jvp|transpose)\(([^)]*)\)", op_name)
    if m:
        return m.group(1), m.group(2)
    return "", op_name.split("/")[1] if "/" in op_name else op_name


def main():
    a = sys.argv[1:]
    if not a:
        raise SystemExit(__doc__)
    d = a[0]
    group = "--group" in a
    top = int(a[a.index("--top") + 1]) if "--top" in a else 0
    instrs, comps = parse_hlo(read(os.path.join(d, "after_optimizations.txt")))
    at, bufs = peak(read(os.path.join(d, "after_optimizations-live-range.txt")))
    total = sum(b for _, _, b in bufs)
    print("peak at instruction %d of the schedule: %d buffers, %d bytes (%.3f GiB)" % (at, len(bufs), total, total / 2**30))
    rows = []
    for name, idx, b in bufs:
        shape, kind, op_name = describe(name, instrs, comps)
        if idx and shape.startswith("("):
            parts = re.findall(r"\w+\[[\d,]*\]", shape)
            i = int(idx.split(",")[0])
            if i < len(parts):
                shape = parts[i]
        shape = re.sub(r"\{[\d,]*\}", "", shape)
        rows.append((b, name + ("{%s}" % idx if idx else ""), shape, kind, op_name))
    rows.sort(key=lambda r: -r[0])
    if group:
        sums = {}
        for b, name, shape, kind, op_name in rows:
            phase, layer = layer_of(op_name)
            if name.startswith(("state_", "data_")):
                key = ("argument", name.split("_")[0])
            else:
                key = (kind, phase + ":" + re.sub(r"_?\d+$", "", re.sub(r"\d+", "N", layer)))
            s = sums.setdefault(key, [0, 0])
            s[0] += b
            s[1] += 1
        for key, (b, n) in sorted(sums.items(), key=lambda kv: -kv[1][0]):
            print("%14d %7.3f GiB %4d  %-40s %s" % (b, b / 2**30, n, key[0][:40], key[1]))
        return
    for r in rows[:top or len(rows)]:
        print("%12d  %-44s %-24s %-40s %s" % (r[0], r[1][:44], r[2], r[3][:40], r[4]))


if __name__ == "__main__":
    main()
