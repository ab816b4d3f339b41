"""Two JAX processes on one GPU: A preallocates (default: 75% of free memory), B starts while A
holds its pool. Prints, for each, NVML readings and memory_stats after its first 1-byte buffer.
Usage: python3 two_process.py A|B OUTFILE [HOLD_SECONDS [UNTIL_FILE]]"""
import os, sys, json, time
role, out = sys.argv[1], sys.argv[2]
hold = float(sys.argv[3]) if len(sys.argv) > 3 else 0
res = {"role": role}
try:
    import pynvml
    pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0)
    def nvml():
        m = pynvml.nvmlDeviceGetMemoryInfo(h); return {"total": m.total, "free": m.free, "used": m.used}
except Exception as e:
    res["nvml_error"] = str(e)
    def nvml(): return None
res["nvml_before_jax"] = nvml()
import numpy as np, jax
d = jax.devices()[0]
res["nvml_after_devices"] = nvml()
res["stats_init"] = d.memory_stats()
try:
    a = jax.device_put(np.empty(1, np.uint8), d); a.block_until_ready()
    res["first_alloc"] = "ok"
except Exception as e:
    res["first_alloc"] = "error: " + str(e)[:300]
res["nvml_after_first_buffer"] = nvml()
res["stats_after_first_buffer"] = d.memory_stats()
# B also tries a buffer of 2 GiB, which must come from its own pool.
if role == "B":
    try:
        b = jax.device_put(np.empty(2 << 30, np.uint8), d); b.block_until_ready(); res["alloc_2GiB"] = "ok"
    except Exception as e:
        res["alloc_2GiB"] = "error: " + str(e)[:300]
    res["stats_end"] = d.memory_stats()
with open(out, "w") as f:
    json.dump(res, f, indent=1, default=str)
print(role, json.dumps(res, default=str)[:600], flush=True)
if hold:
    # Hold the pool until B has written its result (argv[4]) or HOLD_SECONDS pass.
    open(out + ".ready", "w").close()
    t_end = time.time() + hold
    while time.time() < t_end and not (len(sys.argv) > 4 and os.path.exists(sys.argv[4])):
        time.sleep(0.2)
