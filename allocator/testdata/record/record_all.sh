#!/bin/bash
# Records every trace in ../traces (see ../traces/README.md). Run on the GPU machine from the
# repository root: bash allocator/testdata/record/record_all.sh  (writes $OUT/traces.tar.gz)
set -u
R=allocator/testdata/record
OUT_FINAL=${OUT:?}; T=$(mktemp -d); export OUT=$T
export PYTHONUNBUFFERED=1
date -u; nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv
python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__)'
# Small pools, near capacity, with a few deliberate OOMs (10 s each): in parallel.
env XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_CLIENT_MEM_FRACTION=0.005 python3 $R/record_bfc_trace.py growth-small-b 3000 25 0.9 2 &
env XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_CLIENT_MEM_FRACTION=0.01 python3 $R/record_bfc_trace.py growth-ties-a 3000 0 0.85 &
env XLA_CLIENT_MEM_FRACTION=0.005 python3 $R/record_bfc_trace.py prealloc-small-a 3000 24 0.95 2 &
env XLA_CLIENT_MEM_FRACTION=0.002 python3 $R/record_bfc_trace.py prealloc-small-b 3000 22 0.98 1 &
env XLA_CLIENT_MEM_FRACTION=0.003 python3 $R/record_bfc_trace.py prealloc-ties-a 3000 0 0.95 &
wait
tar -C $T -czf $OUT_FINAL/traces.tar.gz .
# Large pools, one at a time (the default preallocation takes 75% of the card).
env XLA_PYTHON_CLIENT_PREALLOCATE=false python3 $R/record_bfc_trace.py growth-a 4000 28
python3 $R/record_bfc_trace.py prealloc-a 3000 30
tar -C $T -czf $OUT_FINAL/traces.tar.gz .
# Two processes: A preallocates and holds its pool, B starts beside it.
python3 $R/two_process.py A $T/two-process-A.json 40 $T/two-process-B.json &
for i in $(seq 1 60); do [ -e $T/two-process-A.json.ready ] && break; sleep 0.5; done
python3 $R/two_process.py B $T/two-process-B.json
wait
rm -f $T/*.ready
tar -C $T -czf $OUT_FINAL/traces.tar.gz .
ls -la $T
date -u
