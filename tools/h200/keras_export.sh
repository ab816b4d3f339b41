#!/bin/bash
# Keras 3 exports (keras_export.py, on the CPU, niced) beside real fits of held-out models
# (keras_fit.py on the GPU), in one device call. Run on the device machine from a checkout where
# KERAS_SRC holds the keras package (`git archive HEAD keras` of keras-team/keras), OPTREE_SRC
# the optree sources (metaopt/optree) and PYBIND11_SRC the pybind11 sources, used only when
# optree does not build against the machine's own pybind11. JOBS, FIT_BUDGET, EXPORT_BUDGET and
# PHASES choose what runs.
set -u
T0=$(date +%s)
SITE=/tmp/optree-site
cp -r "$OPTREE_SRC" /tmp/optree-src
if ! python3 -m pip install --no-build-isolation --no-deps --target $SITE /tmp/optree-src > $OUT/pip.log 2>&1; then
  cmake -S "$PYBIND11_SRC" -B /tmp/pb11-build -DPYBIND11_TEST=OFF -DCMAKE_INSTALL_PREFIX=/tmp/pb11 >> $OUT/pip.log 2>&1
  cmake --install /tmp/pb11-build >> $OUT/pip.log 2>&1
  pybind11_DIR=/tmp/pb11/share/cmake/pybind11 python3 -m pip install --no-build-isolation --no-deps --target $SITE /tmp/optree-src >> $OUT/pip.log 2>&1
fi
echo "optree built $(( $(date +%s) - T0 ))s" > $OUT/times.txt
export KERAS_BACKEND=jax PYTHONPATH=$SITE:$KERAS_SRC PYTHONUNBUFFERED=1
python3 -c "import keras, optree, jax, jaxlib; print(keras.__version__, optree.__version__, jax.__version__, jaxlib.__version__)" >> $OUT/times.txt 2>&1 || exit 3
( JAX_PLATFORMS=cpu nice -n 19 python3 tools/h200/keras_export.py --budget ${EXPORT_BUDGET:-200} --out $OUT > $OUT/export.log 2>&1
  echo "export done $(( $(date +%s) - T0 ))s" >> $OUT/times.txt ) &
EXP=$!
python3 tools/h200/keras_fit.py plan --jobs ${JOBS:-convnexttiny:float32:128,mobilenetv3large:float32:128,efficientnetv2b0:float32:128,resnet50v2:float32:128} \
  --phases ${PHASES:-A} --budget ${FIT_BUDGET:-360} --out $OUT/fit > $OUT/fit.log 2>&1
echo "fits done $(( $(date +%s) - T0 ))s" >> $OUT/times.txt
wait $EXP
