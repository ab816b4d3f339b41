#!/bin/bash
# More growth traces with buffer addresses (record_bfc_trace.py, RECORD_PTR=1) for the region placement model
# (allocator/device.go, vaSpace). From the repo root on the GPU machine:
#   bash allocator/testdata/record/record_oos.sh    (writes $OUT/oos.tar.gz)
# On 2026-11-29 the three groups below ran as three device calls (15:38, 15:38, 15:41 UTC):
# growth-oos-* were used to fit the rule, growth-val-* were recorded after it was fixed and kept
# out of the fit (testdata/traces-ptr/README.md). They ran with record_ptr.py, since merged into
# record_bfc_trace.py as RECORD_PTR=1 (same output).
set -u
R=allocator/testdata/record
export PYTHONUNBUFFERED=1
O=/tmp/oos; mkdir -p $O
rec() { # NAME FRACTION ARGS...
	local n=$1 f=$2; shift 2
	env XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_CLIENT_MEM_FRACTION=$f OUT=$O RECORD_PTR=1 timeout 200 python3 $R/record_bfc_trace.py $n "$@"
}
rec growth-oos-a 0.005 1000 24 0.85 &
rec growth-oos-b 0.005 1000 25 0.85 &
rec growth-oos-c 0.01 1000 26 0.85 &
rec growth-oos-d 0.003 1000 23 0.85 &
rec growth-oos-e 0.02 1000 27 0.85 &
rec growth-oos-f 0.002 1000 22 0.9 &
rec growth-oos-ties-b 0.01 1000 0 0.85 &
rec growth-oos-ties-c 0.005 1000 0 0.9 &
wait
rec growth-oos-g 0.005 3000 25 0.9 &
rec growth-oos-h 0.01 3000 24 0.85 &
rec growth-oos-i 0.003 3000 26 0.85 &
rec growth-oos-j 0.005 3000 23 0.9 &
rec growth-oos-k 0.05 3000 28 0.85 &
rec growth-oos-l 0.002 3000 21 0.9 &
rec growth-oos-ties-m 0.003 3000 0 0.9 &
rec growth-oos-ties-n 0.02 3000 0 0.85 &
wait
rec growth-val-p 0.005 2000 24 0.9 &
rec growth-val-q 0.003 2000 23 0.85 &
rec growth-val-r 0.01 2000 25 0.85 &
rec growth-val-s 0.002 2000 22 0.9 &
rec growth-val-t 0.005 2000 24 0.85 &
rec growth-val-u 0.004 2000 23 0.9 &
rec growth-val-ties-v 0.004 2000 0 0.9 &
rec growth-val-ties-w 0.01 2000 0 0.9 &
wait
tar czf $OUT/oos.tar.gz -C $O .
ls -la $O
