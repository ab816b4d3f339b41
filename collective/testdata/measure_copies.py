"""Measures the copy costs gpusim's copy-based reductions and soft placement use.

Run on a real GPU: python3 measure_copies.py OUT.json
Device-to-device (same GPU) copy: per-op time of a small copy and bandwidth of a large one;
host<->device: pinned and pageable, small and large. Timings by CUDA events (device side) and
wall clock over many back-to-back ops (host launch rate), after warm-up.
"""
import json, sys, time
import torch

def dev_time(fn, iters):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    s.record()
    for _ in range(iters):
        fn()
    e.record()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / iters
    return s.elapsed_time(e) / 1e3 / iters, wall

out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
for nbytes in (4096, 1 << 20, 256 << 20):
    a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    it = 2000 if nbytes <= 1 << 20 else 50
    d, w = dev_time(lambda: b.copy_(a), it)
    out[f"d2d_{nbytes}"] = {"device_s": d, "wall_s": w, "rw_bytes_per_s": 2 * nbytes / d}
for pinned in (True, False):
    for nbytes in (4096, 64 << 20):
        h = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
        g = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        it = 1000 if nbytes <= 4096 else 20
        d, w = dev_time(lambda: g.copy_(h, non_blocking=pinned), it)
        out[f"h2d_{'pinned' if pinned else 'pageable'}_{nbytes}"] = {"device_s": d, "wall_s": w, "bytes_per_s": nbytes / max(d, w)}
        d, w = dev_time(lambda: h.copy_(g, non_blocking=pinned), it)
        out[f"d2h_{'pinned' if pinned else 'pageable'}_{nbytes}"] = {"device_s": d, "wall_s": w, "bytes_per_s": nbytes / max(d, w)}
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out, indent=1))
