#!/bin/sh
# sweep_slurm.sh - `loom sweep --slurm` against a real Slurm cluster: a
# single-node one on this machine (scripts/slurm_local.sh: munged,
# slurmctld and slurmd of Debian's slurm-wlm with a generated slurm.conf and
# munge key in a temporary directory), started here and stopped at the end
# whatever happens:
#   - a 12-point analytical grid and a 2-point --rtl grid of the digits CNN
#     submitted as Slurm job arrays (sbatch --wait --array), gathered: the
#     same results.csv as local workers compute, one array task per point;
#   - the same sweep again submits nothing (every point cached);
#   - a job array whose tasks fail (they cannot write their results) is
#     reported: exit 1, the points missing.
# One line per check, then "N passed, M failed".
#   sh tests/models/sweep_slurm.sh LOOM MODELS_DIR
LOOM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
DIR=$2
out=$(mktemp -d)
cluster="$out/cluster"
trap 'sh scripts/slurm_local.sh stop "$cluster"; rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2"; fi; }

t0=$(date +%s)
if ! conf=$(sh scripts/slurm_local.sh start "$cluster" 2>"$out/start.err"); then
	bad "the local Slurm cluster did not start: $(tail -n 3 "$out/start.err")"
	echo "$pass passed, $fail failed"
	exit 1
fi
export "${conf?}"
ok "a local Slurm cluster is up ($(sinfo -h -o '%P %D node, %c CPUs, %T' | head -n 1))"
m="$DIR/digits_cnn_opset13"
grid="--array 8x8,16x16,32x32 --spad 16K,256K --dram-latency 40,200"

# shellcheck disable=SC2086
"$LOOM" sweep "$m/model.onnx" $grid --jobs 2 --no-plots -o "$out/local" >/dev/null 2>&1
# shellcheck disable=SC2086
"$LOOM" sweep "$m/model.onnx" $grid --slurm --no-plots -o "$out/slurm" >"$out/s1.txt" 2>&1
check $? "--slurm: exit 0"
grep -q "12 computed, 0 cached, 0 failed.*(Slurm)" "$out/s1.txt"
check $? "--slurm: 12 points computed by Slurm"
cmp -s "$out/local/results.csv" "$out/slurm/results.csv"
check $? "--slurm: the same results.csv as local workers"
[ "$(wc -l <"$out/slurm/slurm/tasks.txt")" = 12 ] && [ "$(ls "$out/slurm/slurm"/task-*.out | wc -l)" = 12 ]
check $? "one job array task per point (12 tasks, their output files)"
# shellcheck disable=SC2086
"$LOOM" sweep "$m/model.onnx" $grid --slurm --no-plots -o "$out/slurm" >"$out/s2.txt" 2>&1
grep -q "0 computed, 12 cached" "$out/s2.txt"
check $? "--slurm again: nothing submitted, every point cached"

"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --dram-latency 40,80 --rtl --slurm --no-plots -o "$out/rtl" \
	>"$out/r.txt" 2>&1 && grep -q "2 computed" "$out/r.txt"
check $? "--rtl --slurm: 2 points run on the RTL by Slurm tasks"
rc=$(awk -F, 'NR > 1 && $32 > 0 { n++ } END { print n + 0 }' "$out/rtl/results.csv")
[ "$rc" = 2 ]
check $? "--rtl --slurm: both rows have the RTL's cycles ($rc)"

# tasks that fail: DIR/points is a file, so no task can write its result
mkdir -p "$out/fail"
: >"$out/fail/points"
"$LOOM" sweep "$m/model.onnx" --array 8x8 --spad 16K,32K --slurm --no-plots -o "$out/fail" >"$out/f.txt" 2>&1
rcf=$?
[ $rcf = 1 ] && grep -q "0 computed, 0 cached, 2 failed" "$out/f.txt" && grep -q ",missing," "$out/fail/results.csv"
check $? "failing tasks: exit 1, the points missing (exit $rcf)"
echo "cluster and sweeps: $(( $(date +%s) - t0 )) s"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
