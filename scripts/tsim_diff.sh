#!/bin/sh
# tsim_diff.sh - the cycles of the timing model (common/tsim.c) on real
# models, for checking that a change to it (speed work) changes no result:
# every model of build/models (and ResNet-50 of build/models-bench when
# there) compiled on small, default, large, odd and a DRAM-bound default
# (dram_bw=4, dram_latency=200): the report's per-layer est_cycles (the
# planner's tsim timings) and the C model's device cycles of one inference
# (cmodel/cm_timing.c), then random cosim programs' C-model cycles (cmodel
# against cmodel-nomemo). Writes one line per number to OUT; run it before
# and after a change and diff the two files:
#   sh scripts/tsim_diff.sh /tmp/before.txt; ...; sh scripts/tsim_diff.sh /tmp/after.txt
#   diff /tmp/before.txt /tmp/after.txt && echo same
set -u
OUT=${1:?usage: tsim_diff.sh OUT}
B=${BUILD:-build}
LOOM="$B/bin/loom"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$OUT"
models=$(ls -d "$B"/models/*/ 2>/dev/null)
[ -d "$B/models-bench/resnet50_opset13" ] && models="$models $B/models-bench/resnet50_opset13/"
for hw in small default large odd default:dram_bw=4,dram_latency=200; do
	for m in $models; do
		m=${m%/}
		n=$(basename "$m")
		cal=""
		[ -d "$m/calib" ] && cal="--calib $m/calib"
		# shellcheck disable=SC2086
		if ! "$LOOM" compile "$m/model.onnx" -o "$tmp/m.loom" --hw "$hw" $cal --no-cache -q \
			--report "$tmp/r.json" >"$tmp/log" 2>&1; then
			echo "$hw $n compile failed: $(tail -n 1 "$tmp/log")" >>"$OUT"
			continue
		fi
		echo "$hw $n est $(grep -o '"est_cycles": *[0-9]*' "$tmp/r.json" | tr -dc '0-9\n' | tr '\n' ' ')" >>"$OUT"
		data=""
		[ -d "$m/test_data_set_0" ] && data="--data $m/test_data_set_0"
		# shellcheck disable=SC2086
		"$LOOM" run "$tmp/m.loom" --backend cmodel --hw "$hw" $data >"$tmp/run" 2>&1
		echo "$hw $n run $(grep -o '[0-9]* device cycles per run (engine [0-9]*)' "$tmp/run")" >>"$OUT"
	done
	"$LOOM" cosim --hw "$hw" --count 60 --seed 7 --a cmodel --b cmodel-nomemo --verbose 2>&1 |
		grep -E '^  seed' | sed "s/^/$hw cosim/" >>"$OUT"
done
wc -l <"$OUT"
