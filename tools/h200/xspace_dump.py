#!/usr/bin/env python3
"""Summarizes a profiler XSpace (`*.xplane.pb`, gzipped or not) with nothing but the Python
standard library: a protobuf wire-format reader and the field numbers of the public schema
(tsl/profiler/protobuf/xplane.proto of openxla/xla), so what it prints is what a reader written
from that schema sees, with no profiler library between (testdata/h200/profiles/FORMAT.md was
written from its output).

  python3 tools/h200/xspace_dump.py FILE.xplane.pb.gz            planes, lines, metadata, stats
  python3 tools/h200/xspace_dump.py FILE.xplane.pb.gz --kernels  per-kernel count and total ns
                                                                  of the GPU planes' stream lines

Schema (field number: name):
  XSpace 1: planes (XPlane), 2: errors, 3: warnings, 4: hostnames
  XPlane 1: id, 2: name, 3: lines (XLine), 4: event_metadata (map int64 -> XEventMetadata),
         5: stat_metadata (map int64 -> XStatMetadata), 6: stats (XStat)
  XLine  1: id, 10: display_id, 2: name, 11: display_name, 3: timestamp_ns, 9: duration_ps,
         4: events (XEvent)
  XEvent 1: metadata_id, 2: offset_ps, 5: num_occurrences, 3: duration_ps, 4: stats (XStat)
  XStat  1: metadata_id, 2: double_value, 3: uint64_value, 4: int64_value, 5: str_value,
         6: bytes_value, 7: ref_value (the id of an XStatMetadata whose name is the value)
  XEventMetadata 1: id, 2: name, 4: display_name, 3: metadata (bytes), 5: stats, 6: child_id
  XStatMetadata  1: id, 2: name, 3: description
"""
import collections
import gzip
import struct
import sys


def fields(b):
    """(field number, wire type, value) of one message's bytes: ints for varints and fixed
    widths, bytes for length-delimited fields."""
    i, n = 0, len(b)
    while i < n:
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wt == 2:
            ln, i = varint(b, i)
            v = b[i:i + ln]
            i += ln
        elif wt == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError("wire type %d at %d" % (wt, i))
        yield f, wt, v


def varint(b, i):
    r, s = 0, 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        if c < 0x80:
            return r, i
        s += 7


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def stat(b, smeta):
    """(name, value) of an XStat; a ref_value is resolved to its metadata's name."""
    mid, val = 0, None
    for f, wt, v in fields(b):
        if f == 1:
            mid = v
        elif f == 2:
            val = struct.unpack("<d", struct.pack("<Q", v))[0]
        elif f == 3:
            val = v
        elif f == 4:
            val = signed(v)
        elif f == 5:
            val = v.decode("utf-8", "replace")
        elif f == 6:
            val = "<%d bytes>" % len(v)
        elif f == 7:
            val = "ref:" + smeta.get(v, str(v))
    return smeta.get(mid, "#%d" % mid), val


def plane(b):
    p = {"id": 0, "name": "", "lines": [], "emeta": {}, "smeta": {}, "stats": []}
    raw_stats = []
    for f, wt, v in fields(b):
        if f == 1:
            p["id"] = v
        elif f == 2:
            p["name"] = v.decode()
        elif f == 3:
            p["lines"].append(v)
        elif f in (4, 5):
            key, msg = 0, b""
            for g, _, w in fields(v):
                if g == 1:
                    key = w
                elif g == 2:
                    msg = w
            m = {}
            for g, _, w in fields(msg):
                m.setdefault(g, []).append(w)
            if f == 4:
                p["emeta"][key] = m
            else:
                p["smeta"][key] = m.get(2, [b""])[0].decode()
        elif f == 6:
            raw_stats.append(v)
    p["stats"] = [stat(s, p["smeta"]) for s in raw_stats]
    return p


def line(b):
    ln = {"id": 0, "name": "", "display_name": "", "timestamp_ns": 0, "duration_ps": 0,
          "events": []}
    for f, wt, v in fields(b):
        if f == 1:
            ln["id"] = v
        elif f == 2:
            ln["name"] = v.decode()
        elif f == 11:
            ln["display_name"] = v.decode()
        elif f == 3:
            ln["timestamp_ns"] = signed(v)
        elif f == 9:
            ln["duration_ps"] = v
        elif f == 4:
            ln["events"].append(v)
    return ln


def event(b, smeta):
    e = {"metadata_id": 0, "offset_ps": 0, "duration_ps": 0, "stats": []}
    for f, wt, v in fields(b):
        if f == 1:
            e["metadata_id"] = v
        elif f == 2:
            e["offset_ps"] = signed(v)
        elif f == 3:
            e["duration_ps"] = v
        elif f == 5:
            e["num_occurrences"] = v
        elif f == 4:
            e["stats"].append(stat(v, smeta))
    return e


def load(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    planes, other = [], collections.Counter()
    for f, wt, v in fields(data):
        if f == 1:
            planes.append(plane(v))
        else:
            other[f] += 1
    return planes, other


def ename(p, mid):
    m = p["emeta"].get(mid, {})
    return m.get(2, [b""])[0].decode("utf-8", "replace")


def summary(path):
    planes, other = load(path)
    print("XSpace: %d planes; other top-level fields: %s" % (len(planes), dict(other)))
    for p in planes:
        print("\nplane id=%d name=%r: %d lines, %d event metadata, %d stat metadata" % (
            p["id"], p["name"], len(p["lines"]), len(p["emeta"]), len(p["smeta"])))
        if len(p["stats"]) > 12:
            print("  %d plane stats; the first 12:" % len(p["stats"]))
        for k, v in p["stats"][:12]:
            s = str(v)
            print("  plane stat %s = %s" % (k, s[:100] + ("..." if len(s) > 100 else "")))
        mstats = collections.Counter()
        for m in p["emeta"].values():
            for s in m.get(5, []):
                mstats[stat(s, p["smeta"])[0]] += 1
        if mstats:
            print("  event-metadata stats: %s" % dict(mstats.most_common(20)))
        big = sorted(((len(m.get(3, [b""])[0]), ename(p, k)) for k, m in p["emeta"].items()),
                     reverse=True)[:3]
        if big and big[0][0]:
            print("  largest event-metadata `metadata` bytes: %s" % big)
        for lb in p["lines"]:
            ln = line(lb)
            evs = [event(e, p["smeta"]) for e in ln["events"]]
            names = collections.Counter(ename(p, e["metadata_id"]) for e in evs)
            st = collections.Counter(k for e in evs for k, _ in e["stats"])
            print("  line id=%d name=%r display=%r t0=%d ns dur=%.3f ms: %d events, %d names" % (
                ln["id"], ln["name"], ln["display_name"], ln["timestamp_ns"],
                ln["duration_ps"] / 1e9, len(evs), len(names)))
            print("    names: %s" % [n[:60] for n, _ in names.most_common(4)])
            if st:
                print("    event stats: %s" % dict(st.most_common(25)))
            if evs:
                e = evs[len(evs) // 2]
                print("    e.g. %r offset_ps=%d dur_ps=%d stats=%s" % (
                    ename(p, e["metadata_id"])[:80], e["offset_ps"], e["duration_ps"],
                    [(k, str(v)[:60]) for k, v in e["stats"]][:8]))


def kernels(path):
    planes, _ = load(path)
    agg = collections.defaultdict(lambda: [0, 0])
    for p in planes:
        if not p["name"].startswith("/device:GPU"):
            continue
        for lb in p["lines"]:
            ln = line(lb)
            if not ln["name"].startswith("Stream"):
                continue
            for eb in ln["events"]:
                e = event(eb, p["smeta"])
                op = dict(e["stats"]).get("hlo_op", "")
                a = agg[(ename(p, e["metadata_id"]), op)]
                a[0] += 1
                a[1] += e["duration_ps"]
    print("kernel,hlo_op,count,total_ns")
    for (k, op), (c, t) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print("%s,%s,%d,%d" % (k.replace(",", ";"), op, c, t // 1000))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--kernels":
        kernels(sys.argv[1])
    else:
        summary(sys.argv[1])
