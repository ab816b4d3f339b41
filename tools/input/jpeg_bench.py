# Per-image CPU cost of a ResNet-50 training map function (JPEG decode, random resized crop,
# resize to 224x224, random flip), single core and with P processes at once, on the device's
# host CPU. Synthetic JPEGs of ImageNet's typical size and quality (no ImageNet here).
import io, json, os, sys, time, random, platform, multiprocessing as mp
import numpy as np
from PIL import Image
OUT = os.environ.get("OUT", "/tmp")
def log(o):
    print(json.dumps(o), flush=True)
    with open(os.path.join(OUT, "jpeg_bench.jsonl"), "a") as f: f.write(json.dumps(o) + "\n")

def cpuinfo():
    d = {"platform": platform.platform(), "nproc": os.cpu_count(), "affinity": len(os.sched_getaffinity(0))}
    try:
        txt = open("/proc/cpuinfo").read()
        first = txt.split("\n\n")[0]
        for line in first.splitlines():
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("model name", "siblings", "cpu cores", "cpu MHz", "flags"):
                d[k] = v.strip() if k != "flags" else ("ht" in v.split())
        d["physical ids"] = sorted(set(l.split(":")[1].strip() for l in txt.splitlines() if l.startswith("physical id")))
        d["core ids"] = len(set(l.split(":")[1].strip() for l in txt.splitlines() if l.startswith("core id")))
    except Exception as e: d["err"] = str(e)
    for p in ["/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "/sys/devices/system/cpu/smt/active"]:
        try: d[p] = open(p).read().strip()
        except Exception as e: d[p] = "n/a"
    return d

def make_images(n, seed=0):
    rng = np.random.default_rng(seed)
    imgs = []
    for i in range(n):
        w, h = [(500, 375), (375, 500), (500, 333), (500, 400)][i % 4]
        # natural-ish content: low-frequency colour fields plus mid/high-frequency texture
        lo = rng.normal(128, 50, (h // 25 + 1, w // 25 + 1, 3))
        lo = np.array(Image.fromarray(np.clip(lo, 0, 255).astype(np.uint8)).resize((w, h), Image.BICUBIC), dtype=np.float32)
        mid = rng.normal(0, 1, (h // 4 + 1, w // 4 + 1, 3)).astype(np.float32)
        mid = np.array(Image.fromarray(np.clip(mid * 40 + 128, 0, 255).astype(np.uint8)).resize((w, h), Image.BILINEAR), dtype=np.float32) - 128
        hi = rng.normal(0, 6, (h, w, 3)).astype(np.float32)
        a = np.clip(lo + mid + hi, 0, 255).astype(np.uint8)
        b = io.BytesIO(); Image.fromarray(a).save(b, format="JPEG", quality=90); imgs.append(b.getvalue())
    return imgs

def pipeline(data, rng):
    im = Image.open(io.BytesIO(data)); im = im.convert("RGB")  # full decode (libjpeg-turbo)
    w, h = im.size; area = w * h
    for _ in range(10):
        s = rng.uniform(0.08, 1.0) * area; r = np.exp(rng.uniform(np.log(3/4), np.log(4/3)))
        cw, ch = int(round(np.sqrt(s * r))), int(round(np.sqrt(s / r)))
        if 0 < cw <= w and 0 < ch <= h: break
    else: cw, ch = min(w, h), min(w, h)
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    im = im.resize((224, 224), Image.BILINEAR, box=(x, y, x + cw, y + ch))
    if rng.random() < 0.5: im = im.transpose(Image.FLIP_LEFT_RIGHT)
    return np.asarray(im)

def decode_only(data, rng):
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

FUNCS = {"decode_crop_resize_flip": pipeline, "decode_only": decode_only}

IMGS = []

def worker(args):
    fname, secs, seed = args
    imgs = IMGS
    f = FUNCS[fname]; rng = random.Random(seed); n = 0; i = seed
    t0 = time.perf_counter(); end = t0 + secs
    while time.perf_counter() < end:
        f(imgs[i % len(imgs)], rng); n += 1; i += 7
    return n, time.perf_counter() - t0

if __name__ == "__main__":
    os.environ["OMP_NUM_THREADS"] = "1"
    log({"cpu": cpuinfo(), "pillow": Image.__version__, "libjpeg_turbo": getattr(__import__("PIL.features", fromlist=["x"]), "check_feature")("libjpeg_turbo")})
    t = time.perf_counter(); imgs = make_images(256); IMGS.extend(imgs)
    sz = [len(b) for b in imgs]
    log({"images": len(imgs), "mean_bytes": float(np.mean(sz)), "min_bytes": min(sz), "max_bytes": max(sz), "gen_s": time.perf_counter() - t})
    rng = random.Random(1)
    for fname, f in FUNCS.items():
        for b in imgs[:16]: f(b, rng)
        ts = []
        for rep in range(2):
            for b in imgs:
                t = time.perf_counter(); f(b, rng); ts.append(time.perf_counter() - t)
        ts = np.array(ts)
        log({"single_core": fname, "n": len(ts), "mean_ms": 1e3 * ts.mean(), "std_ms": 1e3 * ts.std(), "p50_ms": 1e3 * np.median(ts), "p95_ms": 1e3 * np.percentile(ts, 95)})
    ctx = mp.get_context("fork")
    ncpu = len(os.sched_getaffinity(0))
    for fname in ["decode_crop_resize_flip"]:
        for P in sorted(set([1, 2, 4, ncpu // 4, ncpu // 2, 3 * ncpu // 4, ncpu, ncpu + ncpu // 2])):
            if P < 1: continue
            with ctx.Pool(P) as pool:
                res = pool.map(worker, [(fname, 6.0, s) for s in range(P)])
            n = sum(r[0] for r in res); el = max(r[1] for r in res)
            log({"scaling": fname, "processes": P, "images": n, "seconds": el, "img_per_s": n / el, "per_process_ms": 1e3 * el * P / n})
