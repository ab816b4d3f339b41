# Run on the H200 (PyTorch 2.11.0+cu130), 2026-11-29, from the repo root:
#   python3 models/testdata/measure/resnet50_torch.py
# Output:
#   params 25583592
#   batch 32: saved 86.53 MB/sample (input excluded, 0.60 MB input)
#   batch 64: saved 85.36 MB/sample (input excluded, 0.60 MB input)
# models.Get("resnet50").ActivationBytesPerSample = 83.45e6 (input included: 82.85e6 without);
# PyTorch keeps max-pool argmax indices as int64 (+3.2 MB/sample) where TF keeps the pool output.
# Keras-style ResNet50 v1 (stride on the first 1x1, conv biases) in PyTorch: memory the
# forward pass leaves alive for backward, per sample, float32.
import torch, torch.nn as nn, sys
class Block(nn.Module):
    def __init__(s, cin, f, stride, short):
        super().__init__()
        s.short = nn.Sequential(nn.Conv2d(cin, 4*f, 1, stride), nn.BatchNorm2d(4*f)) if short else None
        s.c1 = nn.Conv2d(cin, f, 1, stride); s.b1 = nn.BatchNorm2d(f)
        s.c2 = nn.Conv2d(f, f, 3, 1, 1); s.b2 = nn.BatchNorm2d(f)
        s.c3 = nn.Conv2d(f, 4*f, 1); s.b3 = nn.BatchNorm2d(4*f)
    def forward(s, x):
        sc = s.short(x) if s.short is not None else x
        y = torch.relu(s.b1(s.c1(x))); y = torch.relu(s.b2(s.c2(y))); y = s.b3(s.c3(y))
        return torch.relu(sc + y)
def stack(cin, f, n, stride):
    L = [Block(cin, f, stride, True)] + [Block(4*f, f, 1, False) for _ in range(n-1)]
    return nn.Sequential(*L)
class R50(nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = nn.Conv2d(3, 64, 7, 2); s.b1 = nn.BatchNorm2d(64)
        s.l = nn.Sequential(stack(64, 64, 3, 1), stack(256, 128, 4, 2), stack(512, 256, 6, 2), stack(1024, 512, 3, 2))
        s.fc = nn.Linear(2048, 1000)
    def forward(s, x):
        x = nn.functional.pad(x, (3, 3, 3, 3)); x = torch.relu(s.b1(s.c1(x)))
        x = nn.functional.pad(x, (1, 1, 1, 1)); x = nn.functional.max_pool2d(x, 3, 2)
        x = s.l(x); x = x.mean((2, 3)); return torch.softmax(s.fc(x), -1)
m = R50().cuda()
print("params", sum(p.numel() for p in m.parameters()))
for B in (32, 64):
    x = torch.randn(B, 3, 224, 224, device="cuda"); torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    y = m(x); loss = -(y[:, 0].clamp_min(1e-7).log()).mean()
    torch.cuda.synchronize(); after = torch.cuda.memory_allocated()
    print(f"batch {B}: saved {(after-base)/B/1e6:.2f} MB/sample (input excluded, {x.numel()*4/B/1e6:.2f} MB input)")
    del y, loss; torch.cuda.empty_cache()
