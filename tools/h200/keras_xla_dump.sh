#!/bin/bash
# XLA's own dumps of the Keras 3 (JAX backend) train step, for testdata/h200/keras/xla: one
# process per config, all at once, each under its own XLA_PYTHON_CLIENT_MEM_FRACTION (its own
# BFC pool, far above its need, so XLA does not rematerialize; resnet50 b400 under 0.15 is the
# max-batch case that does). Kept per config: the train step's scheduled HLO, its buffer
# assignment, the live ranges (the heap simulator's peak) and the memory-usage report, packed
# into $OUT/TAG.tar as each config ends. Run on the device machine from a checkout where
# KERAS_SRC holds the keras package (`git archive HEAD keras` of keras-team/keras), OPTREE_SRC
# the optree sources (metaopt/optree) and PYBIND11_DIR a pybind11 >= 2.12 CMake package
# directory (the machine's Python has none: `cmake --install` of pybind/pybind11 into a folder sent along, its
# share/cmake/pybind11). tools/h200/xla_peak.py reads a config's files.
set -u
T0=$(date +%s)
SITE=/tmp/optree-site
cp -r "$OPTREE_SRC" /tmp/optree-src
( time pybind11_DIR=$PYBIND11_DIR python3 -m pip install --no-build-isolation --no-deps --target $SITE /tmp/optree-src ) > $OUT/pip.log 2>&1
export KERAS_BACKEND=jax PYTHONPATH=$SITE:$KERAS_SRC
python3 -c "import keras, optree, jax, jaxlib; print(keras.__version__, optree.__version__, jax.__version__, jaxlib.__version__)" >> $OUT/env.txt 2>&1 || exit 3
mkdir -p /tmp/pack
PIDS=""
# CONFIGS: MODEL:PRECISION:BATCH:FRACTION words; the default is the first recording's seven.
CONFIGS=${CONFIGS:-"vgg16:float32:128:0.20 inceptionv3:float32:128:0.13 efficientnetb0:float32:128:0.08
  mobilenetv2:float32:128:0.08 resnet50:float32:128:0.11 resnet50:mixed_bfloat16:128:0.06
  resnet50:float32:400:0.15"}
for cfg in $CONFIGS; do
  IFS=: read m p b f <<< "$cfg"
  tag=${m}_${p}_b${b}
  ( XLA_PYTHON_CLIENT_MEM_FRACTION=$f \
    XLA_FLAGS="--xla_dump_to=/tmp/xd/$tag --xla_dump_hlo_as_text" \
    timeout 400 python3 tools/h200/keras_fit.py one $m $p $b M /tmp/pack/$tag.json > /tmp/pack/$tag.log 2>&1
    echo "rc=$? $(( $(date +%s) - T0 ))s fraction=$f" >> /tmp/pack/$tag.log
    ba=$(ls -S /tmp/xd/$tag/*buffer-assignment.txt | head -1); pre=${ba%-buffer-assignment.txt}
    mkdir -p /tmp/pack/$tag
    for s in .txt -buffer-assignment.txt -buffer-assignment-values.txt -live-range.txt -memory-usage-report.txt; do
      [ -f "$pre$s" ] && gzip -c "$pre$s" > /tmp/pack/$tag/after_optimizations$s.gz
    done
    tar -C /tmp/pack -cf $OUT/$tag.tar $tag.json $tag.log $tag ) &
  PIDS="$PIDS $!"
done
wait $PIDS
echo "all done $(( $(date +%s) - T0 ))s" >> $OUT/env.txt
