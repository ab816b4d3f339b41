"""The SM clock, board power, temperature and NVML's clock-limit reasons of the GPU while it
trains, for hw's sustained-clock rule (testdata/h200/clock/README.md).

Each load is a PyTorch training loop on synthetic data, run for --seconds after a warm-up while
NVML is sampled every 20 ms: ResNet-50 in FP32 (TF32 off), TF32 and bf16 autocast (NHWC), and
BERT-Large-shaped GEMMs in bf16 (the heaviest dense Tensor Core load). Before the loads the
script writes the board's power limits and maximum clocks (device.json), and it samples the
idle GPU for a few seconds.

Run on the device machine: `python3 tools/h200/train_clock.py --budget 240 --out $OUT`;
`--quick` runs each load for 3 s.

Outputs: device.json; samples.csv (load, t_s, sm_mhz, mem_mhz, power_w, temp_c, reasons: the
clocks-event reasons bitmask of nvmlDeviceGetCurrentClocksEventReasons); loads.csv (per load:
steps, step_ms, and the medians and means of the samples after the first 5 s).
"""
import argparse
import csv
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h200lib import RunLog, smi  # noqa: E402


def nv_call(fn, *a):
    try:
        return fn(*a)
    except Exception as e:  # noqa: BLE001
        return "error: %r" % e


def device_info(pynvml, h):
    """The board's limits as NVML reports them (W, MHz)."""
    mw = lambda v: v / 1e3 if isinstance(v, (int, float)) else v  # noqa: E731
    cons = nv_call(pynvml.nvmlDeviceGetPowerManagementLimitConstraints, h)
    return {
        "name": nv_call(pynvml.nvmlDeviceGetName, h),
        "power_limit_w": mw(nv_call(pynvml.nvmlDeviceGetPowerManagementLimit, h)),
        "enforced_power_limit_w": mw(nv_call(pynvml.nvmlDeviceGetEnforcedPowerLimit, h)),
        "default_power_limit_w": mw(nv_call(pynvml.nvmlDeviceGetPowerManagementDefaultLimit, h)),
        "power_limit_constraints_w": [mw(x) for x in cons] if isinstance(cons, (list, tuple)) else cons,
        "max_sm_mhz": nv_call(pynvml.nvmlDeviceGetMaxClockInfo, h, pynvml.NVML_CLOCK_SM),
        "max_mem_mhz": nv_call(pynvml.nvmlDeviceGetMaxClockInfo, h, pynvml.NVML_CLOCK_MEM),
        "max_customer_boost_sm_mhz": nv_call(pynvml.nvmlDeviceGetMaxCustomerBoostClock, h, pynvml.NVML_CLOCK_SM),
        "applications_sm_mhz": nv_call(pynvml.nvmlDeviceGetApplicationsClock, h, pynvml.NVML_CLOCK_SM),
        "default_applications_sm_mhz": nv_call(pynvml.nvmlDeviceGetDefaultApplicationsClock, h, pynvml.NVML_CLOCK_SM),
        "slowdown_temp_c": nv_call(pynvml.nvmlDeviceGetTemperatureThreshold, h, pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
        "smi": smi(),
    }


def reasons(pynvml, h):
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        fn = getattr(pynvml, name, None)
        if fn is not None:
            try:
                return fn(h)
            except Exception:  # noqa: BLE001
                pass
    return -1


class Sampler:
    """NVML every 20 ms into rows, tagged with the current load."""

    def __init__(self, pynvml, h):
        self.p, self.h, self.rows, self.load, self.on, self.t0 = pynvml, h, [], "idle", True, time.time()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        p, h = self.p, self.h
        while self.on:
            try:
                self.rows.append([self.load, round(time.time() - self.t0, 3),
                                  p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_SM),
                                  p.nvmlDeviceGetClockInfo(h, p.NVML_CLOCK_MEM),
                                  p.nvmlDeviceGetPowerUsage(h) / 1e3,
                                  p.nvmlDeviceGetTemperature(h, p.NVML_TEMPERATURE_GPU),
                                  reasons(p, h)])
            except Exception:  # noqa: BLE001
                pass
            time.sleep(0.02)

    def stop(self):
        self.on = False
        self.t.join()


def resnet_step(torch, tv, prec, batch):
    model = tv.models.resnet50().cuda()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    if prec == "bf16":
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=prec == "bf16"):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def gemm_step(torch):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def step():
        for _ in range(8):
            torch.mm(a, b)
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    rl = RunLog(args.out, args.budget, t0)
    import pynvml
    import torch
    import torchvision as tv
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    info = device_info(pynvml, h)
    info.update({"torch": torch.__version__, "cuda": torch.version.cuda, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    with open(os.path.join(args.out, "device.json"), "w") as f:
        json.dump(info, f, indent=1, default=str)
    rl.log("device", info)
    secs = 3 if args.quick else args.seconds
    s = Sampler(pynvml, h)
    time.sleep(3)
    loads = [("resnet50-fp32", "fp32", 128), ("resnet50-tf32", "tf32", 128), ("resnet50-bf16", "bf16", 256), ("gemm-bf16", "gemm", 0)]
    summary = []
    for name, prec, batch in loads:
        if rl.left() < secs + 15:
            rl.log("budget: skipping", name)
            break
        torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
        torch.backends.cudnn.allow_tf32 = prec == "tf32"
        torch.backends.cudnn.benchmark = True
        step = gemm_step(torch) if prec == "gemm" else resnet_step(torch, tv, prec, batch)
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        s.load = name
        start, n = time.time(), 0
        while time.time() - start < secs:
            step()
            n += 1
            if n % 10 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        el = time.time() - start
        s.load = "cooldown"
        rows = [r for r in s.rows if r[0] == name]
        steady = [r for r in rows if r[1] - rows[0][1] >= min(5, secs / 2)] if rows else []
        st = {"load": name, "steps": n, "step_ms": 1e3 * el / max(n, 1), "samples": len(steady)}
        for i, col in ((2, "sm_mhz"), (3, "mem_mhz"), (4, "power_w"), (5, "temp_c")):
            v = [r[i] for r in steady]
            if v:
                st[col + "_median"] = statistics.median(v)
                st[col + "_mean"] = sum(v) / len(v)
                st[col + "_min"] = min(v)
        st["reasons_seen"] = sorted({r[6] for r in steady})
        summary.append(st)
        rl.log(st)
        del step
        torch.cuda.empty_cache()
        time.sleep(2)
    s.stop()
    with open(os.path.join(args.out, "samples.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["load", "t_s", "sm_mhz", "mem_mhz", "power_w", "temp_c", "reasons"])
        w.writerows(s.rows)
    with open(os.path.join(args.out, "loads.csv"), "w", newline="") as f:
        keys = sorted({k for st in summary for k in st}, key=lambda k: (k != "load", k))
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for st in summary:
            w.writerow({k: (";".join(map(str, v)) if isinstance(v, list) else v) for k, v in st.items()})
    rl.log("done", smi())


if __name__ == "__main__":
    main()
