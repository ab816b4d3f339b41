"""Record an allocation trace against a real BFC allocator on a real GPU.

The project's trace recorder (same output format, same random stream for the plain random
mode as the script that recorded probe-growth, probe-prealloc and growth-tiny-a), extended for
gpusim's allocator tests:

  python3 record_bfc_trace.py NAME NOPS MAXLOG2 [FILL [MAXOOM]]

  FILL (0..1, default none): near-capacity mode. A free is forced whenever bytes_in_use is above
       FILL x bytes_limit, and an alloc that would not fit (the request is larger than
       largest_free_block_bytes and, with growth, than what is left below the limit) is turned
       into a free instead -- except for the first MAXOOM (default 0) such allocs, which are
       issued on purpose and fail with an OOM (each waits 10 s inside the allocator).
  NAME containing "ties": sizes are drawn from a few fixed values, so equal-size free chunks
       appear in different regions (tests the (size, address) order of the bins).

Mode is chosen by JAX's own environment variables:
  growth:      XLA_PYTHON_CLIENT_PREALLOCATE=false
  preallocate: (default)
  small limit: XLA_CLIENT_MEM_FRACTION=0.005   (fraction of GPU memory; bytes_limit is in every row)
With RECORD_PTR=1 in the environment, a last column `ptr` holds the device address of the buffer
that an alloc row created or a free row released (Array.unsafe_buffer_pointer()): it shows where
the CUDA driver placed each region (see ../traces-ptr/README.md).
Writes $OUT/NAME.csv (or /tmp/NAME.csv) with columns
  op,id,bytes,result,bytes_in_use,peak_bytes_in_use,pool_bytes,peak_pool_bytes,
  largest_free_block_bytes,num_allocs,largest_alloc_size,bytes_limit
and $OUT/NAME.json with the versions and NVML memory readings around start-up.
The first row (op=init) holds the stats before any op. result is ok or oom.
"""
import os, sys, json, random, time, csv, zlib

name = sys.argv[1]
outdir = os.environ.get("OUT", "/tmp")
meta = {"name": name, "argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items() if k.startswith("XLA_")}}
try:
    import pynvml
    pynvml.nvmlInit()
    hnd = pynvml.nvmlDeviceGetHandleByIndex(0)
    def nvml():
        m = pynvml.nvmlDeviceGetMemoryInfo(hnd)
        return {"total": m.total, "free": m.free, "used": m.used}
except Exception as e:  # recording works without NVML; the readings are only context
    meta["nvml_error"] = str(e)
    def nvml():
        return None
meta["nvml_before_jax"] = nvml()
import numpy as np, jax
d = jax.devices()[0]
meta["jax"] = jax.__version__
meta["device"] = str(d)
meta["nvml_after_devices"] = nvml()
KEYS = ["bytes_in_use", "peak_bytes_in_use", "pool_bytes", "peak_pool_bytes", "largest_free_block_bytes",
        "num_allocs", "largest_alloc_size", "bytes_limit"]
def stats():
    return d.memory_stats()
def st():
    s = stats(); return [s.get(k, -1) for k in KEYS]
live = {}
ptrs = {}
PTR = os.environ.get("RECORD_PTR") == "1"
def ptrcol(i):
    return [ptrs.get(i, 0)] if PTR else []
rows = []
t_oom = []
def put(i, n):
    t0 = time.time()
    try:
        a = jax.device_put(np.empty(n, np.uint8), d); a.block_until_ready(); live[i] = a; res = "ok"
        if PTR: ptrs[i] = a.unsafe_buffer_pointer()
    except Exception as e:
        res = "oom" if "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower() else "err:" + str(e)[:80]
        if res == "oom":
            t_oom.append(round(time.time() - t0, 3))
    rows.append(["alloc", i, n, res] + st() + ptrcol(i))
def free(i):
    a = live.pop(i); a.delete(); rows.append(["free", i, 0, "ok"] + st() + ptrcol(i))
rows.append(["init", -1, 0, "ok"] + st() + ([0] if PTR else []))
growth = os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "").lower() in ("false", "0")
if name.startswith("probe"):
    for i, n in enumerate([1, 1000, 2**20, 3*2**20, 7*2**20]):
        put(i, n)
    free(2); put(10, 2**20)
else:
    rng = random.Random(zlib.crc32(name.encode()))
    nops = int(sys.argv[2]); maxlog = float(sys.argv[3])
    fill = float(sys.argv[4]) if len(sys.argv) > 4 else None
    maxoom = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    ties = [256, 4096, 2**20, 3 * 2**20, 2**22 + 512, 2**24, 5 * 2**22] if "ties" in name else None
    nid = 0
    for k in range(nops):
        s = stats() if fill is not None else None
        force_free = s is not None and s["bytes_in_use"] > fill * s["bytes_limit"]
        if live and (force_free or rng.random() < 0.42):
            free(rng.choice(sorted(live)))
            continue
        if ties:
            n = rng.choice(ties)
        else:
            n = int(2 ** rng.uniform(0, maxlog))
            if rng.random() < 0.3: n = (n // 256) * 256 or 256
        if s is not None:
            r = (n + 255) // 256 * 256
            fits = r <= s["largest_free_block_bytes"] or ((growth or s["pool_bytes"] == 0) and r <= (s["bytes_limit"] - s["pool_bytes"]) // 256 * 256)
            if not fits:
                if maxoom > 0:
                    maxoom -= 1
                elif live:
                    free(rng.choice(sorted(live)))
                    continue
                else:
                    continue
        put(nid, n); nid += 1
    # OOMs left in the budget are spent at the end on requests just larger than anything the
    # allocator can serve (the largest free block, and with growth what is left below the limit):
    # a certain OOM, and a fragmentation OOM when the pool's total free bytes exceed the request.
    while fill is not None and maxoom > 0:
        maxoom -= 1
        s = stats()
        room = s["largest_free_block_bytes"]
        if growth or s["pool_bytes"] == 0:
            room = max(room, (s["bytes_limit"] - s["pool_bytes"]) // 256 * 256)
        put(nid, room + 1); nid += 1
meta["nvml_end"] = nvml()
meta["oom_seconds"] = t_oom
with open(os.path.join(outdir, name + ".csv"), "w", newline="") as f:
    w = csv.writer(f); w.writerow(["op", "id", "bytes", "result"] + KEYS + (["ptr"] if PTR else [])); w.writerows(rows)
with open(os.path.join(outdir, name + ".json"), "w") as f:
    json.dump(meta, f, indent=1)
print(name, "rows", len(rows), "ooms", sum(1 for r in rows if r[3] == "oom"),
      "errs", sum(1 for r in rows if r[3].startswith("err")), "oom_s", t_oom, flush=True)
