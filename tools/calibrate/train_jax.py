"""A small JAX training job whose memory grows in phases, for the allocator-mode detector.

An MLP (4 dense layers of WIDTH, softmax cross-entropy, plain SGD) trains for a few steps at
each of several growing batch sizes. Each phase needs more device memory than the one before,
so with XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX's BFC allocator in growth mode) the NVML curve
rises in steps, while with JAX's default (preallocate 75% of free memory) it jumps once, at the
first use of the GPU, and stays flat.

Prints `context_ready` once the GPU client exists (then pauses 0.5 s), `phase batch=N` at each
phase, one `step_time=SECONDS` per step (timed with block_until_ready), and the allocator's own
statistics (jax Device.memory_stats) at the end of each phase.

Usage: python3 train_jax.py [WIDTH] [STEPS_PER_PHASE] [BATCHES...]
"""
import sys, time

width = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 8
batches = [int(b) for b in sys.argv[3:]] or [1024, 4096, 16384, 65536]

import jax, jax.numpy as jnp

devs = jax.devices()
if devs[0].platform != "gpu":
    sys.exit(f"train_jax.py: JAX found no GPU (devices: {devs})")
d = devs[0]
print("context_ready", d, flush=True)
time.sleep(0.5)

def init(key, sizes):
    ps = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        ps.append((jax.random.normal(k, (a, b), jnp.float32) / jnp.sqrt(a), jnp.zeros((b,), jnp.float32)))
    return ps

def loss(ps, x, y):
    for w, b in ps[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = ps[-1]
    logits = x @ w + b
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

@jax.jit
def step(ps, x, y):
    l, g = jax.value_and_grad(loss)(ps, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(ps, g)], l

classes = 1000
ps = init(jax.random.PRNGKey(0), [width] * 4 + [classes])
for batch in batches:
    print(f"phase batch={batch}", flush=True)
    kx, ky = jax.random.split(jax.random.PRNGKey(batch))
    x = jax.random.normal(kx, (batch, width), jnp.float32)
    y = jax.nn.one_hot(jax.random.randint(ky, (batch,), 0, classes), classes)
    for i in range(steps):
        t0 = time.perf_counter()
        ps, l = step(ps, x, y)
        l.block_until_ready()
        print(f"batch={batch} step={i} step_time={time.perf_counter() - t0:.6f} loss={float(l):.4f}", flush=True)
    s = d.memory_stats() or {}
    print("memory_stats " + " ".join(f"{k}={s.get(k)}" for k in ("bytes_in_use", "peak_bytes_in_use", "pool_bytes", "peak_pool_bytes", "bytes_limit")), flush=True)
    time.sleep(0.3)
