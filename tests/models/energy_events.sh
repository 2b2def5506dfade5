#!/bin/sh
# energy_events.sh - the energy event counters (docs/ISA.md "Energy event
# counters") of whole models: each model compiled with its calibration
# folder, run once with --profile on the C model and on the RTL; the
# counters the NPU jobs' completion records carry (the "energy events"
# line) must be the same numbers on both backends, and non-zero for every
# event these CNNs cause (scratchpad and accumulator lines read and written,
# vector lane folds, requantized values); the energy line that follows
# must be there with a positive total. "N passed, M failed".
#   sh tests/models/energy_events.sh LOOM MODELS_DIR MODEL...
LOOM=$1
DIR=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
export LOOM_CACHE_DIR="$out/cache"
for name in "$@"; do
	m="$DIR/$name"
	if ! "$LOOM" compile "$m/model.onnx" -o "$out/$name.loom" --calib "$m/calib" -q >"$out/log" 2>&1; then
		bad "$name: compile: $(tail -n 2 "$out/log")"
		continue
	fi
	for b in cmodel rtl; do
		if "$LOOM" run "$out/$name.loom" --backend $b --data "$m/test_data_set_0" --profile >"$out/$b.txt" 2>&1; then
			ok "$name: runs on the $b"
		else
			bad "$name: $b: $(tail -n 2 "$out/$b.txt")"
		fi
	done
	c=$(grep '^energy events' "$out/cmodel.txt")
	r=$(grep '^energy events' "$out/rtl.txt")
	[ -n "$c" ] && [ "$c" = "$r" ] && ok "$name: the same event counters on both backends: ${c#energy events of the }" ||
		bad "$name: event counters differ: cmodel '$c', rtl '$r'"
	zero=
	for k in SP_RD SP_WR ACC_RD ACC_WR VEC_LINES RQ_VALUES; do
		v=$(echo "$r" | sed -n "s/.* $k \([0-9]*\).*/\1/p")
		[ -n "$v" ] && [ "$v" -gt 0 ] || zero="$zero $k"
	done
	[ -z "$zero" ] && ok "$name: every event counter is non-zero" || bad "$name: zero or missing:$zero"
	e=$(grep '^energy per run' "$out/rtl.txt")
	echo "$e" | grep -Eq ': [0-9.]*[1-9][0-9.]* uJ = MAC' && ok "$name: ${e#energy per run }" || bad "$name: energy line '$e'"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
