#!/bin/bash
# Times the 1,000-configuration sweep of docs/compare.md with the build of OLD (a commit) and
# with the working tree's build, alternately, REPEATS times (default 3), on this machine, and
# prints each run's wall and CPU (user+sys) seconds, then the medians and their ratios. Both
# outputs must be the same kind of table (compared by line count; figures may differ).
#
#   tools/sweep_speed.sh 6116e10 3
set -euo pipefail
old=${1:?usage: tools/sweep_speed.sh OLD_COMMIT [REPEATS]}
reps=${2:-3}
export CGO_CFLAGS=-Wno-deprecated-declarations
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/old" "$old" >/dev/null 2>&1
(cd "$tmp/old" && go build -o "$tmp/gpusim-old" ./cmd/gpusim)
go build -o "$tmp/gpusim-new" ./cmd/gpusim
batches=$(seq -s, 8 8 200)
sweep=(compare --vary "batch=$batches" --vary precision=float32,mixed_float16 --vary xla=true,false
  --vary optimizer=sgd,adam,momentum,rmsprop,adagrad --vary memory.mode=preallocate,growth -o csv)
for i in $(seq "$reps"); do
  for b in old new; do
    /usr/bin/time -f "$b %e %U %S" -o "$tmp/t" "$tmp/gpusim-$b" "${sweep[@]}" > "$tmp/$b.csv"
    read -r name wall user sys < "$tmp/t"
    printf '%s run %d: wall %6.2f s  cpu %6.2f s  (%d lines)\n' "$b" "$i" "$wall" "$(echo "$user + $sys" | bc)" "$(wc -l < "$tmp/$b.csv")"
    echo "$b $wall $(echo "$user + $sys" | bc)" >> "$tmp/all"
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for b in old new; do
  w=$(awk -v b=$b '$1==b {print $2}' "$tmp/all" | median)
  c=$(awk -v b=$b '$1==b {print $3}' "$tmp/all" | median)
  echo "$b median: wall $w s, cpu $c s"
  eval "w_$b=$w c_$b=$c"
done
echo "speedup (old/new medians): wall $(echo "scale=2; $w_old / $w_new" | bc)x, cpu $(echo "scale=2; $c_old / $c_new" | bc)x"
