#!/bin/sh
# npu_models.sh - the exported models (make models) compiled to INT8 and run
# on the NPU: for each case folder, `loom compile` calibrates on its calib/
# folder (other inputs than the test data sets; test_data_set_0 for models
# without one), then `loom run --check` runs every test_data_set_N through
# libloom and the firmware on BACKEND and requires cosine similarity >= MIN
# with PyTorch's output. One line per data set, then "N passed, M failed".
#   [HW=CONFIG] sh tests/models/npu_models.sh LOOM MODELS_DIR BACKEND MIN [CASE...]
LOOM=$1
DIR=$2
BACKEND=$3
MIN=$4
shift 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
cases=$*
[ -z "$cases" ] && cases=$(ls "$DIR")
for c in $cases; do
	m="$DIR/$c"
	[ -f "$m/model.onnx" ] || continue
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	if ! "$LOOM" compile "$m/model.onnx" -o "$out/$c.loom" --hw "${HW:-default}" --calib "$calib" --no-cache -q >"$out/log" 2>&1; then
		echo "FAIL $c: compile: $(tail -n 3 "$out/log")"
		fail=$((fail + 1))
		continue
	fi
	for d in "$m"/test_data_set_*; do
		if "$LOOM" run "$out/$c.loom" --backend "$BACKEND" --data "$d" --check --min-cos "$MIN" >"$out/log" 2>&1; then
			echo "ok   $c $(basename "$d"): $(grep -E '^ok' "$out/log" | sed 's/^ok *//')"
			pass=$((pass + 1))
		else
			echo "FAIL $c $(basename "$d"): $(tail -n 3 "$out/log")"
			fail=$((fail + 1))
		fi
	done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
