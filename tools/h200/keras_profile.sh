#!/bin/bash
# keras_profile.py's recordings in one device call (testdata/h200/profiles/README.md): builds
# optree, then runs `keras_profile.py plan` with this script's arguments and, where DW7_BUDGET
# is set, memkinds.py's 7x7 depthwise micro-benchmarks after it. Run on the device machine with
# KERAS_SRC holding the keras package (`git archive HEAD keras` of keras-team/keras) and
# OPTREE_SRC the optree sources (metaopt/optree); optree builds against the machine's pybind11
# (its pip package's CMake files where the build does not find them by itself).
set -u
T0=$(date +%s)
HERE=$(cd "$(dirname "$0")" && pwd)
SITE=/tmp/optree-site
rm -rf /tmp/optree-src && cp -r "$OPTREE_SRC" /tmp/optree-src
if ! python3 -m pip install -q --no-build-isolation --no-deps --target $SITE /tmp/optree-src > /tmp/pip.log 2>&1; then
  pybind11_DIR=$(python3 -m pybind11 --cmakedir) python3 -m pip install -q --no-build-isolation \
    --no-deps --target $SITE /tmp/optree-src >> /tmp/pip.log 2>&1 || { tail -40 /tmp/pip.log; exit 3; }
fi
echo "optree built in $(( $(date +%s) - T0 )) s"
export KERAS_BACKEND=jax PYTHONPATH=$SITE:$KERAS_SRC PYTHONUNBUFFERED=1
python3 "$HERE/keras_profile.py" plan "$@"
if [ -n "${DW7_BUDGET:-}" ]; then
  python3 "$HERE/memkinds.py" --child dw7 --budget "$DW7_BUDGET" --out "$OUT"
fi
echo "all done in $(( $(date +%s) - T0 )) s"
