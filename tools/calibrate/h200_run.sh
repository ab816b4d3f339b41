#!/bin/bash
# Records the calibration fixtures of calibrate/testdata on a machine with an NVIDIA GPU,
# PyTorch, torchvision and JAX. Run from the repository root with the gpusim binary at $GPUSIM
# (default .devbin/gpusim); results go to $OUT (default /tmp/calib), packed as $OUT/calib.tgz.
# Each recording is bounded by `timeout -s INT`, which gpusim forwards to the job, so the script
# always ends with whatever was recorded.
set -u
GPUSIM=${GPUSIM:-.devbin/gpusim}
OUT=${OUT:-/tmp/calib}
D=$OUT/calib
mkdir -p "$D"
T=tools/calibrate
export PYTHONUNBUFFERED=1
rec() { # rec NAME LIMIT_S CMD...: record CMD into $D/NAME.json
  local name=$1 limit=$2; shift 2
  echo "=== record $name: $*"
  timeout -s INT "$limit" "$GPUSIM" calibrate record --interval 50ms --quiet -o "$D/$name.json" -- "$@"
  echo "=== $name: exit $?"
}
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, torchvision, jax; print("torch", torch.__version__, "torchvision", torchvision.__version__, "jax", jax.__version__)'
} >"$D/env.txt" 2>&1
cat "$D/env.txt"
"$GPUSIM" calibrate inventory -o text
"$GPUSIM" calibrate inventory -o yaml --profile-out "$D/h200-inventory-profile.yaml" >"$D/h200-inventory.yaml"
echo "=== inventory: exit $?"
rec torch-resnet50-b64 90 python3 $T/train_torch.py resnet50 64 30
rec torch-resnet50-b128 90 python3 $T/train_torch.py resnet50 128 30
rec torch-mobilenet_v2-b64 90 python3 $T/train_torch.py mobilenet_v2 64 30
rec torch-vgg16-b64 90 python3 $T/train_torch.py vgg16 64 30
rec jax-prealloc 90 python3 $T/train_jax.py
rec jax-growth 90 env XLA_PYTHON_CLIENT_PREALLOCATE=false python3 $T/train_jax.py
# Ctrl-C on a running job: timeout sends SIGINT to gpusim after 12 s; gpusim forwards it to the
# job (which would run 10,000 steps) and writes what it recorded.
rec torch-sigint 12 python3 $T/train_torch.py resnet50 64 10000
tar -C "$OUT" -czf "$OUT/calib.tgz" calib
ls -l "$D"
