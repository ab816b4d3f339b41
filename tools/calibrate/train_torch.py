"""A small, real training job for `gpusim calibrate record`: a torchvision CNN on synthetic data.

Prints one `step_time=SECONDS` line per training step (the step is timed between two
torch.cuda.synchronize() calls, so it is the GPU's time, not the launch queue's), after a
`context_ready` line printed once the CUDA context exists (followed by a short pause so that an
NVML sampler sees the context alone).

Usage: python3 train_torch.py MODEL BATCH STEPS [sgd|adam]
  MODEL: a torchvision.models name (resnet50, mobilenet_v2, ...)
The numerics mirror TensorFlow's defaults: float32 variables and compute with TF32 allowed in
matrix multiplies and convolutions (TF enables TF32 by default since 2.4), NHWC activations
(Keras' channels_last), 224x224x3 inputs, 1000 classes.
"""
import sys, time

if len(sys.argv) < 4:
    sys.exit(__doc__)
model_name, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opt_name = sys.argv[4] if len(sys.argv) > 4 else "sgd"

import torch, torchvision

if not torch.cuda.is_available():
    sys.exit("train_torch.py: no CUDA device visible to PyTorch")
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda:0")
torch.cuda.init()
torch.zeros(1, device=dev)
torch.cuda.synchronize()
print("context_ready", flush=True)
time.sleep(0.5)

model = getattr(torchvision.models, model_name)(num_classes=1000).to(dev).to(memory_format=torch.channels_last)
model.train()
if opt_name == "adam":
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
else:
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
y = torch.randint(0, 1000, (batch,), device=dev)
params = sum(p.numel() for p in model.parameters())
print(f"model={model_name} params={params} batch={batch} steps={steps} optimizer={opt_name}", flush=True)
for step in range(steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"step={step} step_time={dt:.6f} loss={loss.item():.4f}", flush=True)
print(f"max_memory_allocated={torch.cuda.max_memory_allocated()} max_memory_reserved={torch.cuda.max_memory_reserved()}", flush=True)
time.sleep(0.5)  # let the sampler see the plateau once more before the process exits
