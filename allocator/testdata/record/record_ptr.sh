#!/bin/bash
# Re-records the growth traces with buffer addresses (record_bfc_trace.py with RECORD_PTR=1). From the repo root on the
# GPU machine: bash allocator/testdata/record/record_ptr.sh   (writes $OUT/*.csv)
set -u
R=allocator/testdata/record
export PYTHONUNBUFFERED=1 RECORD_PTR=1
env XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_CLIENT_MEM_FRACTION=0.005 python3 $R/record_bfc_trace.py growth-small-b 3000 25 0.9 2 &
env XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_CLIENT_MEM_FRACTION=0.01 python3 $R/record_bfc_trace.py growth-ties-a 3000 0 0.85 &
env XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_CLIENT_MEM_FRACTION=0.005 python3 $R/record_bfc_trace.py growth-tiny-ptr 60 30 &
env XLA_PYTHON_CLIENT_PREALLOCATE=false python3 $R/record_bfc_trace.py growth-a 4000 28 &
wait
ls -la $OUT
